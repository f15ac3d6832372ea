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
from redline.workspace.dirfd import DirFds, UnsafePathError
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
    # Real path -> the path it was asked for (Preview.via), kept in the journal entry.
    via: dict[str, str] = field(default_factory=dict)


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


def _check_unchanged(dirs: DirFds, plan: Plan, rel: str, expect_missing: bool) -> None:
    """Right before switching a path, make sure nobody touched it since it was read."""
    try:
        dir_fd, name = dirs.parent(rel)
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        if expect_missing:
            return
        raise _ChangedMeanwhile(rel, "deleted while the apply was running") from None
    except UnsafePathError as exc:
        raise _ChangedMeanwhile(rel, f"made unsafe while the apply was running ({exc})") from None
    if expect_missing:
        raise _ChangedMeanwhile(rel, "created while the apply was running")
    if fsutil.signature(st) != plan.signatures.get(rel):
        raise _ChangedMeanwhile(rel, "modified while the apply was running")


def run(root: Path, plan: Plan) -> Entry:
    """Carry out ``plan`` all-or-nothing; on failure everything is rolled back.

    Every folder is reached through descriptors held for the whole transaction
    (:class:`~redline.workspace.dirfd.DirFds`): temp files are created and renamed inside
    the held folder, so a folder swapped for a symlink meanwhile cannot redirect a write.
    """
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
        via=dict(plan.via),
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
    except (OSError, ValueError) as exc:
        _discard_unwritten(root, entry)
        cause = fsutil.os_error_text(exc) if isinstance(exc, OSError) else str(exc)
        raise WriteError(
            f"Could not write the journal entry in {root / '.redline' / 'journal'}: "
            f"{cause}. Nothing was written.",
            [(".redline/journal", cause)],
        ) from None
    current = ""
    failed_path = ""
    with DirFds(root) as dirs:
        try:
            for rel in plan.created_dirs:
                current = f"creating the folder {rel}"
                failed_path = rel
                dir_fd, name = dirs.parent(rel)
                os.mkdir(name, 0o777, dir_fd=dir_fd)
                step(f"created folder {rel}")
            for s in steps:
                if s.do != "write":
                    continue
                current = f"writing {s.path}"
                failed_path = s.path
                dir_fd, name = dirs.parent(s.path)
                fsutil.write_new_file_at(
                    dir_fd,
                    fsutil.temp_name(name, entry.id),
                    plan.new_bytes[s.path],
                    plan.modes.get(s.path),
                    plan.owners.get(s.path),
                )
                step(f"temp written for {s.path}")
            touched: set[int] = set()
            for s in steps:
                current = {
                    "write": f"replacing {s.path}",
                    "delete": f"deleting {s.path}",
                    "rename": f"renaming {s.source} to {s.path}",
                }[s.do]
                failed_path = s.path
                dir_fd, name = dirs.parent(s.path)
                if s.do == "write":
                    _check_unchanged(dirs, plan, s.path, s.path not in plan.signatures)
                    os.replace(
                        fsutil.temp_name(name, entry.id), name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd
                    )
                    step(f"replaced {s.path}")
                elif s.do == "delete":
                    _check_unchanged(dirs, plan, s.path, False)
                    os.unlink(name, dir_fd=dir_fd)
                    step(f"deleted {s.path}")
                else:
                    _check_unchanged(dirs, plan, s.source, False)
                    _check_unchanged(dirs, plan, s.path, True)
                    source_fd, source_name = dirs.parent(s.source)
                    os.rename(source_name, name, src_dir_fd=source_fd, dst_dir_fd=dir_fd)
                    touched.add(source_fd)
                    step(f"renamed {s.source} -> {s.path}")
                touched.add(dir_fd)
            for fd in sorted(touched):
                fsutil.fsync_fd(fd)
            step("folders synced")
            current = "recording the apply as finished in the journal"
            failed_path = ".redline/journal"
            entries.mark_done(entry)
        except SimulatedCrash:
            raise
        except _ChangedMeanwhile as exc:
            outcome = _undo_partial(root, entry)
            raise StaleError(
                f"Refused: {exc.path} was "
                f"{exc.cause.replace(' while', ' by another program while', 1)}. {outcome}",
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
        try:
            if name in entries.journal_names(root) and not entries.is_done(root, name):
                entries.remove_entry(root, name)
        except OSError:
            continue


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
    entries.remove_entry(root, entry.folder.name)
    if result.restored:
        return f"Restored {count(len(result.restored), 'file')}; nothing was changed."
    return "Nothing was changed."


__all__ = ["ApplyError", "Plan", "SimulatedCrash", "run"]
