"""The apply journal: crash recovery, undo and the undo history.

Every apply and every undo is a journal entry under ``.redline/journal/`` (see
:mod:`redline.workspace.entries`). An entry without its ``done`` marker was interrupted:
:func:`recover` rolls it back. A complete ``apply`` entry can be undone, newest first; the
undo is a transaction of its own (kind ``undo``, pointing at the apply it reverses) and is
itself not undoable: undoing again reverses the next older apply.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from redline.workspace import entries, fsutil, paths, transaction
from redline.workspace.entries import CorruptEntry, Entry, FileState, PathOp, Step
from redline.workspace.errors import (
    ApplyError,
    LockError,
    UndoError,
    as_undo_error,
    count,
    describe,
)
from redline.workspace.lock import workspace_lock
from redline.workspace.preview import sha256_bytes
from redline.workspace.state import ensure_state_dir, journal_dir

__all__ = [
    "ExternalOutcome",
    "HistoryItem",
    "UndoError",
    "UndoReceipt",
    "begin_external",
    "ensure_state_dir",
    "finish_external",
    "prune",
    "recover",
    "undo_history",
    "undo_last",
]

# Complete applies kept for undo (the promise is at least ten).
KEEP_APPLIES = 50
# Complete entries undo can reverse: redline's own applies and approved agent writes.
UNDOABLE_KINDS = ("apply", "external")
RECOVERY_LOCK_WAIT_SECONDS = 1.0


@dataclass(frozen=True)
class UndoReceipt:
    entry_id: str  # the apply entry that was undone
    label: str
    files: list[str]
    message: str
    undo_entry_id: str = ""
    recovered: tuple[str, ...] = ()


@dataclass(frozen=True)
class HistoryItem:
    entry_id: str
    label: str
    files: list[str]
    time: datetime
    source_tool_name: str = ""
    action_id: str | None = None


def _has_unfinished(root: Path) -> bool:
    folder = journal_dir(root)
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    for name in names:
        if name.startswith(entries.TMP_PREFIX):
            return True
        if not (folder / name / entries.DONE_FILE).exists():
            return True
    return False


def recover(root: Path) -> list[str]:
    """Roll back interrupted applies and undos; return what was done ([] if nothing).

    Cheap when the journal is clean (one directory listing, no lock). Never raises for
    a damaged journal: damaged entries are moved to ``.redline/journal-aside/``.
    """
    root = Path(root).resolve()
    if not _has_unfinished(root):
        return []
    try:
        with workspace_lock(root, wait=RECOVERY_LOCK_WAIT_SECONDS):
            return recover_locked(root)
    except LockError:
        # The other process holds the lock, so its entry is live, not a crash leftover.
        return [
            "Recovery postponed: another redline process is changing files in this "
            "workspace; its unfinished journal entry is not a crash leftover."
        ]
    except OSError as exc:
        return [f"Recovery could not run: {fsutil.os_error_text(exc)}."]


def _label(entry: Entry) -> str:
    what = "undo of" if entry.kind == "undo" else "apply of"
    return f'interrupted {what} "{entry.label}" (journal entry {entry.id})'


def recover_locked(root: Path) -> list[str]:
    """:func:`recover` for a caller that already holds the workspace lock."""
    messages: list[str] = []
    folder = journal_dir(root)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        path = folder / name
        try:
            messages.extend(_recover_one(root, path, name))
        except OSError as exc:
            messages.append(f"Could not recover journal entry {name}: {fsutil.os_error_text(exc)}.")
    return messages


def _recover_one(root: Path, path: Path, name: str) -> list[str]:
    if name.startswith(entries.TMP_PREFIX):
        # Journal entries are moved into place before the first file changes: this one
        # never touched the workspace and only holds copies of files as they still are.
        entries.remove_entry(path)
        return [f"Removed an incomplete journal entry ({name}); no file had been changed."]
    if not path.is_dir():
        aside = entries.move_aside(root, path, "unknown")
        return [f"Moved an unexpected item out of the journal: {name} -> {aside}."]
    if (path / entries.DONE_FILE).exists():
        return []
    try:
        entry = entries.load_entry(path)
    except CorruptEntry as exc:
        aside = entries.move_aside(root, path, "corrupt")
        return [
            f"Journal entry {name} is damaged ({exc}); moved it to {aside} without "
            "changing any file. Check the files it lists if an apply was interrupted."
        ]
    if entry.kind == "external":
        # A person approved this write; recovery records it, never rolls it back.
        outcome = _finish_external(root, entry)
        return [f'Recorded the approved agent write "{entry.label}": {outcome.message}']
    result = entries.roll_back(root, entry)
    if result.failures:
        return [
            f"Could not finish rolling back the {_label(entry)}: {describe(result.failures)}. "
            "redline tries again the next time it opens this workspace."
        ]
    parts = []
    if result.restored:
        parts.append(f"restored {', '.join(result.restored)} to the state before it")
    if result.conflicts:
        aside = entries.move_aside(root, path, "conflict")
        parts.append(
            f"left alone {describe(result.conflicts)}: it matches neither the old nor the "
            f"new contents; the old contents are kept in {aside}"
        )
    else:
        entries.remove_entry(path)
    if not parts:
        parts.append("no file had been changed yet")
    return [f"Rolled back the {_label(entry)}: {'; '.join(parts)}."]


def _complete_entries(root: Path) -> tuple[list[Entry], list[tuple[Path, CorruptEntry]]]:
    good: list[Entry] = []
    bad: list[tuple[Path, CorruptEntry]] = []
    for folder, loaded in entries.iter_entries(root):
        if isinstance(loaded, CorruptEntry):
            if (folder / entries.DONE_FILE).exists():
                bad.append((folder, loaded))
            continue
        if loaded.complete:
            good.append(loaded)
    return good, bad


def _undoable(good: list[Entry]) -> list[Entry]:
    undone = {e.undoes for e in good if e.kind == "undo"}
    return [e for e in reversed(good) if e.kind in UNDOABLE_KINDS and e.id not in undone]


def undo_history(root: Path) -> list[HistoryItem]:
    """Applies that can still be undone, newest first."""
    good, _ = _complete_entries(Path(root).resolve())
    return [
        HistoryItem(e.id, e.label, list(e.files), e.when, e.source_tool_name, e.action_id)
        for e in _undoable(good)
    ]


def _changed_since(current: fsutil.Current, state: FileState | None) -> str:
    if state is None:
        return "created again since the apply"
    if current.kind == "missing":
        return "deleted since the apply"
    if current.kind != "file":
        return "replaced by something that is not a file since the apply"
    return "modified since the apply"


def _undo_plan(root: Path, entry: Entry) -> transaction.Plan:
    """Reverse ``entry``: every path goes from its after-state back to its before-state."""
    plan = transaction.Plan(
        kind="undo",
        label=entry.label,
        files=list(entry.files),
        source_tool_name=entry.source_tool_name,
        action_id=entry.action_id,
        undoes=entry.id,
    )
    problems: list[tuple[str, str]] = []
    currents: dict[str, fsutil.Current] = {}
    for op in entry.ops:
        try:
            target = paths.resolve_inside(root, op.path)
        except paths.ConfinementError as exc:
            problems.append((op.path, str(exc).removeprefix(f"{op.path}: ")))
            continue
        current = fsutil.read_current(target)
        if not entries.matches(current, op.after):
            problems.append((op.path, _changed_since(current, op.after)))
            continue
        if current.kind == "file" and current.mode is not None and not current.mode & 0o200:
            problems.append((op.path, f"is read-only (mode {current.mode:o})"))
            continue
        currents[op.path] = current
    if problems:
        raise UndoError(
            f'Cannot undo "{entry.label}": {count(len(problems), "file")} changed since it '
            f"was applied: {describe(problems)}. Nothing was changed.",
            problems,
        )
    renamed: dict[str, str] = {s.path: s.source for s in entry.steps if s.do == "rename"}
    rename_sources = set(renamed.values())
    dirs: dict[str, None] = {}
    for op in entry.ops:
        current = currents[op.path]
        before = None if current.sha256 is None else FileState(current.sha256, current.mode)
        plan.ops.append(PathOp(op.path, before, op.before))
        if current.data is not None and current.sha256 is not None:
            plan.blobs[current.sha256] = current.data
        if current.signature is not None:
            plan.signatures[op.path] = current.signature
        if op.path in renamed:
            # Undo a rename by renaming back: same file, same inode.
            plan.steps.append(Step("rename", renamed[op.path], source=op.path))
            dirs.update(dict.fromkeys(_missing_parents(root, renamed[op.path])))
        elif op.path in rename_sources:
            continue
        elif op.before is None:
            plan.steps.append(Step("delete", op.path))
        else:
            try:
                data = entry.blob_path(op.before.sha256).read_bytes()
            except OSError as exc:
                raise UndoError(
                    f'Cannot undo "{entry.label}": the saved old contents of {op.path} '
                    f"cannot be read ({fsutil.os_error_text(exc)}). Nothing was changed.",
                    [(op.path, "saved old contents unreadable")],
                ) from None
            if sha256_bytes(data) != op.before.sha256:
                raise UndoError(
                    f'Cannot undo "{entry.label}": the saved old contents of {op.path} are '
                    "damaged. Nothing was changed.",
                    [(op.path, "saved old contents damaged")],
                )
            plan.steps.append(Step("write", op.path))
            plan.new_bytes[op.path] = data
            plan.modes[op.path] = op.before.mode
            if current.uid is not None and current.gid is not None:
                plan.owners[op.path] = (current.uid, current.gid)
            dirs.update(dict.fromkeys(_missing_parents(root, op.path)))
    plan.created_dirs = list(dirs)
    return plan


def _missing_parents(root: Path, rel: str) -> list[str]:
    missing: list[str] = []
    folder = (root / rel).parent
    while folder != root and not folder.is_dir():
        missing.append(folder.relative_to(root).as_posix())
        folder = folder.parent
    return list(reversed(missing))


def undo_last(root: Path) -> UndoReceipt:
    """Undo the newest apply that is not undone yet.

    Every failure is an :class:`UndoError` (nothing to undo, files changed since the
    apply, lock held, write failed), naming the files; nothing is changed then.
    """
    root = Path(root).resolve()
    if not root.is_dir():
        raise UndoError(f"Workspace {root} is not a folder.", [(str(root), "not a folder")])
    try:
        return _undo_last(root)
    except ApplyError as exc:
        raise as_undo_error(exc) from None


def _undo_last(root: Path) -> UndoReceipt:
    with workspace_lock(root):
        recovered = recover_locked(root)
        good, bad = _complete_entries(root)
        candidates = _undoable(good)
        newest_bad = [(f, e) for f, e in bad if not candidates or f.name > candidates[0].id]
        if newest_bad:
            folder, exc = newest_bad[-1]
            aside = entries.move_aside(root, folder, "corrupt")
            raise UndoError(
                f"The newest journal entry {folder.name} is damaged ({exc}); moved it to "
                f"{aside} and changed nothing. Run undo again to undo the apply before it.",
                [(folder.name, str(exc))],
            )
        if not candidates:
            raise UndoError(
                f"Nothing to undo in {root}: the journal holds no applied action that is "
                "not undone yet.",
            )
        entry = candidates[0]
        plan = _undo_plan(root, entry)
        undo_entry = transaction.run(root, plan)
        for rel in reversed(entry.created_dirs):
            # Someone put files there since: keep it.
            with contextlib.suppress(OSError):
                (root / rel).rmdir()
        prune(root)
    files = list(entry.files)
    message = f"Undid: {entry.label} ({count(len(files), 'file')}: {', '.join(files)})."
    return UndoReceipt(
        entry_id=entry.id,
        label=entry.label,
        files=files,
        message=message,
        undo_entry_id=undo_entry.id,
        recovered=tuple(recovered),
    )


def prune(root: Path, keep: int = KEEP_APPLIES) -> None:
    """Drop the oldest complete entries beyond ``keep`` applies (their undos go with them)."""
    good, _ = _complete_entries(root)
    applies = [e for e in good if e.kind in UNDOABLE_KINDS]
    if len(applies) <= keep:
        return
    dropped = {e.id for e in applies[: len(applies) - keep]}
    for e in good:
        if (e.id in dropped or (e.kind == "undo" and e.undoes in dropped)) and e.folder:
            entries.remove_entry(e.folder)


# -- writes an outside agent makes itself (ACP: Claude Code, Codex) --------------------
#
# The agent, not redline, writes the file once a person allowed it. Before allowing,
# ``begin_external`` journals the file's pre-image as an unfinished entry of kind
# ``external``; when the agent's tool call ends, ``finish_external`` records what is on
# disk as the entry's after-state and marks it done, so ``redline undo`` reverts it.
# Recovery completes an unfinished external entry the same way instead of rolling it
# back: the person approved the agent's write.


@dataclass(frozen=True)
class ExternalOutcome:
    entry_id: str
    changed: bool  # the file differs from its pre-image (the entry stays, undoable)
    as_approved: bool  # the file is exactly what the person approved
    message: str


def begin_external(
    root: Path,
    rel: str,
    *,
    label: str,
    source_tool_name: str,
    approved_sha256: str | None,
    action_id: str | None = None,
) -> str:
    """Journal ``rel``'s pre-image before an agent writes it; return the entry id."""
    root = Path(root).resolve()
    target = paths.resolve_inside(root, rel)
    with workspace_lock(root):
        recover_locked(root)
        current = fsutil.read_current(target)
        if current.kind not in ("missing", "file") or (
            current.kind == "file" and current.data is None
        ):
            raise ApplyError(
                f"Cannot journal {rel} before the agent writes it: it is not a regular "
                "text file redline can keep a copy of.",
                [(rel, "not a regular file")],
            )
        before = None
        blobs: dict[str, bytes] = {}
        if current.kind == "file" and current.data is not None and current.sha256:
            before = FileState(current.sha256, current.mode)
            blobs[current.sha256] = current.data
        after = None if approved_sha256 is None else FileState(approved_sha256, current.mode)
        entry = Entry(
            id=entries.next_entry_id(root),
            kind="external",
            label=label,
            files=[rel],
            ops=[PathOp(rel, before, after)],
            steps=[],
            source_tool_name=source_tool_name,
            action_id=action_id,
            time=datetime.now(UTC).isoformat(),
        )
        entries.write_entry(root, entry, blobs, lambda _description: None)
    return entry.id


