"""What the stack lists: this session's pending actions and, when the session is backed by
a workspace queue, every other process's too (as display copies, resolved through the queue).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

from redline.review.result import ToolResult
from redline.review.source import SourceCapabilities, listed_from_record, record_files
from redline.review.store import PendingAction
from redline.review.workspace_source import record_allows, resolution_text, session_allows
from redline.tui.agent_ended import ended_note
from redline.tui.protocol import SessionLike
from redline.workspace.details import details_from_json
from redline.workspace.preview import Preview
from redline.workspace.queue import QueueRecord, Resolution, WorkspaceQueue
from redline.workspace.queue.index import collector_paused

log = logging.getLogger(__name__)


def gone_text(session: SessionLike, action_id: str) -> str:
    """How ``action_id`` left the queue, from its logged resolution when there is one:
    ``pa-3 was discarded by a person elsewhere (...) (reason: not needed).``"""
    queue = session_queue(session)
    if queue is None:
        return f"{action_id} is no longer pending (decided elsewhere)."
    return resolution_text(queue, action_id)


#: What the stack's row says of an action without reading its Preview: the files it
#: touches, the lines it adds and removes.
RowFacts = tuple[tuple[str, ...], int, int]


class QueuedCopy(PendingAction):
    """A display copy of another process's action whose Preview is read from the queue the
    first time something asks for ``preview`` (the preview pane, a decision), not when the
    stack lists it: the stack's row comes from the record's summary (:attr:`facts`), so a
    queue of 10,000 is drawn without reading 10,000 previews."""

    _load: Callable[[], Preview | None] | None = None
    _preview: Preview | None = None
    facts: RowFacts = ((), 0, 0)

    @property
    def preview(self) -> Preview | None:
        load = self._load
        if load is not None:
            self._load = None
            self._preview = load()
        return self._preview

    @preview.setter
    def preview(self, value: Preview | None) -> None:
        self._load = None
        self._preview = value

    @property
    def loaded(self) -> bool:
        """Whether the Preview has been read (or was given)."""
        return self._load is None

    def defer(self, load: Callable[[], Preview | None], facts: RowFacts) -> None:
        """Read the Preview with ``load`` when first asked for; list the row as ``facts``."""
        self._load = load
        self.facts = facts


def record_facts(record: QueueRecord) -> RowFacts:
    """The stack row's files and +/- lines from a record, as the listed action made from
    it says (:func:`redline.review.source.record_files`)."""
    return record_files(record), record.added, record.removed


@dataclass(frozen=True, slots=True)
class Limits:
    """Why a person cannot do one thing to an action now ("" where they can): pick some of
    its hunks, edit it, re-preview it. The dashboard greys the keys out with these."""

    parts: str = ""
    edit: str = ""
    repreview: str = ""


def limits_of(allows: SourceCapabilities) -> Limits:
    """The keys' refusals from what a review source allows an action."""
    return Limits(
        parts=allows.refusal("parts"),
        edit=allows.refusal("edit"),
        repreview=allows.refusal("repreview"),
    )


def record_limits(record: QueueRecord) -> Limits:
    """What cannot be done to another process's queued action, and why."""
    return limits_of(record_allows(record, SourceCapabilities()))


@dataclass(frozen=True, slots=True)
class Departed:
    """Another process's action that left the queue since the last read, and how."""

    action: PendingAction
    resolution: Resolution


def session_queue(session: SessionLike) -> WorkspaceQueue | None:
    """The workspace queue when the session is queue-backed (``session.queue``)."""
    return session.queue


