"""The preview model: one structured description of a change to workspace files.

ast_edit, edit, write and custom tools all produce a :class:`Preview`; the dashboard
renders it and the safe-apply module writes it. Paths are POSIX-style and relative to
the workspace root. Text is kept exactly as read (``newline=""``), so line endings
survive, and each change records the encoding it is written back with.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from redline.workspace.diffing import grouped_opcodes, opcodes

# Defined in a module of their own so that a reader of files (ast_edit's search) needs
# none of the rest; importable from here as before.
from redline.workspace.textcodec import DecodeError as DecodeError
from redline.workspace.textcodec import decode_text as decode_text
from redline.workspace.textcodec import encode_text as encode_text
from redline.workspace.textcodec import sha256_bytes as sha256_bytes

if TYPE_CHECKING:
    from redline.workspace.summary import FileSummary, PreviewSummary

ChangeKind = Literal["modify", "create", "delete", "rename"]


@dataclass(frozen=True)
class FileModify:
    path: str
    old_sha256: str
    old_text: str
    new_text: str
    encoding: str = "utf-8"
    kind: ChangeKind = "modify"

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,)


@dataclass(frozen=True)
class FileCreate:
    path: str
    new_text: str
    encoding: str = "utf-8"
    kind: ChangeKind = "create"

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,)


@dataclass(frozen=True)
class FileDelete:
    path: str
    old_sha256: str
    old_text: str | None = None
    kind: ChangeKind = "delete"

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,)


@dataclass(frozen=True)
class FileRename:
    old_path: str
    new_path: str
    old_sha256: str
    kind: ChangeKind = "rename"

    @property
    def path(self) -> str:
        return self.new_path

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.old_path, self.new_path)


FileChange: TypeAlias = FileModify | FileCreate | FileDelete | FileRename


@dataclass(frozen=True)
class LineStats:
    added: int
    removed: int


def _split(text: str | None) -> list[str]:
    return [] if not text else text.splitlines(keepends=True)


def _count(old: list[str], new: list[str]) -> LineStats:
    added = removed = 0
    for tag, i1, i2, j1, j2 in opcodes(old, new):
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return LineStats(added, removed)


def line_stats(change: FileChange) -> LineStats:
    return _count(old_lines(change), new_lines(change))


def _range(start: int, length: int) -> str:
    # The hunk header convention unified diffs (and difflib) use.
    first = start + 1 if length else start
    return str(first) if length == 1 else f"{first},{length}"


def _line(prefix: str, text: str) -> str:
    return (
        prefix + text if text.endswith("\n") else f"{prefix}{text}\n\\ No newline at end of file\n"
    )


def _unified(old: list[str], new: list[str], from_file: str, to_file: str, context: int) -> str:
    groups = grouped_opcodes(opcodes(old, new), context)
    if not groups:
        return ""
    out = [f"--- {from_file}\n", f"+++ {to_file}\n"]
    for group in groups:
        first, last = group[0], group[-1]
        out.append(
            f"@@ -{_range(first[1], last[2] - first[1])} +{_range(first[3], last[4] - first[3])} @@\n"
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_line(" ", line) for line in old[i1:i2])
                continue
            out.extend(_line("-", line) for line in old[i1:i2])
            out.extend(_line("+", line) for line in new[j1:j2])
    return "".join(out)


def old_lines(change: FileChange) -> list[str]:
    if isinstance(change, FileModify):
        return _split(change.old_text)
    if isinstance(change, FileDelete):
        return _split(change.old_text)
    return []


def new_lines(change: FileChange) -> list[str]:
    if isinstance(change, (FileModify, FileCreate)):
        return _split(change.new_text)
    return []


def crlf_endings(change: FileChange) -> bool:
    """Every line of the change's text, before and after, ends with ``\r\n`` (a Windows
    file): a diff then says ``CRLF line endings`` once, in the file's header, instead of
    showing a ``\r`` on each line (``redline.termtext``)."""
    from redline.termtext import crlf

    texts = ["".join(lines) for lines in (old_lines(change), new_lines(change)) if lines]
    return bool(texts) and all(crlf(text) for text in texts)


def display_diff(preview: Preview, context: int = 3) -> tuple[str, int]:
    """The preview's unified diff as a terminal shows it, and how many of its lines hold
    characters ``redline.termtext`` shows (controls, bidi and invisible format characters).

    A CRLF file's ``+++`` line ends with a tab and ``(CRLF line endings)`` and its lines
    lose that ``\r``; every other character is left for the terminal writer to show."""
    from redline.termtext import hides

    parts: list[str] = []
    hidden = 0
    for change in preview.changes:
        text = preview.file_diff(change, context)
        lines = text.split("\n")
        head = 2 if text.startswith("--- ") else 0  # the ``---``/``+++`` lines
        body = lines[head:]
        if head and crlf_endings(change):
            lines[1] += "\t(CRLF line endings)"
            body = [line[:-1] if line.endswith("\r") else line for line in body]
            lines[head:] = body
        hidden += sum(1 for line in body if line[:1] in (" ", "+", "-") and hides(line))
        parts.append("\n".join(lines))
    return "".join(parts), hidden


def change_title(change: FileChange) -> str:
    """How a person reads the change in a file list: ``M path``, ``R old -> new``..."""
    if isinstance(change, FileRename):
        return f"R {change.old_path} -> {change.new_path}"
    letter = {"modify": "M", "create": "A", "delete": "D"}[change.kind]
    return f"{letter} {change.path}"


@dataclass(frozen=True)
class Preview:
    """An ordered list of file changes, applied together or not at all.

    Paths are the real paths the changes write (folders on the way resolved inside the
    workspace; see :func:`redline.workspace.realpath.canonical_preview`). ``via`` maps a
    real path to the path it was asked for when the two differ (``src/app.py`` asked as
    ``tests/app.py`` through a symlinked folder ``tests -> src``).
    """

    changes: tuple[FileChange, ...] = ()
    via: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __init__(
        self, changes: Iterable[FileChange] = (), via: Mapping[str, str] | None = None
    ) -> None:
        object.__setattr__(self, "changes", tuple(changes))
        kept: dict[str, str] = {}
        if via:
            touched = {path for change in self.changes for path in change.paths}
            kept = {real: asked for real, asked in via.items() if real in touched and real != asked}
        object.__setattr__(self, "via", kept)

    def asked(self, path: str) -> str:
        """The path ``path`` was asked for (itself when it was asked as it is)."""
        return self.via.get(path, path)

    def __iter__(self) -> Iterator[FileChange]:
        return iter(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def __bool__(self) -> bool:
        return bool(self.changes)

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the preview touches (both ends of renames), in order, without repeats."""
        seen: dict[str, None] = {}
        for change in self.changes:
            for path in change.paths:
                seen.setdefault(path, None)
        return tuple(seen)

    def file_diff(self, change: FileChange, context: int = 3) -> str:
        """The unified diff of one change (``a/``/``b/`` headers, as git writes them)."""
        if isinstance(change, FileRename):
            return f"rename from {change.old_path}\nrename to {change.new_path}\n"
        old = old_lines(change)
        new = new_lines(change)
        from_file = "/dev/null" if isinstance(change, FileCreate) else f"a/{change.path}"
        to_file = "/dev/null" if isinstance(change, FileDelete) else f"b/{change.path}"
        if isinstance(change, FileDelete) and change.old_text is None:
            return f"--- {from_file}\n+++ {to_file}\nBinary file deleted\n"
        return _unified(old, new, from_file, to_file, context)

    def diff(self, context: int = 3) -> str:
        return "".join(self.file_diff(change, context) for change in self.changes)

    def file_stats(self, change: FileChange) -> LineStats:
        return line_stats(change)

    def stats(self) -> LineStats:
        added = removed = 0
        for change in self.changes:
            stats = self.file_stats(change)
            added += stats.added
            removed += stats.removed
        return LineStats(added, removed)

    def summary(self) -> PreviewSummary:
        """A small JSON-able description for events and lists (no file contents)."""
        files: list[FileSummary] = []
        for change in self.changes:
            stats = self.file_stats(change)
            entry: FileSummary = {"kind": change.kind, "path": change.path}
            if isinstance(change, FileRename):
                entry["old_path"] = change.old_path
            if change.path in self.via:
                entry["via"] = self.via[change.path]
            entry["added"] = stats.added
            entry["removed"] = stats.removed
            files.append(entry)
        total = self.stats()
        return {"files": files, "added": total.added, "removed": total.removed}

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"changes": [change_to_dict(change) for change in self.changes]}
        if self.via:
            data["via"] = dict(self.via)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Preview:
        raw = data.get("changes")
        if not isinstance(raw, Sequence):
            raise ValueError("a preview needs a 'changes' list")
        return cls((change_from_dict(item) for item in raw), via=via_from(data.get("via")))