def finish_external(root: Path, entry_id: str) -> ExternalOutcome:
    """Record what the agent wrote (or remove the entry if it wrote nothing)."""
    root = Path(root).resolve()
    with workspace_lock(root):
        entry = entries.load_entry(journal_dir(root) / entry_id)
        if entry.kind != "external":
            raise CorruptEntry(f"journal entry {entry_id} is not an agent write")
        if entry.complete:
            return ExternalOutcome(entry_id, True, True, "already recorded")
        return _finish_external(root, entry)


def _finish_external(root: Path, entry: Entry) -> ExternalOutcome:
    assert entry.folder is not None
    op = entry.ops[0]
    target = paths.resolve_inside(root, op.path)
    current = fsutil.read_current(target)
    approved = op.after
    if entries.matches(current, op.before):
        entries.remove_entry(entry.folder)
        return ExternalOutcome(entry.id, False, False, f"{op.path} was not changed.")
    after = None
    if current.kind == "file" and current.sha256 is not None:
        after = FileState(current.sha256, current.mode)
    as_approved = (
        after is not None and approved is not None and after.sha256 == approved.sha256
    ) or (after is None and approved is None)
    entry.ops = [PathOp(op.path, op.before, after)]
    payload = json.dumps(entry.to_dict(), indent=1, ensure_ascii=False).encode("utf-8")
    temp = entry.folder / (entries.ENTRY_FILE + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp)
    fsutil.write_new_file(temp, payload, 0o600)
    os.replace(temp, entry.folder / entries.ENTRY_FILE)
    fsutil.fsync_dir(entry.folder)
    entries.mark_done(entry)
    how = "as approved" if as_approved else "differently from what was approved"
    return ExternalOutcome(
        entry.id, True, as_approved, f"{op.path} changed {how} (journal entry {entry.id})."
    )
