"""Helpers for the workspace tests: small workspaces and previews built from real files."""

from __future__ import annotations

import os
from pathlib import Path

from redline.workspace.preview import (
    FileCreate,
    FileDelete,
    FileModify,
    FileRename,
    Preview,
    decode_text,
    sha256_bytes,
)


def write(root: Path, rel: str, data: bytes | str, mode: int | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    if mode is not None:
        os.chmod(path, mode)
    return path


def modify(root: Path, rel: str, new_text: str) -> FileModify:
    data = (root / rel).read_bytes()
    old_text, encoding = decode_text(data, rel)
    return FileModify(rel, sha256_bytes(data), old_text, new_text, encoding)


def delete(root: Path, rel: str) -> FileDelete:
    data = (root / rel).read_bytes()
    return FileDelete(rel, sha256_bytes(data), data.decode("utf-8", "replace"))


def rename(root: Path, old: str, new: str) -> FileRename:
    return FileRename(old, new, sha256_bytes((root / old).read_bytes()))


def create(rel: str, text: str) -> FileCreate:
    return FileCreate(rel, text)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file outside .redline/ with its bytes (what a person sees in the workspace)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".redline") or not path.is_file() or path.is_symlink():
            continue
        out[rel] = path.read_bytes()
    return out


def journal_is_clean(root: Path) -> bool:
    """No unfinished or half-written entry, no entry moved aside, no temp file left over."""
    journal = root / ".redline" / "journal"
    if journal.is_dir():
        for item in journal.iterdir():
            if item.name.startswith(".tmp-") or not (item / "done").exists():
                return False
    if (root / ".redline" / "journal-aside").exists():
        return False
    return not any(p.name.endswith(".redline-tmp") for p in root.rglob("*"))


def mixed_preview(root: Path) -> tuple[Preview, dict[str, bytes], dict[str, bytes]]:
    """A preview with every kind of change, plus the expected old and new workspace."""
    write(root, "src/a.py", "a = 1\r\nb = 2\r\n")
    write(root, "src/bom.txt", "\ufeffhello\n".encode())
    write(root, "old.txt", "rename me\n")
    write(root, "gone.txt", "delete me\n")
    write(root, "keep.txt", "untouched\n")
    old = snapshot(root)
    preview = Preview(
        [
            modify(root, "src/a.py", "a = 10\r\nb = 2\r\n"),
            modify(root, "src/bom.txt", "hello, world\n"),
            create("pkg/new/mod.py", "x = 1\n"),
            delete(root, "gone.txt"),
            rename(root, "old.txt", "moved/renamed.txt"),
        ]
    )
    new = dict(old)
    new["src/a.py"] = b"a = 10\r\nb = 2\r\n"
    new["src/bom.txt"] = "\ufeffhello, world\n".encode()
    new["pkg/new/mod.py"] = b"x = 1\n"
    del new["gone.txt"]
    new["moved/renamed.txt"] = new.pop("old.txt")
    return preview, old, new