def via_from(value: object) -> dict[str, str]:
    """A stored ``via`` map (real path -> the path asked for); {} when there is none."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(key, str) and isinstance(item, str) for key, item in value.items()
    ):
        raise ValueError("'via' must map paths to paths")
    return dict(value)


def via_text(real: str, asked: str) -> str:
    """How a display says a path was reached: ``via tests/ → src/`` (the folders that
    differ), or ``via tests/app.py → src/app.py`` when the file names differ too."""
    real_parts, asked_parts = real.split("/"), asked.split("/")
    while len(real_parts) > 1 and len(asked_parts) > 1 and real_parts[-1] == asked_parts[-1]:
        real_parts.pop()
        asked_parts.pop()
    if len(real_parts) < len(real.split("/")):
        return f"via {'/'.join(asked_parts)}/ → {'/'.join(real_parts)}/"
    return f"via {asked} → {real}"


def via_lines(via: Mapping[str, str]) -> list[str]:
    """One sentence per path reached through a symlink: ``Writes src/app.py (via tests/ →
    src/)``; [] when every path was asked as it is."""
    return [
        f"Writes {real} ({via_text(real, asked)})" for real, asked in via.items() if real != asked
    ]


def shown_path(path: str, via: Mapping[str, str]) -> str:
    """``path`` for a person: ``src/app.py (via tests/ → src/)`` when it was asked otherwise."""
    asked = via.get(path)
    return path if asked is None or asked == path else f"{path} ({via_text(path, asked)})"


def change_to_dict(change: FileChange) -> dict[str, Any]:
    if isinstance(change, FileModify):
        return {
            "kind": "modify",
            "path": change.path,
            "old_sha256": change.old_sha256,
            "old_text": change.old_text,
            "new_text": change.new_text,
            "encoding": change.encoding,
        }
    if isinstance(change, FileCreate):
        return {
            "kind": "create",
            "path": change.path,
            "new_text": change.new_text,
            "encoding": change.encoding,
        }
    if isinstance(change, FileDelete):
        return {
            "kind": "delete",
            "path": change.path,
            "old_sha256": change.old_sha256,
            "old_text": change.old_text,
        }
    return {
        "kind": "rename",
        "old_path": change.old_path,
        "new_path": change.new_path,
        "old_sha256": change.old_sha256,
    }


def change_from_dict(data: Mapping[str, Any]) -> FileChange:
    kind = data.get("kind")
    try:
        if kind == "modify":
            return FileModify(
                path=str(data["path"]),
                old_sha256=str(data["old_sha256"]),
                old_text=str(data["old_text"]),
                new_text=str(data["new_text"]),
                encoding=str(data.get("encoding", "utf-8")),
            )
        if kind == "create":
            return FileCreate(
                path=str(data["path"]),
                new_text=str(data["new_text"]),
                encoding=str(data.get("encoding", "utf-8")),
            )
        if kind == "delete":
            old_text = data.get("old_text")
            return FileDelete(
                path=str(data["path"]),
                old_sha256=str(data["old_sha256"]),
                old_text=None if old_text is None else str(old_text),
            )
        if kind == "rename":
            return FileRename(
                old_path=str(data["old_path"]),
                new_path=str(data["new_path"]),
                old_sha256=str(data["old_sha256"]),
            )
    except KeyError as exc:
        raise ValueError(f"a {kind} change needs the field {exc.args[0]!r}") from None
    raise ValueError(f"unknown change kind {kind!r}: expected modify, create, delete or rename")


def __getattr__(name: str) -> object:
    """``FileSummary`` and ``PreviewSummary`` live in :mod:`redline.workspace.summary` (their
    TypedDict base, typing_extensions', is not imported by a hook's queueing); importable
    from here as before."""
    if name in ("FileSummary", "PreviewSummary"):
        from redline.workspace import summary

        return getattr(summary, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