class PendingList:
    """The pending actions top first, and each of them by id."""

    def __init__(self, session: SessionLike) -> None:
        self.session = session
        # What the stack shows, by id, and display copies of other processes' actions.
        self._actions: dict[str, PendingAction] = {}
        self._foreign: dict[str, tuple[tuple[object, ...], PendingAction, QueueRecord]] = {}
        self._departed: list[Departed] = []
        # The ids of the session's own actions at the last read.
        self._own_ids: set[str] = set()
        # File -> (its stat, its hash) at the last read, for the staleness checks.
        self._file_hashes: dict[str, tuple[tuple[int, ...], str | None]] = {}

    def departed(self) -> list[Departed]:
        """Other processes' actions applied or discarded since the last call (each once)."""
        gone, self._departed = self._departed, []
        return gone

    def listed(self) -> tuple[PendingAction, ...]:
        """What the last :meth:`read` listed, top first."""
        return tuple(self._actions.values())

    def get(self, action_id: str | None) -> PendingAction | None:
        """The listed action ``action_id`` (None when it is not listed)."""
        return self._actions.get(action_id) if action_id else None

    def limits(self, action_id: str | None) -> Limits:
        """What cannot be done to the listed action ``action_id`` now, and why."""
        if not action_id:
            return Limits()
        foreign = self._foreign.get(action_id)
        if foreign is not None and action_id not in self._own_ids:
            return record_limits(foreign[2])
        capabilities = self.session.capabilities
        if capabilities.parts and capabilities.edit and capabilities.repreview:
            return Limits()
        return limits_of(session_allows(capabilities, SourceCapabilities()))

    def read_top(self, minimum: int) -> tuple[PendingAction, ...] | None:
        """Only the queue's top action, when the queue holds at least ``minimum`` and the
        session none of its own (a long queue's first frame; :meth:`read` lists the rest);
        None: read them all."""
        queue = session_queue(self.session)
        if queue is None or self.session.store.has_pending:
            return None
        try:
            record = queue.top(minimum)
        except Exception as exc:
            log.warning("reading the workspace queue's top failed: %s", exc)
            return None
        action = self._foreign_action(queue, record, {}, set()) if record is not None else None
        if action is None:
            return None
        self._actions = {action.id: action}
        return (action,)

    def read(self) -> tuple[PendingAction, ...]:
        """Every pending action top first: the session's own and, with a queue, all others."""
        with collector_paused():
            return self._read()

    def _read(self) -> tuple[PendingAction, ...]:
        own = self.session.store.snapshot()
        queue = session_queue(self.session)
        if queue is None:
            self._actions = {action.id: action for action in own}
            return own
        by_id = {action.id: action for action in own}
        self._own_ids = set(by_id)
        try:
            records = queue.list()
        except Exception as exc:
            log.warning("reading the workspace queue failed: %s", exc)
            records = []
        listed: list[PendingAction] = []
        seen: set[str] = set()
        hashes, stats = self._known_hashes(queue, records, by_id)
        unchanged = set(hashes)  # files whose stat is as at the last read
        for record in records:
            action = by_id.get(record.id) or self._foreign_action(queue, record, hashes, unchanged)
            if action is not None:
                listed.append(action)
                seen.add(record.id)
        self._file_hashes = {
            rel: (stats[rel], value) for rel, value in hashes.items() if rel in stats
        }
        # Own actions the queue does not list (yet) stay on top, in the store's order.
        extra = [action for action in own if action.id not in seen]
        actions = (*extra, *listed)
        self._actions = {action.id: action for action in actions}
        self._note_departures(queue, seen)
        return actions

    def _known_hashes(
        self,
        queue: WorkspaceQueue,
        records: list[QueueRecord],
        own: dict[str, PendingAction],
    ) -> tuple[dict[str, str | None], dict[str, tuple[int, ...]]]:
        """The staleness check's per-read cache, filled with the hashes of the files whose
        ``stat`` has not changed since the last read (a queue of thousands re-read after each
        decision hashes only what changed), and the ``stat`` of every regular file named."""
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

    def _note_departures(self, queue: WorkspaceQueue, listed: set[str]) -> None:
        """Remember how the display copies that left the queue were decided, and by whom."""
        for action_id in [key for key in self._foreign if key not in listed]:
            _key, action, _record = self._foreign.pop(action_id)
            try:
                resolution = queue.resolution(action_id)
            except Exception as exc:
                log.warning("reading how %s was resolved failed: %s", action_id, exc)
                continue
            if resolution is not None and resolution.decision in ("apply", "discard"):
                self._departed.append(Departed(action, resolution))

    def _foreign_action(
        self,
        queue: WorkspaceQueue,
        record: QueueRecord,
        hashes: dict[str, str | None],
        unchanged: set[str],
    ) -> PendingAction | None:
        """A display copy of another process's action (cached while its record stays); its
        Preview is read when first shown (see :class:`QueuedCopy`).

        Stale as ``redline pending list`` says: marked so, or its files no longer match
        its Preview (checked by hash on every read, so no apply has to be refused first).
        """
        cached = self._foreign.get(record.id)
        if (
            cached is not None
            and cached[2] is record
            and record.applied_by == "preview"
            and all(rel in unchanged for rel in record.files)
        ):
            # The same record object and files: nothing it is shown by has changed.
            return cached[1]
        try:
            changed = queue.stale_reasons(record, hashes)
        except Exception as exc:
            log.warning("checking %s for staleness failed: %s", record.id, exc)
            changed = []
        cached = self._foreign.get(record.id)
        if (
            cached is not None
            and cached[2] is record
            and record.applied_by == "preview"
            and cached[0][5] == tuple(changed)
        ):
            # The same record object: its file has not changed (the queue shares unchanged
            # records), and an action the queue applies itself is never orphaned.
            return cached[1]
        key = (
            record.id,
            record.stale,
            record.stale_reason,
            record.orphaned(),
            ended_note(record.details),
            tuple(changed),
        )
        if cached is not None and cached[0] == key:
            self._foreign[record.id] = (key, cached[1], record)
            return cached[1]

        def elsewhere(_reason: str) -> ToolResult:
            return ToolResult.error(f"{record.id} is resolved through the workspace queue")

        def load() -> Preview | None:
            try:
                return queue.preview(record)
            except Exception as exc:
                log.warning("queue record %s: %s", record.id, exc)
                return None

        # The row every list shows, made from the record by the one function.
        listed = listed_from_record(record, stale_reasons=changed)
        action = QueuedCopy(
            listed.label,
            elsewhere,
            details=details_from_json(record.kind, record.details),
            kind=record.kind,
            source_tool_name=listed.source_tool_name,
            source=record.source,
            id=listed.id,
            created_at=record.created_at,
            stale=listed.stale,
            stale_reason=listed.stale_reason,
        )
        if record.preview is not None:
            action.defer(load, listed.facts)
        self._foreign[record.id] = (key, action, record)
        return action
