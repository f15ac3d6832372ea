"""The apply journal: crash recovery, undo and the undo history.

Every apply and every undo is a journal entry under ``.redline/journal/`` (see
:mod:`redline.workspace.entries`). An entry without its ``done`` marker was interrupted:
:func:`recover` rolls it back. A complete ``apply`` entry can be undone, newest first; the
undo is a transaction of its own (kind ``undo``, pointing at the apply it reverses) and is
itself not undoable: undoing again reverses the next older apply.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from redline.workspace import entries, fsutil, paths, transaction
from redline.workspace.dirfd import DirFds
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
from redline.workspace.state import StateFolderError, aside_dir, ensure_state_dir, journal_dir

__all__ = [
    "ExternalOutcome",
    "HistoryItem",
    "ListedChange",
    "UndoError",
    "UndoReceipt",
    "begin_external",
    "ensure_state_dir",
    "finish_external",
    "prune",
    "recover",
    "remove_foreign",
    "set_aside",
    "undo_entry",
    "undo_history",
    "undo_last",
    "undo_list",
]

# Complete applies kept for undo, at least (up to a fifth more wait for the next prune; the
# promise is at least ten).
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
    # The pending action the undone apply came from (``pa-7``; None for older entries).
    action_id: str | None = None


@dataclass(frozen=True)
class HistoryItem:
    entry_id: str
    label: str
    files: list[str]
    time: datetime
    source_tool_name: str = ""
    action_id: str | None = None
    via: dict[str, str] = field(default_factory=dict)


def _needs_recovery(root: Path) -> bool:
    """Is there an unfinished, half-written or foreign entry? (reads, never writes)"""
    names = entries.journal_names(root)
    if not names:
        return False
    for name in names:
        if name.startswith(entries.TMP_PREFIX):
            return True
        try:
            entry = entries.load_entry(root, name)
        except entries.CorruptEntry:
            return True
        if not entry.complete:
            return True
    return False


def recover(root: Path) -> list[str]:
    """Roll back interrupted applies and undos; return what was done ([] if nothing).

    Cheap when the journal is clean (one listing and a signature check per entry, no
    lock). Never raises for a damaged journal: damaged entries are moved to
    ``.redline/journal-aside/``; entries no key of this user verifies (signed with another
    key, or not by this user's redline) are never acted on and never moved unless the user
    asks (:func:`set_aside`): they are reported, as "N entries signed with another key",
    every time, and count again once the key that signed them is back.
    """
    root = Path(root).resolve()
    try:
        if not _needs_recovery(root):
            return []
        with workspace_lock(root, wait=RECOVERY_LOCK_WAIT_SECONDS):
            return recover_locked(root)
    except LockError:
        # The other process holds the lock, so its entry is live, not a crash leftover.
        return [
            "Recovery postponed: another redline process is changing files in this "
            "workspace; its unfinished journal entry is not a crash leftover."
        ]
    except StateFolderError as exc:
        return [f"Recovery could not run: {exc}"]
    except ApplyError as exc:
        return [f"Recovery could not run: {exc}"]
    except OSError as exc:
        return [f"Recovery could not run: {fsutil.os_error_text(exc)}."]


def _label(entry: Entry) -> str:
    what = "undo of" if entry.kind == "undo" else "apply of"
    return f'interrupted {what} "{entry.label}" (journal entry {entry.id})'


def recover_locked(root: Path, *, full: bool = True) -> list[str]:
    """:func:`recover` for a caller that already holds the workspace lock.

    ``full=False`` (every apply) skips complete entries: a foreign complete entry is
    never acted on anyway and is reported by the next full recovery or undo.
    """
    messages: list[str] = []
    try:
        names = entries.journal_names(root)
    except OSError as exc:
        return [f"Recovery could not read the journal: {exc}"]
    done = set() if full else entries.done_names(root, names)
    foreign: list[str] = []
    for name in names:
        if name in done:
            continue
        try:
            messages.extend(_recover_one(root, name))
        except entries.ForeignEntry:
            foreign.append(name)
        except OSError as exc:
            messages.append(f"Could not recover journal entry {name}: {fsutil.os_error_text(exc)}.")
    if foreign and full:
        messages.append(foreign_message(foreign))
    return messages


def foreign_message(names: list[str]) -> str:
    """What recovery says about entries it cannot verify (left in place, never acted on)."""
    n = len(names)
    what = "1 entry" if n == 1 else f"{n} entries"
    they = "It was" if n == 1 else "They were"
    return (
        f"Not acted on: {what} signed with another key (or not written by your redline for "
        f"this workspace) in .redline/journal: {', '.join(names)}. {they} left in place and "
        "count again with the key that signed them; `redline undo --list` shows them, "
        "`redline undo --set-aside ID` moves one to .redline/journal-aside/ and "
        "`redline undo --remove ID` deletes one."
    )


def _recover_one(root: Path, name: str) -> list[str]:
    if name.startswith(entries.TMP_PREFIX):
        # Journal entries are moved into place before the first file changes: this one
        # never touched the workspace and only holds copies of files as they still are.
        entries.remove_entry(root, name)
        return [f"Removed an incomplete journal entry ({name}); no file had been changed."]
    try:
        entry = entries.load_entry(root, name)
    except entries.ForeignEntry:
        raise  # never moved without being asked: the key that signed it may come back
    except CorruptEntry as exc:
        aside = entries.move_aside(root, name, "corrupt")
        return [
            f"Journal entry {name} is damaged ({exc}); moved it to {aside} without "
            "changing any file. Check the files it lists if an apply was interrupted."
        ]
    if entry.complete:
        return []
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
        aside = entries.move_aside(root, name, "conflict")
        parts.append(
            f"left alone {describe(result.conflicts)}: it matches neither the old nor the "
            f"new contents; the old contents are kept in {aside}"
        )
    else:
        entries.remove_entry(root, name)
    if not parts:
        parts.append("no file had been changed yet")
    return [f"Rolled back the {_label(entry)}: {'; '.join(parts)}."]


def _complete_entries(root: Path) -> tuple[list[Entry], list[tuple[Path, CorruptEntry]]]:
    good: list[Entry] = []
    bad: list[tuple[Path, CorruptEntry]] = []
    for folder, loaded in entries.iter_entries(root):
        if isinstance(loaded, CorruptEntry):
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
        HistoryItem(
            e.id, e.label, list(e.files), e.when, e.source_tool_name, e.action_id, dict(e.via)
        )
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


def _check_undo(dirs: DirFds, root: Path, entry: Entry) -> dict[str, fsutil.Current]:
    """The current state of every path of ``entry``, or UndoError naming what changed."""
    problems: list[tuple[str, str]] = []
    currents: dict[str, fsutil.Current] = {}
    for op in entry.ops:
        try:
            paths.resolve_inside(root, op.path)
        except paths.ConfinementError as exc:
            problems.append((op.path, str(exc).removeprefix(f"{op.path}: ")))
            continue
        current = fsutil.read_current_at(dirs, op.path)
        if current.kind == "error":
            problems.append((op.path, current.error))
            continue
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
    return currents


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
    with DirFds(root) as dirs:
        currents = _check_undo(dirs, root, entry)
    op_paths = {op.path for op in entry.ops}
    renamed: dict[str, str] = {}
    for s in entry.steps:
        if s.do != "rename":
            continue
        # Both ends of a rename must be paths the entry records (and so were confined).
        if s.source not in op_paths or s.path not in op_paths:
            raise UndoError(
                f'Cannot undo "{entry.label}": its journal entry names a rename outside the '
                "files it records. Nothing was changed.",
                [(s.path, "rename source not recorded")],
            )
        renamed[s.path] = s.source
    rename_sources = set(renamed.values())
    dirs_needed: dict[str, None] = {}
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
            dirs_needed.update(dict.fromkeys(_missing_parents(root, renamed[op.path])))
        elif op.path in rename_sources:
            continue
        elif op.before is None:
            plan.steps.append(Step("delete", op.path))
        else:
            try:
                data = entries.read_blob(entry, op.before.sha256)
            except (OSError, CorruptEntry) as exc:
                cause = fsutil.os_error_text(exc) if isinstance(exc, OSError) else str(exc)
                raise UndoError(
                    f'Cannot undo "{entry.label}": the saved old contents of {op.path} '
                    f"cannot be read ({cause}). Nothing was changed.",
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
            plan.modes[op.path] = fsutil.safe_mode(
                op.before.mode, current.mode if current.kind == "file" else None
            )
            if current.uid is not None and current.gid is not None:
                plan.owners[op.path] = (current.uid, current.gid)
            dirs_needed.update(dict.fromkeys(_missing_parents(root, op.path)))
    plan.created_dirs = list(dirs_needed)
    return plan


def _missing_parents(root: Path, rel: str) -> list[str]:
    missing: list[str] = []
    folder = (root / rel).parent
    while folder != root and not os.path.lexists(folder):
        missing.append(folder.relative_to(root).as_posix())
        folder = folder.parent
    return list(reversed(missing))


def _check_root(root: Path) -> Path:
    root = Path(root).resolve()
    if not root.is_dir():
        raise UndoError(f"Workspace {root} is not a folder.", [(str(root), "not a folder")])
    return root


def undo_last(root: Path) -> UndoReceipt:
    """Undo the newest apply that is not undone yet.

    Every failure is an :class:`UndoError` (nothing to undo, files changed since the
    apply, lock held, write failed, unsafe state folder), naming the files; nothing is
    changed then.
    """
    return undo_entry(root, None)


def undo_entry(root: Path, entry_id: str | None) -> UndoReceipt:
    """Undo the apply ``entry_id`` (None: the newest not undone yet), if its files are unchanged.

    Older applies can be undone while newer ones stay, as long as every file the apply
    touched still has the contents it left; otherwise :class:`UndoError` names the files.
    """
    root = _check_root(root)
    try:
        return _undo(root, entry_id)
    except ApplyError as exc:
        raise as_undo_error(exc) from None
    except StateFolderError as exc:
        raise UndoError(str(exc), [(exc.component, "unsafe state folder")]) from None
    except OSError as exc:
        raise UndoError(
            f"Cannot undo: {fsutil.os_error_text(exc)}. Nothing was changed.",
            [(".redline/journal", fsutil.os_error_text(exc))],
        ) from None


def _undo(root: Path, entry_id: str | None) -> UndoReceipt:
    with workspace_lock(root):
        recovered = recover_locked(root)
        good, bad = _complete_entries(root)
        candidates = _undoable(good)
        if entry_id is None:
            newest_bad = [(f, e) for f, e in bad if not candidates or f.name > candidates[0].id]
            if newest_bad:
                folder, exc = newest_bad[-1]
                if isinstance(exc, entries.ForeignEntry):
                    raise UndoError(
                        f"The newest journal entry {folder.name} cannot be used ({exc}); it is "
                        "left in place and nothing was changed. It counts again with the key "
                        "that signed it. To undo an older change anyway, name it (`redline "
                        "undo ID`, see `redline undo --list`), or set this entry aside with "
                        f"`redline undo --set-aside {folder.name}`.",
                        [(folder.name, str(exc))],
                    )
                aside = entries.move_aside(root, folder, "corrupt")
                raise UndoError(
                    f"The newest journal entry {folder.name} cannot be used ({exc}); moved it "
                    f"to {aside} and changed nothing. Run undo again to undo the apply before it.",
                    [(folder.name, str(exc))],
                )
            if not candidates:
                raise UndoError(
                    f"Nothing to undo in {root}: the journal holds no applied action that is "
                    "not undone yet.",
                )
            entry = candidates[0]
        else:
            found = [e for e in candidates if e.id == entry_id]
            if not found:
                raise UndoError(
                    _why_not_undoable(root, good, entry_id), [(entry_id, "not undoable")]
                )
            entry = found[0]
        plan = _undo_plan(root, entry)
        undo_entry_ = transaction.run(root, plan)
        with DirFds(root) as dirs:
            # Someone put files there since: keep it.
            entries.remove_created_dirs(root, dirs, entry.created_dirs)
        prune(root)
    files = list(entry.files)
    message = f"Undid: {entry.label} ({count(len(files), 'file')}: {', '.join(files)})."
    return UndoReceipt(
        entry_id=entry.id,
        label=entry.label,
        files=files,
        message=message,
        undo_entry_id=undo_entry_.id,
        recovered=tuple(recovered),
        action_id=entry.action_id,
    )


def _why_not_undoable(root: Path, good: list[Entry], entry_id: str) -> str:
    for e in good:
        if e.id != entry_id:
            continue
        if e.kind == "undo":
            return (
                f"Journal entry {entry_id} is an undo; undos cannot be undone. Nothing was changed."
            )
        return f'The apply {entry_id} ("{e.label}") was already undone. Nothing was changed.'
    if _unusable_in_place(root, entry_id):
        return (
            f"Journal entry {entry_id} cannot be verified with your key (signed with another "
            "key, or not written by your redline for this workspace) and is never acted on; "
            "`redline undo --list` shows it. Nothing was changed."
        )
    if any(name.startswith(f"{entry_id}-") for name in entries.aside_names(root)):
        return (
            f"Journal entry {entry_id} was moved aside (damaged or not written by your "
            "redline) and is never acted on; `redline undo --list` shows it. Nothing was changed."
        )
    return (
        f"No applied change {entry_id} in {root}; `redline undo --list` shows what can be "
        "undone. Nothing was changed."
    )


@dataclass(frozen=True)
class ListedChange:
    """One line of ``redline undo --list``: an applied change or an entry never acted on."""

    entry_id: str
    label: str
    files: list[str]
    time: datetime | None
    undoable: bool
    why_not: str = ""
    foreign: bool = False
    source_tool_name: str = ""
    action_id: str | None = None
    via: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.foreign:
            return "foreign"
        return "undoable" if self.undoable else "blocked"


def undo_list(root: Path) -> list[ListedChange]:
    """Applied changes newest first (can each be undone now? why not?), then entries never
    acted on (foreign or damaged, kept in ``.redline/journal-aside/``). Read-only."""
    root = _check_root(root)
    good, bad = _complete_entries(root)
    out: list[ListedChange] = []
    with DirFds(root) as dirs:
        for e in _undoable(good):
            why = ""
            try:
                _check_undo(dirs, root, e)
            except UndoError as exc:
                why = describe(exc.problems)
            out.append(
                ListedChange(
                    e.id,
                    e.label,
                    list(e.files),
                    e.when,
                    not why,
                    why,
                    False,
                    e.source_tool_name,
                    e.action_id,
                    dict(e.via),
                )
            )
    for folder, problem in reversed(bad):
        out.append(ListedChange(folder.name, "", [], None, False, str(problem), True))
    for name in reversed(entries.aside_names(root)):
        if name.endswith(("-foreign", "-corrupt")) or "-foreign-" in name or "-corrupt-" in name:
            why = (
                "not written by your redline for this workspace; never acted on"
                if "-foreign" in name
                else "damaged; never acted on"
            )
            out.append(ListedChange(name, "", [], None, False, why, True))
    return out


def _unusable_in_place(root: Path, name: str) -> bool:
    """Is ``name`` an entry in ``.redline/journal/`` that cannot be verified or read?"""
    if not entries.ID_RE.match(name) or name not in entries.journal_names(root):
        return False
    try:
        entries.load_entry(root, name)
    except CorruptEntry:
        return True
    return False


def set_aside(root: Path, name: str) -> Path:
    """Move an entry that is never acted on (signed with another key, damaged) to
    ``.redline/journal-aside/<id>-foreign``, when the user asks; its files stay on disk."""
    root = _check_root(root)
    with workspace_lock(root):
        if not _unusable_in_place(root, name):
            raise UndoError(
                f"No journal entry {name} signed with another key in {root}'s journal; "
                "`redline undo --list` shows them (entries this key can verify are never "
                "set aside). Nothing was moved.",
                [(name, "no such foreign entry")],
            )
        return entries.move_aside(root, name, entries.FOREIGN)


def remove_foreign(root: Path, name: str) -> Path:
    """Delete an entry that is never acted on (foreign or damaged): ``ID`` or its aside name.

    Entries this user's redline wrote and that still count (applied changes) are refused:
    they are what undo works from.
    """
    root = _check_root(root)
    with workspace_lock(root):
        recover_locked(root)
        if _unusable_in_place(root, name):
            entries.remove_entry(root, name)
            return journal_dir(root) / name
        aside = entries.aside_names(root)
        matches = [n for n in aside if n == name or n.startswith(f"{name}-")]
        matches = [n for n in matches if "-foreign" in n or "-corrupt" in n]
        if not matches:
            raise UndoError(
                f"No foreign or damaged journal entry {name} in {root}; `redline undo --list` "
                "shows them. Nothing was removed.",
                [(name, "no such foreign entry")],
            )
        for n in matches:
            entries.remove_aside(root, n)
    return aside_dir(root) / matches[0]


def prune(root: Path, keep: int = KEEP_APPLIES) -> None:
    """Drop the oldest complete entries beyond ``keep`` applies (their undos go with them).

    Pruning reads and verifies every entry, so it waits until there are a fifth more
    entries than ``keep`` (60 for 50) and then goes back down to ``keep``: one apply in ten
    pays for it, not every apply once the journal is full (a long-lived workspace's
    decision stays as fast as a new one's; docs/performance.md, issue 44)."""
    if len(entries.entry_folders(root)) <= keep + keep // 5:
        return  # cheap: not enough entries to be worth a prune
    good, _ = _complete_entries(root)
    applies = [e for e in good if e.kind in UNDOABLE_KINDS]
    if len(applies) <= keep:
        return
    dropped = {e.id for e in applies[: len(applies) - keep]}
    for e in good:
        if (e.id in dropped or (e.kind == "undo" and e.undoes in dropped)) and e.folder:
            entries.remove_entry(root, e.folder.name)


# -- writes an outside agent makes itself (ACP: Claude Code, Codex) --------------------
#
# The agent, not redline, writes the file once a person allowed it. Before allowing,
# ``begin_external`` journals the file's pre-image as an unfinished entry of kind
# ``external``. When the agent's tool call ends, ``finish_external`` records what is on
# disk: a new, complete ``external`` entry (before: the pre-image, after: the file now)
# replaces the unfinished one, so ``redline undo`` reverts it. Recovery finishes an
# unfinished external entry the same way instead of rolling it back: the person approved
# the agent's write. (A crash between writing the new entry and removing the old one can
# record the write twice; undoing the second record then finds nothing to change.)


@dataclass(frozen=True)
class ExternalOutcome:
    entry_id: str
    changed: bool  # the file differs from its pre-image (an undoable entry records it)
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
    """Journal ``rel``'s pre-image before an agent writes it; return the entry id.

    The entry names the real path (a symlinked folder resolved); ``via`` keeps ``rel``.
    """
    from redline.workspace.realpath import real_relative

    root = Path(root).resolve()
    asked, rel = rel, real_relative(root, rel, follow=True)
    target = paths.resolve_inside(root, rel)
    with workspace_lock(root):
        recover_locked(root, full=False)
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
            via={rel: asked} if asked != rel else {},
        )
        entries.write_entry(root, entry, blobs, lambda _description: None)
    return entry.id


def finish_external(root: Path, entry_id: str) -> ExternalOutcome:
    """Record what the agent wrote (or drop the entry if it wrote nothing)."""
    root = Path(root).resolve()
    with workspace_lock(root):
        try:
            entry = entries.load_entry(root, entry_id)
        except FileNotFoundError:
            return ExternalOutcome(entry_id, False, False, "already recorded by recovery")
        if entry.kind != "external":
            raise CorruptEntry(f"journal entry {entry_id} is not an agent write")
        if entry.complete:
            return ExternalOutcome(entry_id, True, True, "already recorded")
        return _finish_external(root, entry)


def _finish_external(root: Path, entry: Entry) -> ExternalOutcome:
    op = entry.ops[0]
    target = paths.resolve_inside(root, op.path)
    current = fsutil.read_current(target)
    approved = op.after
    if entries.matches(current, op.before):
        entries.remove_entry(root, entry.id)
        return ExternalOutcome(entry.id, False, False, f"{op.path} was not changed.")
    after = None
    if current.kind == "file" and current.sha256 is not None:
        after = FileState(current.sha256, current.mode)
    as_approved = (
        after is not None and approved is not None and after.sha256 == approved.sha256
    ) or (after is None and approved is None)
    blobs: dict[str, bytes] = {}
    if op.before is not None:
        blobs[op.before.sha256] = entries.read_blob(entry, op.before.sha256)
    record = Entry(
        id=entries.next_entry_id(root),
        kind="external",
        label=entry.label,
        files=list(entry.files),
        ops=[PathOp(op.path, op.before, after)],
        steps=[],
        source_tool_name=entry.source_tool_name,
        action_id=entry.action_id,
        time=datetime.now(UTC).isoformat(),
        via=dict(entry.via),
    )
    entries.write_entry(root, record, blobs, lambda _description: None)
    entries.mark_done(record)
    entries.remove_entry(root, entry.id)
    how = "as approved" if as_approved else "differently from what was approved"
    return ExternalOutcome(
        record.id, True, as_approved, f"{op.path} changed {how} (journal entry {record.id})."
    )
