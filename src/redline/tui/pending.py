"""What the stack lists: this session's pending actions and, when the session is backed by
a workspace queue, every other process's too (as display copies, resolved through the queue).
"""

from __future__ import annotations

import logging

from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.tui.agent_ended import ended_note
from redline.tui.protocol import SessionLike
from redline.workspace.queue import ORPHANED_REASON, QueueRecord, WorkspaceQueue

log = logging.getLogger(__name__)


def session_queue(session: SessionLike) -> WorkspaceQueue | None:
    """The workspace queue when the session is queue-backed (``session.queue``)."""
    queue = getattr(session, "queue", None)
    return queue if isinstance(queue, WorkspaceQueue) else None


class PendingList:
    """The pending actions top first, and each of them by id."""

    def __init__(self, session: SessionLike) -> None:
        self.session = session
        # What the stack shows, by id, and display copies of other processes' actions.
        self._actions: dict[str, PendingAction] = {}
        self._foreign: dict[str, tuple[tuple[object, ...], PendingAction, QueueRecord]] = {}

    def get(self, action_id: str | None) -> PendingAction | None:
        """The listed action ``action_id`` (None when it is not listed)."""
        return self._actions.get(action_id) if action_id else None

    def read(self) -> tuple[PendingAction, ...]:
        """Every pending action top first: the session's own and, with a queue, all others."""
        own = self.session.store.snapshot()
        queue = session_queue(self.session)
        if queue is None:
            self._actions = {action.id: action for action in own}
            return own
        by_id = {action.id: action for action in own}
        try:
            records = queue.list()
        except Exception as exc:
            log.warning("reading the workspace queue failed: %s", exc)
            records = []
        listed: list[PendingAction] = []
        seen: set[str] = set()
        for record in records:
            action = by_id.get(record.id) or self._foreign_action(queue, record)
            if action is not None:
                listed.append(action)
                seen.add(record.id)
        # Own actions the queue does not list (yet) stay on top, in the store's order.
        extra = [action for action in own if action.id not in seen]
        actions = (*extra, *listed)
        self._actions = {action.id: action for action in actions}
        return actions

    def _foreign_action(self, queue: WorkspaceQueue, record: QueueRecord) -> PendingAction | None:
        """A display copy of another process's action (cached while its record stays)."""
        cached = self._foreign.get(record.id)
        if cached is not None and cached[2] is record and record.applied_by == "preview":
            # The same record object: its file has not changed (the queue shares unchanged
            # records), and an action the queue applies itself is never orphaned.
            return cached[1]
        key = (
            record.id,
            record.stale,
            record.stale_reason,
            record.orphaned(),
            ended_note(record.details),
        )
        if cached is not None and cached[0] == key:
            self._foreign[record.id] = (key, cached[1], record)
            return cached[1]
        try:
            preview = queue.preview(record)
        except Exception as exc:
            log.warning("queue record %s: %s", record.id, exc)
            preview = None
        source = record.source.name or record.source.kind

        def elsewhere(_reason: str) -> ToolResult:
            return ToolResult.error(f"{record.id} is resolved through the workspace queue")

        action = PendingAction(
            record.label,
            elsewhere,
            details=record.details,
            source_tool_name=f"{record.source_tool_name} · {source}",
            preview=preview,
            id=record.id,
            created_at=record.created_at,
            stale=record.stale or record.orphaned(),
            stale_reason=ORPHANED_REASON if record.orphaned() else record.stale_reason,
        )
        self._foreign[record.id] = (key, action, record)
        return action
