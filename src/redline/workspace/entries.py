"""Journal entries: what one apply (or undo) is about to do, stored before it does it.

Layout of ``.redline/journal/<id>/``::

    entry.json      metadata, the before/after state of every path, the steps, temp names
    blobs/<sha256>  the old bytes of every file the transaction changes (for rollback/undo)
    done            the commit marker; an entry without it is unfinished

An entry is first built in ``.tmp-<id>/`` and renamed into place, so a half-written
entry is never mistaken for one that may have touched files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from redline.workspace import fsutil, paths
from redline.workspace.preview import sha256_bytes
from redline.workspace.state import aside_dir, journal_dir

FORMAT_VERSION = 1
ENTRY_FILE = "entry.json"
BLOBS_DIR = "blobs"
DONE_FILE = "done"
TMP_PREFIX = ".tmp-"


class CorruptEntry(Exception):
    """A journal entry cannot be read; the message says why."""


@dataclass(frozen=True)
class FileState:
    """A file's content hash and permission bits (None: default for a new file)."""

    sha256: str
    mode: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "mode": self.mode}

    @classmethod
    def from_dict(cls, data: Any) -> FileState | None:
        if data is None:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("sha256"), str):
            raise CorruptEntry("a file state lacks its sha256")
        mode = data.get("mode")
        if mode is not None and not isinstance(mode, int):
            raise CorruptEntry("a file state has a non-numeric mode")
        return cls(data["sha256"], mode)


@dataclass(frozen=True)
class PathOp:
    """One path's state before and after the transaction (None: no file there)."""

    path: str
    before: FileState | None
    after: FileState | None


@dataclass(frozen=True)
class Step:
    """One move of the transaction: ``write`` (temp then replace), ``delete`` or ``rename``."""

    do: str
    path: str
    source: str = ""
    temp: str = ""


@dataclass
class Entry:
    id: str
    kind: str  # "apply" | "undo" | "external" (a write an outside agent made, see journal)
    label: str
    files: list[str]
    ops: list[PathOp]
    steps: list[Step]
    created_dirs: list[str] = field(default_factory=list)
    source_tool_name: str = ""
    action_id: str | None = None
    undoes: str | None = None
    time: str = ""
    folder: Path | None = None
    complete: bool = False

    @property
    def when(self) -> datetime:
        try:
            return datetime.fromisoformat(self.time)
        except ValueError:
            return datetime.fromtimestamp(0, UTC)

    def blob_path(self, sha256: str) -> Path:
        assert self.folder is not None
        return self.folder / BLOBS_DIR / sha256

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "files": self.files,
            "source_tool_name": self.source_tool_name,
            "action_id": self.action_id,
            "undoes": self.undoes,
            "time": self.time,
            "created_dirs": self.created_dirs,
            "ops": [
                {
                    "path": op.path,
                    "before": None if op.before is None else op.before.to_dict(),
                    "after": None if op.after is None else op.after.to_dict(),
                }
                for op in self.ops
            ],
            "steps": [
                {"do": s.do, "path": s.path, "source": s.source, "temp": s.temp} for s in self.steps
            ],
        }


