"""From what an ACP agent asks to a redline Preview of the full-file change.

A permission request's ``diff`` content is ``{path, oldText, newText}``; agents differ in
what ``oldText`` holds (the whole file, a snippet, nothing for a new file). Codex also
sends ``rawInput.changes`` with a unified diff per file. Every path is confined to the
workspace first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from redline.workspace import fsutil, paths
from redline.workspace.preview import (
    DecodeError,
    FileChange,
    FileCreate,
    FileModify,
    Preview,
    decode_text,
    sha256_bytes,
)

if TYPE_CHECKING:
    from redline.jsontypes import JsonValue


class MappingError(ValueError):
    """The agent's request cannot be turned into a change redline can show."""


@dataclass(frozen=True)
class DiskFile:
    """A workspace file as it is now (``text`` None: no file there)."""

    rel: str
    text: str | None
    sha256: str | None
    encoding: str = "utf-8"


def confine(root: Path, path: str) -> tuple[Path, str]:
    """The absolute path and the workspace-relative name; ConfinementError outside."""
    absolute = paths.resolve_inside(root, path)
    return absolute, paths.relative_to_root(root, absolute)


def read_disk(root: Path, path: str) -> DiskFile:
    absolute, rel = confine(root, path)
    current = fsutil.read_current(absolute)
    if current.kind == "missing":
        return DiskFile(rel, None, None)
    if current.kind != "file" or current.data is None or current.sha256 is None:
        raise MappingError(f"{rel}: not a regular text file redline can read")
    try:
        text, encoding = decode_text(current.data, rel)
    except DecodeError as exc:
        raise MappingError(str(exc)) from None
    return DiskFile(rel, text, current.sha256, encoding)


@dataclass(frozen=True)
class MappedChange:
    """One file's change; ``verified`` False: shown as sent, not checked against the disk."""

    change: FileChange
    verified: bool
    note: str = ""


def full_file_change(root: Path, path: str, old_text: str | None, new_text: str) -> MappedChange:
    """The full-file change a ``{path, oldText, newText}`` diff means against the disk."""
    disk = read_disk(root, path)
    rel = disk.rel
    if disk.text is None:
        if not old_text:
            return MappedChange(FileCreate(rel, new_text), True)
        return MappedChange(
            FileModify(rel, "", old_text, new_text),
            False,
            f"{rel} does not exist, but the agent's change expects existing text",
        )
    assert disk.sha256 is not None
    if old_text is None or old_text == "":
        if disk.text == "":
            return MappedChange(FileModify(rel, disk.sha256, "", new_text, disk.encoding), True)
        return MappedChange(
            FileModify(rel, disk.sha256, disk.text, new_text, disk.encoding),
            False,
            f"{rel} exists; the agent described its change as creating the file",
        )
    if old_text == disk.text:
        return MappedChange(FileModify(rel, disk.sha256, disk.text, new_text, disk.encoding), True)
    if disk.text.count(old_text) == 1:
        replaced = disk.text.replace(old_text, new_text, 1)
        return MappedChange(FileModify(rel, disk.sha256, disk.text, replaced, disk.encoding), True)
    return MappedChange(
        FileModify(rel, disk.sha256, old_text, new_text, disk.encoding),
        False,
        f"the agent's old text of {rel} is not found exactly once in the file",
    )


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_unified_diff(old: str, diff: str) -> str:
    """Apply a unified diff strictly: every context and removed line must match."""
    old_lines = old.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    lines = diff.splitlines(keepends=True)
    i = 0
    seen_hunk = False
    while i < len(lines):
        match = _HUNK.match(lines[i])
        if not match:
            i += 1
            continue
        seen_hunk = True
        start = int(match.group(1))
        count = 1 if match.group(2) is None else int(match.group(2))
        begin = start - 1 if count else start
        if begin < pos:
            raise MappingError("unified diff hunks overlap or are out of order")
        out.extend(old_lines[pos:begin])
        pos = begin
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            line = lines[i]
            tag, body = line[:1], line[1:]
            no_newline = i + 1 < len(lines) and lines[i + 1].startswith("\\")
            if no_newline:
                body = body.removesuffix("\n")
            if tag in (" ", "-"):
                if pos >= len(old_lines) or old_lines[pos] != body:
                    raise MappingError(f"unified diff does not match the file at line {pos + 1}")
                if tag == " ":
                    out.append(body)
                pos += 1
            elif tag == "+":
                out.append(body)
            elif tag == "\\":
                pass
            elif line.strip() == "":
                # A blank context line some tools emit without the leading space.
                if pos >= len(old_lines) or old_lines[pos].strip() != "":
                    raise MappingError(f"unified diff does not match the file at line {pos + 1}")
                out.append(old_lines[pos])
                pos += 1
            else:
                break
            i += 1
    if not seen_hunk:
        raise MappingError("unified diff without hunks")
    out.extend(old_lines[pos:])
    return "".join(out)


def _change_entry(raw: JsonValue) -> tuple[str, Mapping[str, JsonValue]] | None:
    """Codex's FileChange, tagged (``{"type": "update", ...}``) or keyed (``{"update": {...}}``)."""
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    if isinstance(kind, str):
        return kind, raw
    if len(raw) == 1:
        ((key, value),) = raw.items()
        if isinstance(value, Mapping):
            return str(key), value
    return None


def codex_changes(root: Path, raw_input: JsonValue) -> list[MappedChange] | None:
    """Changes from Codex's ``rawInput.changes`` (None when absent or not understood)."""
    if not isinstance(raw_input, Mapping):
        return None
    changes = raw_input.get("changes")
    if not isinstance(changes, Mapping) or not changes:
        return None
    mapped: list[MappedChange] = []
    for path, raw in changes.items():
        entry = _change_entry(raw)
        if entry is None:
            return None
        kind, body = entry
        disk = read_disk(root, str(path))
        if kind == "add" and isinstance(content := body.get("content"), str):
            if disk.text is not None:
                raise MappingError(f"{disk.rel}: the agent adds a file that already exists")
            mapped.append(MappedChange(FileCreate(disk.rel, content), True))
        elif kind == "update" and isinstance(diff := body.get("unified_diff"), str):
            if body.get("move_path"):
                return None
            if disk.text is None or disk.sha256 is None:
                raise MappingError(f"{disk.rel}: the agent updates a file that does not exist")
            new_text = apply_unified_diff(disk.text, diff)
            mapped.append(
                MappedChange(
                    FileModify(disk.rel, disk.sha256, disk.text, new_text, disk.encoding), True
                )
            )
        else:
            return None
    return mapped


def preview_of(changes: list[MappedChange]) -> Preview:
    return Preview(m.change for m in changes)


def content_sha256(change: FileChange) -> str | None:
    """The hash of the file as the change leaves it (None: no file)."""
    if isinstance(change, (FileModify, FileCreate)):
        from redline.workspace.preview import encode_text

        return sha256_bytes(encode_text(change.new_text, change.encoding))
    return None
