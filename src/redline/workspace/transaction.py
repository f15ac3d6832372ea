"""The transaction engine behind apply and undo: journal first, then all-or-nothing moves.

Order of work (each numbered step calls the test-only :data:`_step_hook`):

1. The journal entry (old bytes + the before/after state of every path) is written,
   fsynced and renamed into ``.redline/journal/``.
2. Missing folders are created and every new content goes to a temporary file beside its
   target (written, mode set, fsynced). A full disk fails here, before any target changed.
3. Targets are switched: ``os.replace`` of each temp, ``os.rename`` for renames,
   ``os.unlink`` for deletes; then the touched folders are fsynced.
4. The ``done`` marker is written: this is the commit point. Before it, recovery rolls
   every file back to its old state; after it, the transaction counts as applied.

The caller holds the workspace lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from redline.workspace import entries, fsutil
from redline.workspace.entries import Entry, PathOp, Step
from redline.workspace.errors import ApplyError, StaleError, WriteError, count, describe

# Test-only: called as ``_step_hook(number, description)`` at each step of a transaction.
_step_hook: Callable[[int, str], None] | None = None


class SimulatedCrash(BaseException):
    """Raised by a test's step hook to mean "the process stops here": no cleanup runs."""


@dataclass
class Plan:
    """Everything a transaction needs, checked and read before the journal is written."""

    kind: str
    label: str
    files: list[str]
    ops: list[PathOp] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)
    new_bytes: dict[str, bytes] = field(default_factory=dict)
    modes: dict[str, int | None] = field(default_factory=dict)
    owners: dict[str, tuple[int, int]] = field(default_factory=dict)
    # (ino, size, mtime) of each existing path when it was read, to catch outside edits;
    # paths expected to be missing are absent from this map.
    signatures: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    source_tool_name: str = ""
    action_id: str | None = None
    undoes: str | None = None


class _Counter:
    def __init__(self) -> None:
        self.number = 0

    def __call__(self, description: str) -> None:
        self.number += 1
        hook = _step_hook
        if hook is not None:
            hook(self.number, description)


class _ChangedMeanwhile(Exception):
    def __init__(self, path: str, cause: str) -> None:
        super().__init__(path, cause)
        self.path = path
        self.cause = cause


def _check_unchanged(root: Path, plan: Plan, rel: str, expect_missing: bool) -> None:
    """Right before switching a path, make sure nobody touched it since it was read."""
    try:
        st = os.lstat(root / rel)
    except FileNotFoundError:
        if expect_missing:
            return
        raise _ChangedMeanwhile(rel, "deleted while the apply was running") from None
    if expect_missing:
        raise _ChangedMeanwhile(rel, "created while the apply was running")
    if fsutil.signature(st) != plan.signatures.get(rel):
        raise _ChangedMeanwhile(rel, "modified while the apply was running")


