"""Reconcile never mistakes a resolver at work for a crash's leftover.

A resolver writes the resolution, marks the id used, then removes the record, all under
the action's claim. Another process opening the queue in between used to see "a record with a
resolution", remove it itself and say ``pa-1 had already been resolved; removed its
leftover record`` (seen as a stray first line of the losing `redline pending apply` in
tests/review/test_session.py's two-process test, 1 run in 50 under load).
"""

from __future__ import annotations

from pathlib import Path

from tests.workspace.queue.helpers import create_draft

from redline.workspace.queue import Resolution, WorkspaceQueue
from redline.workspace.queue.base import ACTIONS, record_name
from redline.workspace.queue.storage import exists


def _resolution_written(queue: WorkspaceQueue, action_id: str) -> None:
    """The resolver's first step only: its resolution is in the log, the id not yet marked
    used, the record not yet removed."""
    resolution = Resolution(action_id, "discard", "not needed")
    queue._resolved().write(record_name(action_id), resolution.to_dict(), action_id)


def _record_exists(queue: WorkspaceQueue, action_id: str) -> bool:
    return exists(queue._fd(ACTIONS), record_name(action_id))


def test_a_record_whose_resolver_holds_the_claim_is_left_alone(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    record = queue.push(create_draft("n.txt", "new\n"))
    with queue.claim(record.id):
        _resolution_written(queue, record.id)
        other = WorkspaceQueue(ws)
        assert other.reconcile() == []
        assert _record_exists(other, record.id)


def test_a_leftover_with_no_resolver_at_work_is_removed(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    record = queue.push(create_draft("n.txt", "new\n"))
    with queue.claim(record.id):
        _resolution_written(queue, record.id)
    # The resolver died there (the claim is released, the record stayed): a leftover.
    other = WorkspaceQueue(ws)
    assert other.reconcile() == [
        f"{record.id} had already been resolved; removed its leftover record."
    ]
    assert not _record_exists(other, record.id)
