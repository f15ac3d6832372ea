"""One workspace as a review source (``review.source.ReviewSource``).

Lists the workspace queue's records as listed actions (from the queue's index: no Preview
is read until :meth:`WorkspaceSource.view`), and decides, edits, re-previews and undoes
through a session's calls (:class:`SessionCalls`, which the dashboard's session and the
drivers' sessions offer; their ``decide`` is ``ReviewSession.decide``, the one decision
path), or, with no session (a workspace nobody has open: issue 45's all-workspaces inbox),
straight through the queue's claim (``review.decide``) — the same code ``redline pending``
runs.

With a session, the session's own actions are listed too (the workspace dashboard,
``redline``): each in its queue position as the session holds it (its staleness the
session's own checks), and those no queue lists — a session without a workspace queue, or
one pushed a moment ago — on top (:func:`~redline.review.source.listed_from_action`).

What another process's action allows comes from its record (:func:`record_allows`): an
owner action (a hook's held call) is decided whole unless its process serves parts, an
orphaned one can only be discarded, a hook's cannot be re-previewed.

Listing a long queue again is cheap: a record whose object (the queue's index shares
unchanged records) and files (by ``stat``) are as at the last listing keeps its row
without a staleness check, and the files' hashes of the last listing are reused for the
files whose ``stat`` did not change (issue 44).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import stat
import threading
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from redline.review.source import (
    ActionView,
    Capability,
    ListedAction,
    RowsCallback,
    SourceCapabilities,
    SourceOutcome,
    StatusCallback,
    WorkspaceRef,
    listed_from_action,
    listed_from_record,
)

if TYPE_CHECKING:
    from redline.review.resolve import EditOutcome, ResolveOutcome
    from redline.review.result import ToolResult
    from redline.review.session import Capabilities, Decision
    from redline.review.store import PendingAction, PendingActionStore
    from redline.workspace.preview import Preview
    from redline.workspace.queue import QueueRecord, WorkspaceQueue

log = logging.getLogger(__name__)

# Who decided, as a queue resolution's ``resolved_by`` names them, in words.
_DECIDERS = {
    "person": "a person elsewhere (redline pending or another dashboard)",
    "agent": "the agent",
    "recovery": "recovery after a crash",
}

#: What a session that cannot do something for its own actions says instead (an external
#: agent's session: ACP).
OWN_EXTERNAL = SourceCapabilities(
    parts=Capability.no(
        "An external agent's change resolves only as a whole: apply or discard all of it."
    ),
    edit=Capability.no(
        "An external agent's change cannot be edited before it lands: discard it with a "
        "reason and the agent hears why."
    ),
    repreview=Capability.no(
        "Re-preview is not available for an external agent's actions; discard it and "
        "ask the agent again."
    ),
)
NO_RULES = "This session takes no session rules."
NO_CHECKS = "This session runs no checks."


class SessionCalls(Protocol):
    """The blocking calls of a session that a workspace source decides through
    (``tui.protocol.SessionLike`` has them; their ``decide`` ends in
    ``ReviewSession.decide``)."""

    @property
    def store(self) -> PendingActionStore: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome: ...

    def edit(self, action_id: str, path: str, text: str) -> EditOutcome: ...

    def repreview(self, action_id: str) -> ToolResult: ...

    def undo(self) -> ToolResult: ...


def session_capabilities(capabilities: Capabilities, *, has_rules: bool) -> SourceCapabilities:
    """What a workspace offers through a session: every decision kind for the workspace's
    actions (each narrowed by its record or the session, :func:`record_allows`,
    :func:`session_allows`), undo, rules and checks as the session declares them."""
    return SourceCapabilities(
        undo=Capability() if capabilities.undo else Capability.no("This session cannot undo."),
        rules=Capability() if capabilities.rules and has_rules else Capability.no(NO_RULES),
        checks=Capability() if capabilities.checks else Capability.no(NO_CHECKS),
    )


def record_allows(record: QueueRecord, base: SourceCapabilities) -> SourceCapabilities:
    """What can be done to another process's queued action now: ``base`` narrowed by its
    record, with the reason for each thing that cannot."""
    from redline.review.decide import hook_waiting_text, owned_by_hook
    from redline.review.queued import parts_refusal

    parts = parts_refusal(record)
    if parts:
        parts += "."
    if record.applied_by == "preview":
        return base.narrowed(parts=parts)
    if owned_by_hook(record):
        return base.narrowed(parts=parts, repreview=f"{hook_waiting_text(record.id)}.")
    whole = (
        f"{record.id} ({record.label}) is applied by the process that queued it: "
        "it cannot be {}; apply or discard it as a whole."
    )
    return base.narrowed(
        parts=parts, edit=whole.format("edited"), repreview=whole.format("re-previewed")
    )


def session_allows(capabilities: Capabilities, base: SourceCapabilities) -> SourceCapabilities:
    """``base`` narrowed by what a session offers for its own actions."""
    return base.narrowed(
        parts="" if capabilities.parts else OWN_EXTERNAL.refusal("parts"),
        edit="" if capabilities.edit else OWN_EXTERNAL.refusal("edit"),
        repreview="" if capabilities.repreview else OWN_EXTERNAL.refusal("repreview"),
    )


def resolution_text(queue: WorkspaceQueue, action_id: str) -> str:
    """How ``action_id`` left the queue, from its logged resolution when there is one:
    ``pa-3 was discarded by a person elsewhere (...) (reason: not needed).``"""
    resolution = None
    try:
        resolution = queue.resolution(action_id)
    except Exception as exc:  # a damaged log only loses the detail
        log.warning("reading the resolution of %s failed: %s", action_id, exc)
    if resolution is None:
        return f"{action_id} is no longer pending (decided elsewhere)."
    decision = resolution.decision
    done = {"apply": "applied", "discard": "discarded"}.get(decision, decision)
    if decision == "replaced" and resolution.replaced_by:
        done = f"replaced by {resolution.replaced_by}"
    by = resolution.resolved_by
    if by == "rule":
        who = f"rule {resolution.rule}" if resolution.rule else "a review rule"
    else:
        who = _DECIDERS.get(by, by)
    reason = f" (reason: {resolution.reason})" if resolution.reason else ""
    return f"{action_id} was {done} by {who}{reason}."


#: At most this many records are read one by one to bring a listing up to date after a
#: decision (arrivals, the actions it touched); more, and the whole queue is listed.
RELIST_LIMIT = 64

#: One listed record as the last listing made it: what it was listed by, its row and the
#: record itself (what a decision, a view and a lazy Preview read from).
_Listed = tuple[tuple[object, ...], ListedAction, "QueueRecord"]


T = TypeVar("T")


def spliced(rows: Sequence[T], edits: dict[int, T | None]) -> list[T] | None:
    """``rows`` with each row whose ``id()`` is a key of ``edits`` replaced by its value (left
    out where None), looked for from the top until all are found (None: one is not there)."""
    found: dict[int, T | None] = {}
    if edits:
        for at, row in enumerate(rows):
            if id(row) in edits:
                found[at] = edits[id(row)]
                if len(found) == len(edits):
                    break
        else:
            return None
    result = list(rows)
    for at in sorted(found, reverse=True):
        new = found[at]
        if new is None:
            del result[at]
        else:
            result[at] = new
    return result


@dataclasses.dataclass(frozen=True, slots=True)
class RowsChange:
    """``after`` is ``before`` without the rows of ``gone`` and with each row of
    ``changed`` (read again) in its place (see :meth:`WorkspaceSource.change`)."""

    before: Sequence[ListedAction]
    after: Sequence[ListedAction]
    gone: frozenset[str]
    changed: dict[str, ListedAction]


class WorkspaceSource:
    """The actions of one workspace as one review source (see the module docstring).

    ``queue``: the workspace queue (None: a session of its own, whose actions only it
    lists); ``session``: the session whose calls decide (None: the queue's claim);
    ``workspace``: the workspace's id and path, put on every row (a source spanning
    workspaces lists by ``pa-N@WSID`` with ``qualified``); ``rules``: whether session
    rules can be added here; ``remember``: keep the files' hashes in the queue's memo for
    the next process's listing (the dashboard keeps them for itself instead)."""

    def __init__(
        self,
        queue: WorkspaceQueue | None,
        *,
        session: SessionCalls | None = None,
        workspace: WorkspaceRef | None = None,
        qualified: bool = False,
        rules: bool = True,
        remember: bool = True,
    ) -> None:
        if queue is None and session is None:
            raise ValueError("a workspace source needs a queue or a session")
        self.queue = queue
        self.session = session
        self.workspace = workspace
        self.qualified = qualified
        self.remember = remember
        self._capabilities = (
            SourceCapabilities(rules=Capability.no(NO_RULES))
            if session is None
            else session_capabilities(session.capabilities, has_rules=rules)
        )
        # The last listing: each other process's record and its row, by local id.
        self._records: dict[str, _Listed] = {}
        # The session's own actions as last listed: the action object and its row.
        self._own_rows: dict[str, tuple[PendingAction, ListedAction]] = {}
        # File -> (its stat, its hash) at the last listing, for the staleness checks.
        self._file_hashes: dict[str, tuple[tuple[int, ...], str | None]] = {}
        # The rows the last listing returned, top first (None: nothing listed yet, or the
        # last listing cannot be brought up to date: see relisted()).
        self._last: list[ListedAction] | None = None
        # Workspace file -> listed records on it, for the _records it was made from.
        self._files_map: dict[str, set[str]] = {}
        self._files_mapped: dict[str, _Listed] | None = None
        # Each listed record's file identity as listed (see relisted()).
        self._identities: dict[str, tuple[int, ...]] = {}
        # The listed records' file names (None: not made yet; see relisted()), and the
        # actions folder's stat when they were last compared with its names.
        self._names: set[str] | None = None
        self._folder: tuple[int, ...] | None = None
        # How relisted()'s last rows differ from the rows before them (see change()).
        self._change: RowsChange | None = None

    @property
    def title(self) -> str:
        if self.queue is not None:
            return str(self.queue.root)
        return self.workspace.path if self.workspace is not None else "this session"

    @property
    def capabilities(self) -> SourceCapabilities:
        return self._capabilities

    @property
    def spans_workspaces(self) -> bool:
        return False

    def local_id(self, action_id: str) -> str:
        """``pa-N`` of ``action_id`` (``pa-N`` or ``pa-N@WSID``)."""
        return action_id.partition("@")[0]

    # -- listing -----------------------------------------------------------------------
    def listed(self) -> Sequence[ListedAction]:
        own: Sequence[PendingAction] = ()
        if self.session is not None:
            own = self.session.store.snapshot()
        by_id = {action.id: action for action in own}
        queue = self.queue
        folder = queue.actions_folder_stat() if queue is not None else None  # before its names
        records = self._records_of(queue) if queue is not None else []
        rows: list[ListedAction] = []
        seen: set[str] = set()
        if queue is not None:
            hashes, stats = self._known_hashes(queue, records, by_id)
            unchanged = set(hashes)  # files whose stat is as at the last listing
            for record in records:
                mine = by_id.get(record.id)
                if mine is not None:
                    rows.append(self._own_row(mine))
                else:
                    rows.append(self._record_row(queue, record, hashes, unchanged))
                seen.add(record.id)
            self._file_hashes = {
                rel: (stats[rel], value) for rel, value in hashes.items() if rel in stats
            }
            if self.remember:
                queue.remember_hashes()
        self._records = {
            key: listed for key, listed in self._records.items() if key in seen and key not in by_id
        }
        # Own actions the queue does not list (yet) stay on top, in the store's order.
        extra = [self._own_row(action) for action in own if action.id not in seen]
        self._own_rows = {key: known for key, known in self._own_rows.items() if key in by_id}
        listed = [*extra, *rows]
        self._last = None
        self._names = None
        self._folder = folder
        self._change = None
        if queue is not None and not own and not self.qualified:
            # A record the index does not hold (its file too young to remember) has no
            # identity here: the next relisted() reads it again.
            self._identities = dict(queue.identities_of(records))
            self._by_file()  # here (a long queue's first listing is on a thread), not at y
            self._record_names()  # (the same)
            queue.map_files()  # (the same: the first decision's re-base looks files up)
            self._last = listed
        return listed

    def relisted(
        self,
        gone: Collection[str],
        paths: Collection[str],
        named: Collection[str] | None = None,
    ) -> Sequence[ListedAction] | None:
        """The last listing brought up to date without listing the whole queue again (issue
        44): after this process decided ``gone`` or the queue's watcher reported a change,
        with ``paths`` the workspace files written since (by the decision, or as the
        workspace's watcher reported them).

        ``named``: the ids of the records the queue's watcher named since the last listing
        (:func:`~redline.workspace.queue.changed_records`; None: not known). With them only
        those record files are looked at (one ``stat`` each), and the actions folder's
        names are compared with the listed ones (one ``listdir``, when the folder changed):
        a record pushed or removed whose name the watcher lost (watchfiles drops the
        kernel's overflow notice) still arrives or leaves. Without them every record file's
        identity is looked at (:meth:`~redline.workspace.queue.WorkspaceQueue.identities`).
        The records that arrived, left or were rewritten, and the listed actions whose
        files include any of ``paths`` (their staleness may have changed), are read one by
        one and checked again; every other row is kept.

        The rows are the source's own (read them, never change them); when nothing changed
        they are the very sequence returned last time.

        None when it cannot be done that way -- nothing listed yet, the session has actions
        of its own, more than :data:`RELIST_LIMIT` records to read, or one of them cannot be
        used (the whole listing reports it): then :meth:`listed`."""
        from redline.workspace.queue import QueueError
        from redline.workspace.queue.base import record_name
        from redline.workspace.queue.records import id_number

        queue = self.queue
        last = self._last
        if queue is None or last is None or self._own_rows:
            return None
        if self.session is not None and self.session.store.has_pending:
            return None
        listed = self._identities
        known = self._records
        decided = {self.local_id(key) for key in gone}
        try:
            if named is None:
                now = queue.identities(listed)
                left = known.keys() - now.keys()
            else:
                looked = set(named) | decided
                left = set()
                files = expected = set()
                # A decision's re-read leaves it to the next (its writes' report comes after).
                folder = self._folder if decided else queue.actions_folder_stat()
                if folder is None or folder != self._folder:
                    files = set(queue.record_files())
                    expected = self._record_names()
                self._folder = folder
                if files != expected:
                    for name in files - expected:
                        action_id = name[:-5]
                        if name.endswith(".json") and id_number(action_id) is not None:
                            looked.add(action_id)  # arrived, its name perhaps not told
                    left = {name[:-5] for name in expected - files}
                looked -= left
                now = queue.identities_named(looked)
                left.update(key for key in looked if key in known and key not in now)
        except OSError as exc:
            log.warning("reading the workspace queue failed: %s", exc)
            return None
        reread = {key for key, found in now.items() if listed.get(key) != found}
        if paths:
            by_file = self._by_file()
            reread.update(key for rel in paths for key in by_file.get(rel, ()) if key in known)
        reread.update(decided)
        reread = {key for key in reread if key in now or (key in known and key not in left)}
        if len(reread) > RELIST_LIMIT:
            return None
        if not reread and not left:
            return last  # nothing changed: the very list last returned
        fresh: list[QueueRecord] = []
        try:
            for action_id in reread:
                record, key = queue.read_identified(action_id)
                if record is not None and key is not None:
                    fresh.append(record)
                    listed[action_id] = key
        except (QueueError, OSError) as exc:
            log.info("listing the queue again: %s", exc)
            return None
        before = {key: known[key][2].position for key in reread if key in known}
        old_rows = {key: known[key][1] for key in left | reread if key in known}
        hashes, stats = self._known_hashes(queue, fresh, {})
        unchanged = set(hashes)
        changed = {
            record.id: self._record_row(queue, record, hashes, unchanged) for record in fresh
        }
        for rel, value in hashes.items():
            if rel in stats:
                self._file_hashes[rel] = (stats[rel], value)
        if self.remember:
            queue.remember_hashes()
        if self._files_mapped is known:
            for record in fresh:
                for rel in record.files:
                    self._files_map.setdefault(rel, set()).add(record.id)
        departed = left | (reread - changed.keys())
        names = self._names
        for action_id in departed:
            known.pop(action_id, None)
            listed.pop(action_id, None)
            if names is not None:
                names.discard(record_name(action_id))
        edits: dict[str, ListedAction | None] = {key: None for key in departed if key in old_rows}
        edits.update((key, row) for key, row in changed.items() if key in old_rows)
        rows = spliced(last, {id(old_rows[key]): new for key, new in edits.items()})
        if rows is None:
            rows = [changed.get(row.id, row) for row in last if row.id not in departed]
        shown = {row.id for row in rows} if len(changed) > len(before) else set()
        arrived = [row for key, row in changed.items() if key not in before and key not in shown]
        if names is not None:
            names.update(record_name(row.id) for row in arrived)
        moved = any(known[key][2].position != at for key, at in before.items() if key in known)
        if arrived or moved:
            rows.extend(arrived)
            rows.sort(
                key=lambda row: (known[row.id][2].position, id_number(row.id) or 0), reverse=True
            )
        self._change = (
            None if arrived or moved else RowsChange(last, rows, frozenset(departed), changed)
        )
        self._last = rows
        return rows

    def change(self, rows: Sequence[ListedAction]) -> RowsChange | None:
        """How ``rows`` (relisted()'s last answer) differ from the rows relisted() or
        listed() returned before them, when only some left and some were read again in
        their place (None: anything else -- arrivals, a new order, a whole listing)."""
        change = self._change
        return change if change is not None and change.after is rows else None

    def _record_names(self) -> set[str]:
        """The record file names of the listed records (kept up to date by relisted())."""
        from redline.workspace.queue.base import record_name

        names = self._names
        if names is None:
            names = self._names = {record_name(key) for key in self._records}
        return names

    def _by_file(self) -> dict[str, set[str]]:
        """Workspace file -> the listed records on it (grown as records are listed: a
        record's files never change under its id; ids no longer listed are skipped)."""
        by_file = self._files_map
        if self._files_mapped is not self._records:
            by_file.clear()
            for key, (_k, _r, record) in self._records.items():
                for rel in record.files:
                    by_file.setdefault(rel, set()).add(key)
            self._files_mapped = self._records
        return by_file

    def _records_of(self, queue: WorkspaceQueue) -> list[QueueRecord]:
        if self.session is None:
            return queue.list()
        try:  # a dashboard lists its session's own actions still
            return queue.list()
        except Exception as exc:
            log.warning("reading the workspace queue failed: %s", exc)
            return []

    def own_action(self, action_id: str) -> PendingAction | None:
        """The session's own action ``action_id`` (None: another process's, or none)."""
        if self.session is None:
            return None
        return self.session.store.get(self.local_id(action_id))

    def listed_own(self, action_id: str) -> PendingAction | None:
        """The session's own action ``action_id`` as the last listing listed it (None:
        another process's, or not listed); a lookup, not a walk of the session's store."""
        known = self._own_rows.get(self.local_id(action_id))
        return known[0] if known is not None else None

    @property
    def lists_own(self) -> bool:
        """Whether the last listing listed any of the session's own actions."""
        return bool(self._own_rows)

    def record(self, action_id: str) -> QueueRecord | None:
        """The record another process's ``action_id`` was last listed from (None: not
        listed, or the session's own)."""
        listed = self._records.get(self.local_id(action_id))
        return listed[2] if listed is not None else None

    def record_row(self, record: QueueRecord) -> ListedAction:
        """The row of one record read on its own (a long queue's top, shown before the
        whole listing), staleness checked; kept as the next listing's starting point."""
        queue = self._claim_queue()
        return self._record_row(queue, record, {}, set())

    def _own_row(self, action: PendingAction) -> ListedAction:
        known = self._own_rows.get(action.id)
        if known is not None and known[0] is action:
            row = known[1]
            if (row.stale, row.stale_reason) == (action.stale, action.stale_reason):
                return row
            row = dataclasses.replace(row, stale=action.stale, stale_reason=action.stale_reason)
        else:
            row = listed_from_action(action, workspace=self.workspace)
            if self.qualified and self.workspace is not None:
                row = dataclasses.replace(row, id=f"{action.id}@{self.workspace.id}")
        self._own_rows[action.id] = (action, row)
        return row

    def _known_hashes(
        self,
        queue: WorkspaceQueue,
        records: list[QueueRecord],
        own: dict[str, PendingAction],
    ) -> tuple[dict[str, str | None], dict[str, tuple[int, ...]]]:
        """The staleness check's per-listing cache, filled with the hashes of the files
        whose ``stat`` has not changed since the last listing (a queue of thousands listed
        again after each decision hashes only what changed), and the ``stat`` of every
        regular file named."""
        hashes: dict[str, str | None] = {}
        stats: dict[str, tuple[int, ...]] = {}
        for record in records:
            if record.id in own:
                continue
            for rel in record.files:
                if rel in stats or "\0" in rel:
                    continue
                try:
                    st = os.stat(os.path.join(queue.root, rel), follow_symlinks=False)
                except (OSError, ValueError):
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                stats[rel] = key
                known = self._file_hashes.get(rel)
                if known is not None and known[0] == key:
                    hashes[rel] = known[1]
        return hashes, stats

    def _record_row(
        self,
        queue: WorkspaceQueue,
        record: QueueRecord,
        hashes: dict[str, str | None],
        unchanged: set[str],
    ) -> ListedAction:
        """Another process's row (kept while its record and files stay as they were).

        Stale as ``redline pending list`` says: marked so, or its files no longer match
        its Preview (checked by hash on every listing, so no apply has to be refused)."""
        cached = self._records.get(record.id)
        if (
            cached is not None
            and cached[2] is record
            and record.applied_by == "preview"
            and all(rel in unchanged for rel in record.files)
        ):
            # The same record object and files: nothing it is listed by has changed.
            return cached[1]
        try:
            changed = queue.stale_reasons(record, hashes)
        except Exception as exc:
            log.warning("checking %s for staleness failed: %s", record.id, exc)
            changed = []
        if (
            cached is not None
            and cached[2] is record
            and record.applied_by == "preview"
            and cached[0][-1] == tuple(changed)
        ):
            # The same record object: the queue shares unchanged records, and an action
            # the queue applies itself is never orphaned.
            return cached[1]
        key = (
            record.id,
            record.stale,
            record.stale_reason,
            record.orphaned(),
            record.details,
            tuple(changed),
        )
        if cached is not None and cached[0] == key:
            self._records[record.id] = (key, cached[1], record)
            return cached[1]
        row = listed_from_record(
            record, workspace=self.workspace, qualified=self.qualified, stale_reasons=changed
        )
        self._records[record.id] = (key, row, record)
        return row

    def allows(self, action: ListedAction) -> SourceCapabilities:
        local = action.local_id or self.local_id(action.id)
        if self.session is not None and self._own(local):
            return session_allows(self.session.capabilities, self._capabilities)
        record = self.record(local)
        if record is None and self.queue is not None:
            from redline.workspace.queue import QueueError

            try:
                record = self.queue.get(local)
            except QueueError:
                record = None
        if record is None:
            return self._capabilities
        return record_allows(record, self._capabilities)

    def _own(self, local_id: str) -> bool:
        return self.session is not None and self.session.store.get(local_id) is not None

    def _claim_queue(self) -> WorkspaceQueue:
        """The queue, where no session decides (a source has one or the other)."""
        assert self.queue is not None, "a workspace source without a session has a queue"
        return self.queue

    def view(self, action_id: str) -> ActionView:
        from redline.workspace.queue import QueueError

        local = self.local_id(action_id)
        mine = self.own_action(local)
        if mine is not None:
            preview = mine.preview
            row = self._own_row(mine)
        else:
            if self.queue is None:
                return ActionView(
                    ListedAction(action_id, "", ""), error=f"{local} is no longer pending."
                )
            try:
                record = self.queue.get(local)
                if record is None:
                    return ActionView(
                        ListedAction(action_id, "", ""), error=f"{local} is no longer pending."
                    )
                preview = self.queue.preview(record)
            except QueueError as exc:
                return ActionView(ListedAction(action_id, "", ""), error=str(exc))
            row = listed_from_record(record, workspace=self.workspace, qualified=self.qualified)
        hunks: tuple[str, ...] = ()
        if preview is not None:
            from redline.workspace.hunks import hunk_units

            hunks = tuple(unit.address for unit in hunk_units(preview))
        return ActionView(row, preview=preview, hunks=hunks)

    def load_preview(self, action_id: str) -> Preview | None:
        """The Preview of listed ``action_id``, read from the record it was listed from (the
        session's own action's as the session holds it); None when it has none or cannot
        be read (logged). The dashboard's stack reads it when it first shows the action."""
        mine = self.own_action(action_id)
        if mine is not None:
            return mine.preview
        if self.queue is None:
            return None
        try:
            record = self.record(action_id) or self.queue.get(self.local_id(action_id))
            if record is None:
                return None
            return self.queue.preview(record)
        except Exception as exc:
            log.warning("queue record %s: %s", self.local_id(action_id), exc)
            return None

    def resolve(self, action_id: str, decision: Decision) -> ResolveOutcome:
        """Apply or discard ``action_id`` as :meth:`decide` does, with the whole outcome (what
        else a partial apply re-based, whether the top changed): through the session's
        ``decide`` (``ReviewSession.decide``, the one decision path), or with no session
        through the queue's claim."""
        local = self.local_id(action_id)
        if self.session is not None:
            return self.session.decide(local, decision)
        from redline.review.decide import decide_queued

        return asyncio.run(
            decide_queued(
                self._claim_queue(),
                local,
                decision.verb,
                decision.reason,
                only=decision.only,
                by=decision.by,
                rule=decision.rule,
                batch=decision.batch,
                via=decision.via or "dashboard",
            )
        )

    def decide(
        self, action_id: str, decision: Decision, view: ActionView | None = None
    ) -> SourceOutcome:
        outcome = self.resolve(action_id, decision)
        return SourceOutcome(not outcome.is_error, outcome.text)

    def gone_text(self, action_id: str) -> str:
        if self.queue is None:
            return f"{self.local_id(action_id)} is no longer pending (decided elsewhere)."
        return resolution_text(self.queue, self.local_id(action_id))

    def edit(self, action_id: str, path: str, text: str) -> SourceOutcome:
        local = self.local_id(action_id)
        if self.session is not None:
            outcome = self.session.edit(local, path, text)
        else:
            from redline.review.decide import edit_queued

            outcome = asyncio.run(edit_queued(self._claim_queue(), local, path, text))
        return SourceOutcome(not outcome.is_error, outcome.text)

    def repreview(self, action_id: str) -> SourceOutcome:
        local = self.local_id(action_id)
        if self.session is not None:
            result = self.session.repreview(local)
            return SourceOutcome(not result.is_error, result.text)
        from redline.review.decide import repreview_queued

        outcome = repreview_queued(self._claim_queue(), local)
        return SourceOutcome(not outcome.is_error, outcome.text)

    def undo(self, workspace: WorkspaceRef | None = None) -> SourceOutcome:
        if self.session is not None:
            result = self.session.undo()
            return SourceOutcome(not result.is_error, result.text)
        from redline.review.git_undo import undo
        from redline.workspace.journal import UndoError

        try:
            done = undo(self._claim_queue().root, None)
        except UndoError as exc:
            return SourceOutcome(False, str(exc))
        receipt = done.receipt
        return SourceOutcome(True, receipt.message or f"Undone: {receipt.label}.")

    def conversation_target(self, action_id: str) -> tuple[WorkspaceQueue, str] | None:
        return None if self.queue is None else (self.queue, self.local_id(action_id))

    def undo_target(self, workspace: WorkspaceRef | None = None) -> str:
        from redline.review.undo_words import undo_question

        return undo_question(self._claim_queue().root, self.workspace)

    def watch(
        self, stop: threading.Event, on_rows: RowsCallback, on_status: StatusCallback
    ) -> None:
        from redline.review.follower import follow

        changed = threading.Event()
        stops = []
        if self.session is not None:  # the session's own actions, queued or not
            stops.append(self.session.store.subscribe(lambda _event: changed.set()))
        if self.queue is not None:
            stops.append(follow(self.queue, changed.set))
        try:
            on_status(True, "")
            on_rows(self.listed())
            while not stop.is_set():
                if changed.wait(0.2):
                    changed.clear()
                    on_rows(self.listed())
        finally:
            for unsubscribe in stops:
                unsubscribe()

    def close(self) -> None:
        pass
