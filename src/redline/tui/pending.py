"""What the stack lists: this session's pending actions and, when the session is backed by
a workspace queue, every other process's too (as display copies, resolved through the queue).

The listing is the workspace's review source's (``review.workspace_source.WorkspaceSource``
over the session): its rows are the listed actions every list shows, each shown here as
the session's own action or a display copy of another process's (:class:`QueuedCopy`,
whose Preview is read when first shown), and what each allows is what the source says.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from redline.review.result import ToolResult
from redline.review.source import ListedAction, SourceCapabilities, record_files
from redline.review.store import PendingAction
from redline.review.workspace_source import (
    RowsChange,
    WorkspaceSource,
    record_allows,
    resolution_text,
)
from redline.tui.agent_ended import ended_note
from redline.tui.protocol import SessionLike
from redline.workspace.details import details_from_json
from redline.workspace.preview import Preview
from redline.workspace.queue import QueueRecord, Resolution, WorkspaceQueue, changed_records
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
class ListingChange:
    """``after`` is ``before`` without the actions ``gone``, with those of ``replaced`` new
    objects in their places, in the same order (see :meth:`PendingList.change`): a stack
    of 10,000 looks only at those after a decision."""

    before: tuple[PendingAction, ...]
    after: tuple[PendingAction, ...]
    gone: frozenset[str]
    replaced: frozenset[str]


@dataclass(frozen=True, slots=True)
class Departed:
    """Another process's action that left the queue since the last read, and how."""

    action: PendingAction
    resolution: Resolution


def session_queue(session: SessionLike) -> WorkspaceQueue | None:
    """The workspace queue when the session is queue-backed (``session.queue``)."""
    return session.queue


def workspace_source(session: SessionLike) -> WorkspaceSource:
    """The session's workspace as a review source: its own actions and, with a queue,
    every other process's; decided through ``session.decide``."""
    return WorkspaceSource(
        session_queue(session),
        session=session,
        workspace=None,
        rules=session.rules is not None,
        remember=False,
    )