def _str_list(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CorruptEntry(f"'{key}' is not a list of paths")
    return value


def entry_from_dict(data: Any, folder: Path) -> Entry:
    if not isinstance(data, dict):
        raise CorruptEntry("entry.json is not a JSON object")
    if data.get("version") != FORMAT_VERSION:
        raise CorruptEntry(f"unknown journal format version {data.get('version')!r}")
    try:
        ops = [
            PathOp(
                str(op["path"]),
                FileState.from_dict(op.get("before")),
                FileState.from_dict(op.get("after")),
            )
            for op in data["ops"]
        ]
        steps = [
            Step(str(s["do"]), str(s["path"]), str(s.get("source", "")), str(s.get("temp", "")))
            for s in data["steps"]
        ]
        kind = str(data["kind"])
        entry_id = str(data["id"])
    except (KeyError, TypeError) as exc:
        raise CorruptEntry(f"entry.json lacks a required field ({exc})") from None
    if kind not in ("apply", "undo", "external"):
        raise CorruptEntry(f"unknown entry kind {kind!r}")
    for step in steps:
        if step.do not in ("write", "delete", "rename"):
            raise CorruptEntry(f"unknown step {step.do!r}")
    action_id = data.get("action_id")
    undoes = data.get("undoes")
    return Entry(
        id=entry_id,
        kind=kind,
        label=str(data.get("label", "")),
        files=_str_list(data, "files"),
        ops=ops,
        steps=steps,
        created_dirs=_str_list(data, "created_dirs"),
        source_tool_name=str(data.get("source_tool_name", "")),
        action_id=None if action_id is None else str(action_id),
        undoes=None if undoes is None else str(undoes),
        time=str(data.get("time", "")),
        folder=folder,
        complete=(folder / DONE_FILE).exists(),
    )


def load_entry(folder: Path) -> Entry:
    """Read and check one entry folder; raise :class:`CorruptEntry` with the cause."""
    try:
        raw = (folder / ENTRY_FILE).read_bytes()
    except FileNotFoundError:
        raise CorruptEntry("entry.json is missing") from None
    except OSError as exc:
        raise CorruptEntry(f"entry.json cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptEntry(f"entry.json is not valid JSON ({exc})") from None
    entry = entry_from_dict(data, folder)
    for op in entry.ops:
        if op.before is not None and not entry.blob_path(op.before.sha256).is_file():
            raise CorruptEntry(f"the saved old contents of {op.path} are missing")
    return entry


def entry_folders(root: Path) -> list[Path]:
    """Entry folders (not temporaries), oldest first."""
    folder = journal_dir(root)
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / n for n in sorted(names) if not n.startswith(TMP_PREFIX) and n[:1].isdigit()]


def next_entry_id(root: Path) -> str:
    highest = 0
    for folder in (journal_dir(root), aside_dir(root)):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            digits = name.removeprefix(TMP_PREFIX)[:6]
            if digits.isdigit():
                highest = max(highest, int(digits))
    return f"{highest + 1:06d}"


def write_entry(root: Path, entry: Entry, blobs: dict[str, bytes], step: Any) -> None:
    """Durably store ``entry`` and its blobs, then rename it into the journal."""
    jdir = journal_dir(root)
    jdir.mkdir(parents=True, exist_ok=True)
    tmp = jdir / f"{TMP_PREFIX}{entry.id}"
    final = jdir / entry.id
    blob_dir = tmp / BLOBS_DIR
    blob_dir.mkdir(parents=True)
    for sha, data in blobs.items():
        fsutil.write_new_file(blob_dir / sha, data, 0o600)
        step(f"journal: saved old contents {sha[:12]}")
    payload = json.dumps(entry.to_dict(), indent=1, ensure_ascii=False).encode("utf-8")
    fsutil.write_new_file(tmp / ENTRY_FILE, payload, 0o600)
    fsutil.fsync_dir(blob_dir)
    fsutil.fsync_dir(tmp)
    step("journal: entry written")
    os.rename(tmp, final)
    fsutil.fsync_dir(jdir)
    entry.folder = final
    step("journal: entry in place")


def mark_done(entry: Entry) -> None:
    """The commit point: from here on the transaction counts as applied."""
    assert entry.folder is not None
    stamp = datetime.now(UTC).isoformat().encode("ascii")
    fsutil.write_new_file(entry.folder / DONE_FILE, stamp, 0o600)
    fsutil.fsync_dir(entry.folder)
    entry.complete = True


def remove_entry(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    fsutil.fsync_dir(folder.parent)


def move_aside(root: Path, folder: Path, why: str) -> Path:
    """Keep a damaged or conflicting entry out of the journal without deleting its data."""
    target_dir = aside_dir(root)
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / f"{folder.name.removeprefix(TMP_PREFIX)}-{why}"
    n = 1
    while target.exists():
        n += 1
        target = target_dir / f"{folder.name.removeprefix(TMP_PREFIX)}-{why}-{n}"
    os.rename(folder, target)
    fsutil.fsync_dir(folder.parent)
    fsutil.fsync_dir(target_dir)
    return target


def matches(current: fsutil.Current, state: FileState | None) -> bool:
    if state is None:
        return not current.exists
    return current.kind == "file" and current.sha256 == state.sha256


@dataclass
class RollbackResult:
    restored: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)


def _restore(root: Path, entry: Entry, op: PathOp, target: Path) -> None:
    if op.before is None:
        os.unlink(target)
        fsutil.fsync_dir(target.parent)
        return
    data = entry.blob_path(op.before.sha256).read_bytes()
    if sha256_bytes(data) != op.before.sha256:
        raise CorruptEntry("its saved old contents are damaged")
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = fsutil.temp_path_for(target, f"{entry.id}-restore")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp)
    fsutil.write_new_file(temp, data, op.before.mode)
    os.replace(temp, target)
    fsutil.fsync_dir(target.parent)


def roll_back(root: Path, entry: Entry) -> RollbackResult:
    """Bring every path of an unfinished entry back to its old state.

    A path that already has its old state is left as it is; a path that matches neither
    its old nor its new state was changed by someone else and is left alone (reported).
    Safe to run again after an interruption: it only compares and restores whole files.
    """
    result = RollbackResult()
    for op in entry.ops:
        try:
            target = paths.resolve_inside(root, op.path)
        except paths.ConfinementError as exc:
            result.conflicts.append((op.path, f"not restored: {exc}"))
            continue
        current = fsutil.read_current(target)
        if matches(current, op.before):
            continue
        if not matches(current, op.after):
            result.conflicts.append((op.path, f"changed after the interrupted {entry.kind}"))
            continue
        try:
            _restore(root, entry, op, target)
        except OSError as exc:
            result.failures.append((op.path, fsutil.os_error_text(exc)))
            continue
        except CorruptEntry as exc:
            result.failures.append((op.path, str(exc)))
            continue
        result.restored.append(op.path)
    for step in entry.steps:
        if step.temp:
            _remove_temp(root / step.temp)
    for rel in reversed(entry.created_dirs):
        # Not empty (someone put a file there) or already gone: keep it.
        with contextlib.suppress(OSError):
            (root / rel).rmdir()
    return result


def _remove_temp(path: Path) -> None:
    try:
        if path.is_file() and not path.is_symlink():
            path.unlink()
    except OSError:
        pass


def iter_entries(root: Path) -> Iterator[tuple[Path, Entry | CorruptEntry]]:
    for folder in entry_folders(root):
        try:
            yield folder, load_entry(folder)
        except CorruptEntry as exc:
            yield folder, exc
