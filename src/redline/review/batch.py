"""Several queued actions decided at once: ``redline pending apply ID ID …`` and marks.

Each action goes through :func:`redline.review.queued.resolve_queued` on its own — the
same claim, stale-base and "no longer pending" checks as one decision — and the caller
gets one :class:`BatchOutcome` per id it asked for, in its order. Nothing here stops at a
failure: the rest are still tried, and the outcomes say which ones were refused and why.

An apply can re-base the other queued actions on the same files under new ids
(``rebased pa-4 as pa-9 onto pa-6``). An id of the batch carried over that way by this
batch is followed to its new id (and the outcome says so), because the person asked for
that change and a re-base only moves hunks that still apply cleanly; an id replaced any
other way (a person's edit, an agent's new proposal) is not followed: it is refused,
naming the new id, so nobody applies text they have not seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redline.review.provenance import GitBatch, finish_batch
from redline.review.queued import resolve_queued

if TYPE_CHECKING:
    from redline.workspace.queue import WorkspaceQueue


@dataclass(frozen=True)
class BatchOutcome:
    """What became of one id of a batch."""

    action_id: str
    ok: bool
    text: str
    #: The id that was resolved, when a re-base during the batch gave the action a new one.
    resolved_id: str = ""

    def line(self) -> str:
        """One line: ``pa-3: Applied: Fix the bug.`` (follow-up lines joined with "; ")."""
        text = "; ".join(part.strip() for part in self.text.splitlines() if part.strip())
        via = f" (re-based as {self.resolved_id})" if self.resolved_id else ""
        return f"{self.action_id}{via}: {text}"


class BatchError(ValueError):
    """The batch itself is bad input (nothing was resolved)."""


def check_batch(action_ids: Sequence[str], only: Sequence[str] | None) -> None:
    """Raise :class:`BatchError` for a batch that must not start: no id, an id twice,
    ``only`` with other than exactly one id."""
    if not action_ids:
        raise BatchError("give at least one ID")
    seen: set[str] = set()
    for action_id in action_ids:
        if action_id in seen:
            raise BatchError(f"{action_id} is given twice")
        seen.add(action_id)
    if only is not None and len(action_ids) != 1:
        raise BatchError(
            f"--only selects hunks of one action: give exactly one ID with it "
            f"(got {len(action_ids)})"
        )


async def resolve_queued_many(
    queue: WorkspaceQueue,
    action_ids: Sequence[str],
    decision: str,
    reason: str,
    *,
    resolved_by: str = "person",
    only: Sequence[str] | None = None,
    batch: bool = False,
) -> list[BatchOutcome]:
    """Apply or discard each of ``action_ids`` in order; one outcome per id.

    With ``batch``, ``[git] on_apply = "commit"`` makes one commit of every apply of the
    batch (its text is the last outcome's follow-up line) instead of one per action.
    Raises :class:`BatchError` (before resolving anything) for a bad batch.
    """
    check_batch(action_ids, only)
    collected = GitBatch(queue.root) if batch else None
    outcomes: list[BatchOutcome] = []
    rebased: dict[str, str] = {}  # old id -> new id, for re-bases this batch caused
    for action_id in action_ids:
        target = action_id
        while target in rebased:
            target = rebased[target]
        result = await resolve_queued(
            queue, target, decision, reason, resolved_by=resolved_by, only=only, batch=collected
        )
        if not result.is_error:
            rebased.update(_carried(queue, result.details))
        outcomes.append(
            BatchOutcome(
                action_id,
                not result.is_error,
                result.text,
                resolved_id=target if target != action_id else "",
            )
        )
    if collected is not None:
        notes = finish_batch(collected)
        if notes and outcomes:
            last = outcomes[-1]
            outcomes[-1] = BatchOutcome(
                last.action_id, last.ok, "\n".join([last.text, *notes]), last.resolved_id
            )
    return outcomes


def _carried(queue: WorkspaceQueue, details: object) -> dict[str, str]:
    """The ``old -> new`` ids an apply re-based (``details["rebased"]``), checked in the queue."""
    moved = details.get("rebased") if isinstance(details, dict) else None
    found: dict[str, str] = {}
    if not isinstance(moved, dict):
        return found
    for old, new in moved.items():
        resolution = queue.resolution(str(old))
        if (
            resolution is not None
            and resolution.resolved_by == "rebase"
            and resolution.replaced_by == new
        ):
            found[str(old)] = str(new)
    return found
