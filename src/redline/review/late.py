"""Decisions a hook's agent has not waited for: posted to its session's outbox.

A hook that hands its action over (``[hooks] wait_seconds`` passed) tells the agent the
change is still pending; from then on the queue applies it itself (``applied_by ==
"preview"``). Every later outcome of such an action — and of the rest of one decided in
part, and of a person's edit of it, which keep its source — is posted here at decision
time (:mod:`redline.workspace.outbox`), from the one decision path for another process's
action (:func:`redline.review.queued.resolve_queued`) and from undo
(:func:`redline.review.git_undo.undo`). The agent hears it at its next hook call.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from redline.review.resolve import ResolveOutcome
    from redline.workspace.queue import QueueRecord, Source, WorkspaceQueue

log = logging.getLogger(__name__)


def _handed_over(source: Source, applied_by: str, *, owner_alive: bool | None = None) -> bool:
    """A hook's action its hook no longer waits for: handed over (or the rest of a partial
    decision, or an edit of it), or left by a hook the agent stopped (orphaned)."""
    if source.kind != "hook" or not source.session_id:
        return False
    if applied_by == "preview":
        return True
    alive = source.alive() if owner_alive is None else owner_alive
    return applied_by == "owner" and not alive


def decided(queue: WorkspaceQueue, record: QueueRecord, verb: str, outcome: ResolveOutcome) -> None:
    """``record`` (a queued action) was applied or discarded as ``outcome`` says: post it
    to its hook session's outbox when its hook no longer waits for it, with the reviewer's
    comments (:func:`redline.review.comments.agent_notes`). Never raises."""
    try:
        if not _handed_over(record.source, record.applied_by):
            return
        from redline.review.comments import agent_notes
        from redline.workspace.outbox import Late, post

        root = queue.root

        partial = bool(outcome.remaining_id)
        if verb == "apply":
            kind = "applied_in_part" if partial else "applied"
        else:
            kind = "discarded_in_part" if partial else "discarded"
        written = outcome.written
        files = (
            tuple(dict.fromkeys(c.path for c in written.changes))
            if written is not None
            else tuple(record.files)
        )
        late = Late(
            action_id=record.id,
            label=record.label,
            outcome=kind,
            reason=outcome.reason,
            files=files,
            remaining=outcome.remaining_id,
            parts=outcome.parts or "",
            workspace=str(root),
            notes=agent_notes(queue, record.id, verb),
        )
        post(record.source.name, record.source.session_id, late)
    except Exception:  # the decision stands whatever happens here
        log.exception("could not post the outcome of %s for its agent", record.id)


def undone(root: Path, action_id: str, label: str, files: list[str]) -> None:
    """The apply of ``action_id`` was undone: its agent hears of it when its hook had
    handed it over. Never raises."""
    try:
        from redline.workspace.queue import Source, WorkspaceQueue

        with WorkspaceQueue(root) as queue:
            resolution = queue.resolution(action_id)
        record: Any = resolution.record if resolution is not None else None
        if not isinstance(record, dict) or not isinstance(record.get("source"), dict):
            return
        source = Source.from_dict(record["source"])
        if not _handed_over(source, str(record.get("applied_by", "")), owner_alive=True):
            return
        from redline.workspace.outbox import Late, post

        late = Late(
            action_id=action_id,
            label=str(record.get("label") or label),
            outcome="undone",
            files=tuple(files),
            workspace=str(root),
        )
        post(source.name, source.session_id, late)
    except Exception:
        log.exception("could not post the undo of %s for its agent", action_id)


__all__ = ["decided", "undone"]