def run(root: Path, plan: Plan) -> Entry:
    """Carry out ``plan`` all-or-nothing; on failure everything is rolled back."""
    step = _Counter()
    entry = Entry(
        id=entries.next_entry_id(root),
        kind=plan.kind,
        label=plan.label,
        files=plan.files,
        ops=plan.ops,
        steps=plan.steps,
        created_dirs=plan.created_dirs,
        source_tool_name=plan.source_tool_name,
        action_id=plan.action_id,
        undoes=plan.undoes,
        time=datetime.now(UTC).isoformat(),
    )
    steps = [
        Step(
            s.do,
            s.path,
            s.source,
            fsutil.temp_path_for(root / s.path, entry.id).relative_to(root).as_posix(),
        )
        if s.do == "write"
        else s
        for s in plan.steps
    ]
    entry.steps = steps
    try:
        entries.write_entry(root, entry, plan.blobs, step)
    except SimulatedCrash:
        raise
    except OSError as exc:
        _discard_unwritten(root, entry)
        raise WriteError(
            f"Could not write the journal entry in {root / '.redline' / 'journal'}: "
            f"{fsutil.os_error_text(exc)}. Nothing was written.",
            [(".redline/journal", fsutil.os_error_text(exc))],
        ) from None
    current = ""
    failed_path = ""
    try:
        for rel in plan.created_dirs:
            current = f"creating the folder {rel}"
            failed_path = rel
            (root / rel).mkdir()
            step(f"created folder {rel}")
        for s in steps:
            if s.do != "write":
                continue
            current = f"writing {s.path}"
            failed_path = s.path
            fsutil.write_new_file(
                root / s.temp,
                plan.new_bytes[s.path],
                plan.modes.get(s.path),
                plan.owners.get(s.path),
            )
            step(f"temp written for {s.path}")
        touched: set[Path] = set()
        for s in steps:
            target = root / s.path
            current = {
                "write": f"replacing {s.path}",
                "delete": f"deleting {s.path}",
                "rename": f"renaming {s.source} to {s.path}",
            }[s.do]
            failed_path = s.path
            if s.do == "write":
                _check_unchanged(root, plan, s.path, s.path not in plan.signatures)
                os.replace(root / s.temp, target)
                step(f"replaced {s.path}")
            elif s.do == "delete":
                _check_unchanged(root, plan, s.path, False)
                os.unlink(target)
                step(f"deleted {s.path}")
            else:
                _check_unchanged(root, plan, s.source, False)
                _check_unchanged(root, plan, s.path, True)
                os.rename(root / s.source, target)
                touched.add((root / s.source).parent)
                step(f"renamed {s.source} -> {s.path}")
            touched.add(target.parent)
        for folder in sorted(touched):
            fsutil.fsync_dir(folder)
        step("folders synced")
        current = "recording the apply as finished in the journal"
        failed_path = ".redline/journal"
        entries.mark_done(entry)
    except SimulatedCrash:
        raise
    except _ChangedMeanwhile as exc:
        outcome = _undo_partial(root, entry)
        raise StaleError(
            f"Refused: {exc.path} was {exc.cause.replace(' while', ' by another program while')}. "
            f"{outcome}",
            [(exc.path, exc.cause)],
        ) from None
    except BaseException as exc:
        outcome = _undo_partial(root, entry)
        if not isinstance(exc, Exception):
            raise
        cause = fsutil.os_error_text(exc) if isinstance(exc, OSError) else str(exc)
        raise WriteError(
            f"Could not {'undo' if plan.kind == 'undo' else 'apply'}: {current} "
            f"failed: {cause}. {outcome}",
            [(failed_path, cause)],
        ) from None
    step("committed")
    return entry


def _discard_unwritten(root: Path, entry: Entry) -> None:
    for name in (f"{entries.TMP_PREFIX}{entry.id}", entry.id):
        folder = root / ".redline" / "journal" / name
        if folder.exists() and not (folder / entries.DONE_FILE).exists():
            entries.remove_entry(folder)


def _undo_partial(root: Path, entry: Entry) -> str:
    """Roll back what this transaction did so far; say how it went, for the error text."""
    try:
        return _roll_back_now(root, entry)
    except OSError as exc:
        return (
            f"Rolling back stopped ({fsutil.os_error_text(exc)}); redline finishes it the "
            "next time it opens this workspace."
        )


def _roll_back_now(root: Path, entry: Entry) -> str:
    result = entries.roll_back(root, entry)
    assert entry.folder is not None
    if result.failures:
        return (
            f"Could not restore {describe(result.failures)}; their old contents are kept "
            f"in {entry.folder} and redline restores them the next time it opens this "
            "workspace."
        )
    if result.conflicts:
        aside = entries.move_aside(root, entry.folder, "conflict")
        return (
            f"Every other file was restored; left alone {describe(result.conflicts)} "
            f"(old contents kept in {aside})."
        )
    entries.remove_entry(entry.folder)
    if result.restored:
        return f"Restored {count(len(result.restored), 'file')}; nothing was changed."
    return "Nothing was changed."


__all__ = ["ApplyError", "Plan", "SimulatedCrash", "run"]