class PendingList:
    """The pending actions top first, and each of them by id: the rows of the session's
    workspace source, each as the action the stack shows."""

    def __init__(self, session: SessionLike, source: WorkspaceSource | None = None) -> None:
        """``source``: the session's workspace as a review source (made from the session
        when not given: :func:`workspace_source`)."""
        self.session = session
        self._source = source
        # What the stack shows, by id, and the listed rows they were made from.
        self._actions: dict[str, PendingAction] = {}
        self._rows: dict[str, ListedAction] = {}
        # Display copies of other processes' actions, by id, with the row each shows.
        self._foreign: dict[str, tuple[ListedAction, PendingAction]] = {}
        self._departed: list[Departed] = []
        self._listed: tuple[PendingAction, ...] | None = None
        self._taken: Sequence[ListedAction] | None = None  # the rows _take last showed
        # Whether the workspace's watcher runs and reports changed files (the app says so),
        # and the files it reported since the last read.
        self._files_watched = False
        self._files_lock = threading.Lock()
        self._changed_files: set[str] = set()
        self._whole = True  # the next read reads everything
        # Whether the queue's watcher runs and has named every record it saw change (the
        # app says it runs; a report that cannot name them ends that), and the ids named
        # since the last read.
        self._records_named = False
        self._named: set[str] = set()
        self._change: ListingChange | None = None  # how the last listing differs (change())
        self._changes: deque[ListingChange] = deque(maxlen=8)  # the last few (gone_since())

    @property
    def source(self) -> WorkspaceSource:
        """The review source the stack lists and decides through (made again should the
        session's queue change)."""
        queue = session_queue(self.session)
        source = self._source
        if source is None or source.queue is not queue:
            source = self._source = workspace_source(self.session)
        return source

    def departed(self) -> list[Departed]:
        """Other processes' actions applied or discarded since the last call (each once)."""
        gone, self._departed = self._departed, []
        return gone

    def listed(self) -> tuple[PendingAction, ...]:
        """What the last :meth:`read` listed, top first (the same tuple until the next)."""
        listed = self._listed
        if listed is None:
            listed = self._listed = tuple(self._actions.values())
        return listed

    def get(self, action_id: str | None) -> PendingAction | None:
        """The listed action ``action_id`` (None when it is not listed)."""
        return self._actions.get(action_id) if action_id else None

    def row(self, action_id: str | None) -> ListedAction | None:
        """The listed row of ``action_id`` (None when it is not listed)."""
        return self._rows.get(action_id) if action_id else None

    def limits(self, action_id: str | None) -> Limits:
        """What cannot be done to the listed action ``action_id`` now, and why."""
        row = self.row(action_id)
        if row is None:
            return Limits()
        return limits_of(self.source.allows(row))

    def gone_text(self, action_id: str) -> str:
        """How ``action_id``, no longer listed, left (the source's words)."""
        return self.source.gone_text(action_id)

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
        if record is None:
            return None
        source = self.source
        row = source.record_row(record)
        foreign: dict[str, tuple[ListedAction, PendingAction]] = {}
        action = self._foreign_action(source, row, foreign)
        if action is None:
            return None
        self._foreign = foreign
        self._rows = {row.id: row}
        self._actions = {action.id: action}
        self._listed = (action,)
        self._taken = None
        self._change = None
        return (action,)

    @property
    def files_watched(self) -> bool:
        """Whether the workspace's watcher runs and reports every file that changes."""
        return self._files_watched

    def watch_files(self, watched: bool) -> None:
        """Say whether the workspace's watcher runs (from its start on, it reports files
        through :meth:`files_changed`; what changed before it started is not known: the
        next read reads everything)."""
        with self._files_lock:
            self._files_watched = watched
            self._changed_files = set()
            self._whole = True

    def files_changed(self, paths: Collection[str]) -> None:
        """The workspace's watcher saw ``paths`` change (called from its thread): the next
        read checks the listed actions on those files again."""
        with self._files_lock:
            self._changed_files.update(paths)

    def watch_records(self, watched: bool) -> None:
        """Say whether the queue's watcher runs for this list (from then on it names the
        records it sees change through :meth:`records_changed`; what changed before is not
        known: the next read reads everything)."""
        with self._files_lock:
            self._records_named = watched
            self._named = set()
            self._whole = True

    def records_changed(self, paths: Collection[str] | None) -> None:
        """The queue's watcher saw ``paths`` (below ``.redline/queue/``) change (called
        from its thread): the next read looks at the records named (None, or a path that
        may hide a record's change: from now on every record is looked at)."""
        named = changed_records(paths)
        with self._files_lock:
            if named is None:
                self._records_named = False
            elif self._records_named:
                self._named.update(named)

    def read(self) -> tuple[PendingAction, ...]:
        """Every pending action top first: the session's own and, with a queue, all others
        (only what changed since the last read is read again: :meth:`read_after`)."""
        return self.read_after(())

    def read_after(self, gone: Collection[str]) -> tuple[PendingAction, ...]:
        """What is pending now, this process having decided ``gone`` since the last read.

        While the workspace's watcher runs (:attr:`files_watched`: it reports every file
        that changes, :meth:`files_changed`) the last listing is brought up to date
        (:meth:`WorkspaceSource.relisted`: only the records that arrived, left or were
        rewritten, and those on a file that changed, are read again -- of the records, only
        those the queue's watcher named, while it names them: :meth:`records_changed`;
        issue 44); otherwise, or when that cannot be done, every action is read again."""
        with collector_paused():
            source = self.source
            with self._files_lock:
                paths, self._changed_files = self._changed_files, set()
                whole, self._whole = self._whole, False
                named: set[str] | None = self._named if self._records_named else None
                self._named = set()
            rows = None
            if self._files_watched and not whole:
                for action_id in gone:
                    record = source.record(action_id)
                    if record is not None:
                        paths.update(record.files)
                rows = source.relisted(gone, paths, named)
                if rows is not None and rows is self._taken and self._listed is not None:
                    return self._listed  # nothing changed since the last read
            return self._take(source, source.listed() if rows is None else rows)

    def _take(
        self, source: WorkspaceSource, rows: Sequence[ListedAction]
    ) -> tuple[PendingAction, ...]:
        """Show ``rows``: each as the session's own action or a display copy (kept while its
        row stays the same object)."""
        change = source.change(rows)
        if change is not None and change.before is self._taken and not source.lists_own:
            listed = self._take_change(source, change)
            if listed is not None:
                return listed
        self._change = None
        actions: dict[str, PendingAction] = {}
        shown: dict[str, ListedAction] = {}
        foreign: dict[str, tuple[ListedAction, PendingAction]] = {}
        own = source.lists_own
        known = self._foreign
        for row in rows:
            key = row.id
            cached = known.get(key)
            if cached is not None and cached[0] is row and not own:
                # Another process's row as last shown (most of a long queue after a decision).
                foreign[key] = cached
                actions[key] = cached[1]
                shown[key] = row
                continue
            action = source.listed_own(key) if own else None
            if action is None:
                action = self._foreign_action(source, row, foreign)
            if action is None:
                continue
            actions[key] = action
            shown[key] = row
        self._note_departures(
            source, [(key, copy[1]) for key, copy in self._foreign.items() if key not in foreign]
        )
        self._foreign = foreign
        self._actions = actions
        self._rows = shown
        self._taken = rows
        listed = self._listed = tuple(actions.values())
        return listed

    def _take_change(
        self, source: WorkspaceSource, change: RowsChange
    ) -> tuple[PendingAction, ...] | None:
        """Show ``change.after`` from what ``change.before`` showed: only the rows that left
        and those read again are looked at (a long queue after a decision: issue 44); None
        when it cannot be done so (a row read again that was not shown)."""
        actions, known = self._actions, self._foreign
        if any(key not in actions or key not in known for key in change.changed):
            return None
        before = self._listed if self._listed is not None else self.listed()
        gone = set(change.gone)
        departed = []
        for key in change.gone:
            actions.pop(key, None)
            self._rows.pop(key, None)
            copy = known.pop(key, None)
            if copy is not None:
                departed.append((key, copy[1]))
        replaced = []
        for key, row in change.changed.items():
            fresh: dict[str, tuple[ListedAction, PendingAction]] = {}
            action = self._foreign_action(source, row, fresh)
            if action is None:  # no longer a record: gone from the list
                actions.pop(key, None)
                self._rows.pop(key, None)
                copy = known.pop(key, None)
                if copy is not None:
                    departed.append((key, copy[1]))
                gone.add(key)
                continue
            if action is not actions[key]:
                replaced.append(key)
            known[key] = fresh[key]
            actions[key] = action  # in its place: the dict keeps its order
            self._rows[key] = row
        self._note_departures(source, departed)
        self._taken = change.after
        listed = self._listed = tuple(actions.values())
        self._change = ListingChange(before, listed, frozenset(gone), frozenset(replaced))
        self._changes.append(self._change)
        return listed

    def change(self, listed: tuple[PendingAction, ...]) -> ListingChange | None:
        """How ``listed`` (the last read's answer) differs from the listing before it, when
        only some actions left and some were replaced in place (None: anything else)."""
        change = self._change
        return change if change is not None and change.after is listed else None

    def gone_since(
        self, before: tuple[PendingAction, ...] | None, listed: tuple[PendingAction, ...]
    ) -> frozenset[str] | None:
        """The ids that left between the listing ``before`` and ``listed`` (a later one)
        when nothing arrived or moved in between (None: not known so)."""
        gone: set[str] = set()
        for change in reversed(self._changes):
            if listed is before:
                break
            if change.after is listed:
                gone.update(change.gone)
                listed = change.before
        return frozenset(gone) if listed is before and before is not None else None

    def _note_departures(
        self, source: WorkspaceSource, departed: Sequence[tuple[str, PendingAction]]
    ) -> None:
        """Remember how the display copies that left the queue were decided, and by whom."""
        queue = source.queue
        if queue is None:
            return
        for action_id, action in departed:
            try:
                resolution = queue.resolution(action_id)
            except Exception as exc:
                log.warning("reading how %s was resolved failed: %s", action_id, exc)
                continue
            if resolution is not None and resolution.decision in ("apply", "discard"):
                self._departed.append(Departed(action, resolution))

    def _foreign_action(
        self,
        source: WorkspaceSource,
        row: ListedAction,
        foreign: dict[str, tuple[ListedAction, PendingAction]],
    ) -> PendingAction | None:
        """A display copy of another process's action (kept while its row stays); its
        Preview is read when first shown (see :class:`QueuedCopy`)."""
        cached = self._foreign.get(row.id)
        if cached is not None and cached[0] is row:
            foreign[row.id] = cached
            return cached[1]
        record = source.record(row.id)
        queue = source.queue
        if record is None or queue is None:
            return None
        if (
            cached is not None
            and cached[0] == row
            and ended_note(cached[0].details) == ended_note(row.details)
        ):
            foreign[row.id] = (row, cached[1])
            return cached[1]

        def elsewhere(_reason: str) -> ToolResult:
            return ToolResult.error(f"{record.id} is resolved through the workspace queue")

        def load() -> Preview | None:
            return source.load_preview(row.id)

        # The row every list shows, made from the record by the one function.
        action = QueuedCopy(
            row.label,
            elsewhere,
            details=details_from_json(record.kind, record.details),
            kind=record.kind,
            source_tool_name=row.source_tool_name,
            source=record.source,
            id=row.id,
            created_at=record.created_at,
            stale=row.stale,
            stale_reason=row.stale_reason,
        )
        if record.preview is not None:
            action.defer(load, row.facts)
        foreign[row.id] = (row, action)
        return action
