"""Re-base a pending preview onto what another action just wrote.

When a person applies an action out of order, every other pending preview touching the
same files was computed against files that have now changed. :func:`rebase_preview`
carries such a preview over with a three-way merge per file (the ``merge3`` package):
the preview's base is the ancestor, the text just written is "ours" and the preview's
proposal is "theirs". Both sides are aligned with the shared diff
(:mod:`redline.workspace.diffing`), so "overlap" means the same thing as the hunks the
dashboard shows. Changes that touch the same or adjacent lines conflict; the result then
names the preview's hunks involved and the caller marks the action stale.

Pure: nothing is read or written. Only previews rebase; an action whose apply is code
(no preview) cannot be merged and its caller marks it stale when its files changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from merge3 import Merge3

from redline.workspace.diffing import opcodes
from redline.workspace.hunks import Unit, hunk_units
from redline.workspace.preview import (
    FileChange,
    FileCreate,
    FileDelete,
    FileModify,
    FileRename,
    Preview,
    encode_text,
    sha256_bytes,
)

__all__ = ["FileConflict", "RebaseResult", "RebaseStatus", "rebase_preview"]

RebaseStatus = Literal["unaffected", "rebased", "absorbed", "conflict"]


@dataclass(frozen=True)
class FileConflict:
    """One file of the preview that cannot be carried over, with the hunks involved."""

    path: str
    cause: str
    hunks: tuple[Unit, ...] = ()

    def describe(self) -> str:
        """``a.py hunk 2 (lines 4–6), a.py hunk 3 (lines 9–9): <cause>``."""
        parts = ", ".join(unit.describe() for unit in self.hunks) or self.path
        return f"{parts}: {self.cause}"


@dataclass(frozen=True)
class RebaseResult:
    """How a preview fares on top of a write.

    ``unaffected``: none of its files were written (``preview`` is the input).
    ``rebased``: ``preview`` is based on the files now; a file whose whole change was
    already written is left out. ``absorbed``: everything it proposes is already written
    (``preview`` is empty). ``conflict``: ``conflicts`` name the files and hunks
    (``preview`` is the input).
    """

    status: RebaseStatus
    preview: Preview
    conflicts: tuple[FileConflict, ...] = field(default=())

    def describe(self) -> str:
        return "; ".join(conflict.describe() for conflict in self.conflicts)


class _SharedDiffMatcher:
    """The matching blocks of the shared diff, in the shape merge3 asks a matcher for."""

    def __init__(
        self,
        isjunk: Callable[[str], bool] | None = None,
        a: Sequence[str] = (),
        b: Sequence[str] = (),
        autojunk: bool = True,
    ) -> None:
        self._a = list(a)
        self._b = list(b)

    def get_matching_blocks(self) -> list[tuple[int, int, int]]:
        blocks = [
            (i1, j1, i2 - i1)
            for tag, i1, i2, j1, _ in opcodes(self._a, self._b)
            if tag == "equal" and i2 > i1
        ]
        blocks.append((len(self._a), len(self._b), 0))
        return blocks


class _Absorbed:
    """A change whose whole effect the written action already had: left out of the rebase."""


_ABSORBED = _Absorbed()


@dataclass(frozen=True)
class _After:
    """What the written preview left at one path."""

    text: str | None  # None: no file (deleted, renamed away) or contents unknown (renamed to)
    sha256: str | None
    base_sha256: str | None  # the hash the written change was computed against
    exists: bool


def _after_states(written: Preview) -> dict[str, _After]:
    states: dict[str, _After] = {}
    for change in written.changes:
        if isinstance(change, (FileModify, FileCreate)):
            base = change.old_sha256 if isinstance(change, FileModify) else None
            try:
                sha = sha256_bytes(encode_text(change.new_text, change.encoding))
            except (LookupError, UnicodeError):  # safe apply refuses such a change
                states[change.path] = _After(None, None, base, True)
                continue
            states[change.path] = _After(change.new_text, sha, base, True)
        elif isinstance(change, FileDelete):
            states[change.path] = _After(None, None, change.old_sha256, False)
        else:
            states[change.old_path] = _After(None, None, change.old_sha256, False)
            states[change.new_path] = _After(None, change.old_sha256, None, True)
    return states


def _overlapping(units: Sequence[Unit], start: int, end: int) -> list[Unit]:
    """The units whose base lines meet ``[start, end)`` (touching counts for empty ranges)."""
    found = []
    for unit in units:
        crossing = unit.old_start < end and start < unit.old_end
        empty = unit.old_start == unit.old_end or start == end
        if crossing or (empty and start <= unit.old_end and unit.old_start <= end):
            found.append(unit)
    return found


def _merge(
    change: FileModify, after: _After, units: Sequence[Unit], onto: str
) -> FileChange | FileConflict | None:
    """The merged change, a conflict, or None when nothing is left to write to the file."""
    assert after.text is not None and after.sha256 is not None
    base = change.old_text.splitlines(keepends=True)
    ours = after.text.splitlines(keepends=True)
    theirs = change.new_text.splitlines(keepends=True)
    merger = Merge3(base, ours, theirs, sequence_matcher=cast(Any, _SharedDiffMatcher))
    out: list[str] = []
    clashing: dict[tuple[int, int | None], Unit] = {}
    for region in merger.merge_regions():
        what = region[0]
        if what == "unchanged":
            out.extend(base[region[1] : region[2]])
        elif what in ("a", "same"):
            out.extend(ours[region[1] : region[2]])
        elif what == "b":
            out.extend(theirs[region[1] : region[2]])
        else:
            start, end = region[1], region[2]
            for unit in _overlapping(units, start, end) or units:
                clashing[unit.key] = unit
    if clashing:
        hunks = tuple(sorted(clashing.values(), key=lambda unit: unit.old_start))
        return FileConflict(
            change.path, f"overlaps what {onto} wrote to {change.path}", hunks=hunks
        )
    merged = "".join(out)
    try:
        encode_text(merged, change.encoding)
    except (LookupError, UnicodeError):
        return FileConflict(
            change.path,
            f"the merged text cannot be written as {change.encoding}",
            hunks=tuple(units),
        )
    if sha256_bytes(encode_text(merged, change.encoding)) == after.sha256:
        return None  # everything it proposes for this file is already written
    return FileModify(change.path, after.sha256, after.text, merged, change.encoding)


def _carry(
    change: FileChange, states: dict[str, _After], units: Sequence[Unit], onto: str
) -> FileChange | FileConflict | _Absorbed | None:
    """The change re-based on ``states``, a conflict, or None when it is not affected."""
    if isinstance(change, FileModify):
        after = states.get(change.path)
        if after is None:
            return None
        if not after.exists:
            return FileConflict(change.path, f"{onto} deleted or moved {change.path}")
        if after.sha256 == change.old_sha256:
            return None  # already computed against what is on disk now
        if after.text is None or after.base_sha256 != change.old_sha256:
            return FileConflict(
                change.path,
                f"computed against another version of {change.path} than the one {onto} changed",
                hunks=tuple(units),
            )
        merged = _merge(change, after, units, onto)
        return _ABSORBED if merged is None else merged
    if isinstance(change, FileCreate):
        after = states.get(change.path)
        if after is not None and after.exists:
            return FileConflict(change.path, f"{onto} created {change.path} meanwhile")
        return None
    if isinstance(change, FileDelete):
        after = states.get(change.path)
        if after is None or after.sha256 == change.old_sha256:
            return None
        if not after.exists:
            return FileConflict(change.path, f"{onto} already deleted or moved {change.path}")
        return FileConflict(change.path, f"deleting it would drop what {onto} wrote")
    source = states.get(change.old_path)
    target = states.get(change.new_path)
    if target is not None and target.exists:
        return FileConflict(change.new_path, f"{onto} created {change.new_path} meanwhile")
    if source is None or source.sha256 == change.old_sha256:
        return None
    if not source.exists or source.sha256 is None:
        return FileConflict(change.new_path, f"{onto} deleted or moved {change.old_path}")
    return FileRename(change.old_path, change.new_path, source.sha256)


def rebase_preview(
    preview: Preview, written: Preview, *, onto: str = "the applied action"
) -> RebaseResult:
    """Carry ``preview`` over onto the files as ``written`` (just applied) left them.

    ``written`` is the preview safe apply wrote (for a partial apply, the selected part),
    both computed against the same files. ``onto`` names that action in conflict causes
    (``pa-6``). A modify of a file ``written`` changed is merged three ways; renames
    follow the new contents; a creation where a file now exists, a deletion of a changed
    file and any change of a file ``written`` removed conflict. The rebased preview keeps
    the change order; its modifies are based on the written text and its hash.
    """
    states = _after_states(written)
    units = hunk_units(preview)
    changes: list[FileChange] = []
    conflicts: list[FileConflict] = []
    touched = False
    for index, change in enumerate(preview.changes):
        mine = [unit for unit in units if unit.change_index == index]
        carried = _carry(change, states, mine, onto)
        if carried is None:
            changes.append(change)
        elif isinstance(carried, _Absorbed):
            touched = True
        elif isinstance(carried, FileConflict):
            conflicts.append(carried)
        else:
            touched = True
            changes.append(carried)
    if conflicts:
        return RebaseResult("conflict", preview, tuple(conflicts))
    if not touched:
        return RebaseResult("unaffected", preview)
    if not changes:
        return RebaseResult("absorbed", Preview())
    return RebaseResult("rebased", Preview(changes, via=preview.via))
