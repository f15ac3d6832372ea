"""Resolve an action of the workspace queue by id, from any process.

The texts are :func:`redline.tools.resolve.resolve_pending`'s own: the queued action is
resolved through it as the only action of a one-off store, so applying or discarding from
``redline pending`` (or the dashboard, or the SDK) reads exactly as a local resolution.

* ``applied_by == "preview"``: the Preview is written here through safe apply, under the
  action's claim, in the queue's commit order (see :mod:`redline.workspace.queue.core`).
* ``applied_by == "owner"``: the process that pushed the action is asked to run its own
  ``apply``/``reject``; the answer is awaited for ``owner_timeout`` seconds. An owner
  action whose process has ended can only be discarded.
"""

from __future__ import annotations

from typing import Any

from redline.tools.pending_action import PendingAction, PendingActionStore
from redline.tools.resolve import resolve_pending
from redline.tools.result import ToolResult
from redline.workspace.queue import (
    ORPHANED_REASON,
    ActionBusy,
    ActionGone,
    Claim,
    QueueError,
    QueueRecordError,
    Resolution,
    WorkspaceQueue,
)

OWNER_TIMEOUT_SECONDS = 2.0


async def resolve_queued(
    queue: WorkspaceQueue,
    action_id: str,
    decision: str,
    reason: str,
    *,
    resolved_by: str = "person",
    rule: str | None = None,
    owner_timeout: float = OWNER_TIMEOUT_SECONDS,
) -> ToolResult:
    """Apply or discard ``action_id``; every failure is an error result naming the cause."""
    if decision not in ("apply", "discard"):
        return ToolResult.error(f"Invalid decision {decision!r}: expected 'apply' or 'discard'.")
    ask_owner = False
    try:
        with queue.claim(action_id) as claim:
            record = claim.record
            if record.applied_by == "owner":
                if not record.orphaned():
                    ask_owner = True
                elif decision == "apply":
                    return ToolResult.error(
                        f"Cannot apply {record.id} ({record.label}): {ORPHANED_REASON}. "
                        "It can only be discarded.",
                        details={"action_id": record.id, "orphaned": True},
                    )
                else:
                    return await _resolve_here(queue, claim, decision, reason, resolved_by, rule)
            else:
                return await _resolve_here(queue, claim, decision, reason, resolved_by, rule)
    except (ActionGone, ActionBusy) as exc:
        details: dict[str, Any] = {"action_id": action_id}
        if isinstance(exc, ActionGone) and exc.replaced_by:
            details["replaced_by"] = exc.replaced_by
        return ToolResult.error(str(exc), details=details)
    except QueueRecordError as exc:
        if decision == "discard":
            # An unusable record (damaged, unsigned, newer format) is never acted on, but a
            # person may always remove it.
            try:
                return ToolResult.text_result(queue.drop_unusable(action_id, reason))
            except QueueError as again:
                return ToolResult.error(str(again), details={"action_id": action_id})
        return ToolResult.error(str(exc), details={"action_id": action_id})
    except QueueError as exc:
        return ToolResult.error(str(exc), details={"action_id": action_id})
    assert ask_owner
    return _ask_owner(queue, action_id, decision, reason, resolved_by, rule, owner_timeout)


async def _resolve_here(
    queue: WorkspaceQueue,
    claim: Claim,
    decision: str,
    reason: str,
    resolved_by: str,
    rule: str | None,
) -> ToolResult:
    record = claim.record
    try:
        preview = queue.preview(record)
    except QueueRecordError:
        if decision == "apply":
            raise  # a clear message naming the record; nothing is written
        preview = None  # discarding needs no contents

    def apply(_reason: str) -> ToolResult:
        from redline.workspace.safe_apply import StaleError, apply_preview

        assert preview is not None
        claim.mark_applying()
        try:
            receipt = apply_preview(
                queue.root,
                preview,
                label=record.label,
                source_tool_name=record.source_tool_name,
                action_id=record.id,
            )
        except StaleError as exc:
            claim.back_to_pending(
                stale_reason="; ".join(f"{path} ({cause})" for path, cause in exc.problems)
                or str(exc)
            )
            raise
        except Exception:
            claim.back_to_pending()
            raise
        return ToolResult.text_result(
            record.applied_text or "",
            details={"entry_id": receipt.entry_id, "files": list(receipt.files)},
        )

    def no_apply(_reason: str) -> ToolResult:
        return ToolResult.error(f"{ORPHANED_REASON}; it can only be discarded")

    action = PendingAction(
        label=record.label,
        apply=apply if preview is not None else no_apply,
        source_tool_name=record.source_tool_name,
        preview=preview,
        details=record.details,
    )
    action.id = record.id
    action.created_at = record.created_at
    action.stale, action.stale_reason = record.stale, record.stale_reason
    result = await resolve_pending(PendingActionStore.single(action), decision, reason)
    if not result.is_error:
        claim.finish(
            Resolution(record.id, decision, reason, resolved_by, rule, result_text=result.text)
        )
    return result.to_tool_result()


def _ask_owner(
    queue: WorkspaceQueue,
    action_id: str,
    decision: str,
    reason: str,
    resolved_by: str,
    rule: str | None,
    timeout: float,
) -> ToolResult:
    try:
        queue.request_owner(action_id, decision, reason, resolved_by=resolved_by, rule=rule)
        resolution = queue.wait_resolution(action_id, timeout)
    except QueueError as exc:
        return ToolResult.error(str(exc), details={"action_id": action_id})
    if resolution is None:
        queue.drop_request(action_id)
        record = queue.get(action_id)
        if record is not None and record.orphaned():
            return ToolResult.error(
                f"Cannot {decision} {action_id} ({record.label}) through its owner: "
                f"{ORPHANED_REASON}. It can only be discarded.",
                details={"action_id": action_id, "orphaned": True},
            )
        return ToolResult.error(
            f"The process that pushed {action_id} did not answer within {timeout:g} s; "
            "nothing was applied or discarded. Try again.",
            details={"action_id": action_id},
        )
    return resolution_result(resolution)


def resolution_result(resolution: Resolution) -> ToolResult:
    """A logged resolution as the ToolResult its resolver produced."""
    return ToolResult.text_result(
        resolution.result_text,
        details={
            "action_id": resolution.id,
            "action": resolution.decision,
            "reason": resolution.reason,
            "resolved_by": resolution.resolved_by,
            "replaced_by": resolution.replaced_by,
        },
        is_error=resolution.is_error,
    )
