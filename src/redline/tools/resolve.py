"""resolve: the one function that applies or discards the top pending action.

The model's ``resolve`` tool call, ``AgentSession.resolve`` and the dashboard's buttons
all end up in :func:`resolve_pending`.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Literal

from pydantic import BaseModel, Field

from redline.tools.base import Tool, ToolContext
from redline.tools.pending_action import PendingAction, PendingActionStore
from redline.tools.result import ToolResult, coerce_result

NOTHING_PENDING = "No pending action to resolve. Nothing to apply or discard."
STORE_UNAVAILABLE = "Pending action store unavailable in this runtime."

ResolveAction = Literal["apply", "discard"]


def _details(
    action: str, reason: str, pending: PendingAction, result_details: Any = None
) -> dict[str, Any]:
    return {
        "action": action,
        "reason": reason,
        "source_tool_name": pending.source_tool_name,
        "label": pending.label,
        "action_id": pending.id,
        "result_details": result_details,
    }


async def _call(callback: Any, reason: str) -> object:
    value = callback(reason)
    if inspect.isawaitable(value):
        value = await value
    return value


async def _acquire(store: PendingActionStore) -> None:
    # Polling keeps cancellation safe: a cancelled waiter never ends up holding the lock.
    while not store.resolution_lock.acquire(blocking=False):
        await asyncio.sleep(0.002)


async def resolve_pending(
    store: PendingActionStore,
    action: str,
    reason: str,
    action_id: str | None = None,
) -> ToolResult:
    """Apply or discard the top action; it leaves the stack only if its callback succeeded."""
    if action not in ("apply", "discard"):
        return ToolResult.error(
            f"Invalid resolve action {action!r}: expected 'apply' or 'discard'."
        )
    if not isinstance(reason, str):
        return ToolResult.error("The resolve reason must be a string.")
    await _acquire(store)
    try:
        pending = store.peek()
        if pending is None:
            return ToolResult.error(NOTHING_PENDING)
        if action_id is not None and pending.id != action_id:
            return ToolResult.error(
                f"The top pending action changed: you were looking at {action_id}, but the top "
                f"is now {pending.id} ({pending.label}). Nothing was applied or discarded.",
                details={"expected_action_id": action_id, "top_action_id": pending.id},
            )
        if action == "apply":
            return await _apply(store, pending, reason)
        return await _discard(store, pending, reason)
    finally:
        store.resolution_lock.release()


async def _apply(store: PendingActionStore, pending: PendingAction, reason: str) -> ToolResult:
    if pending.stale:
        return ToolResult.error(
            f"Refused to apply {pending.label}: it is stale ({pending.stale_reason}). "
            "Nothing was written; re-preview it or discard it.",
            details=_details("apply", reason, pending),
        )
    try:
        result = coerce_result(await _call(pending.apply, reason))
    except Exception as exc:
        return _failed(
            "apply", pending, reason, f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)
        )
    if result is not None and result.is_error:
        return _failed(
            "apply",
            pending,
            reason,
            result.text or "the apply callback reported an error",
            result.details,
        )
    store.remove(pending.id)
    text = (
        result.text if result is not None and result.text.strip() else f"Applied: {pending.label}."
    )
    return ToolResult.text_result(
        text, details=_details("apply", reason, pending, result.details if result else None)
    )


async def _discard(store: PendingActionStore, pending: PendingAction, reason: str) -> ToolResult:
    result: ToolResult | None = None
    if pending.reject is not None:
        try:
            result = coerce_result(await _call(pending.reject, reason))
        except Exception as exc:
            return _failed("discard", pending, reason, str(exc) or type(exc).__name__)
        if result is not None and result.is_error:
            return _failed(
                "discard",
                pending,
                reason,
                result.text or "the reject callback reported an error",
                result.details,
            )
    store.remove(pending.id)
    if result is None or not result.text.strip():
        text = f"Discarded: {pending.label}. Reason: {reason}"
    else:
        text = result.text
    return ToolResult.text_result(
        text, details=_details("discard", reason, pending, result.details if result else None)
    )


def _failed(
    action: str, pending: PendingAction, reason: str, cause: str, result_details: Any = None
) -> ToolResult:
    verb = "Apply" if action == "apply" else "Discard"
    cause = cause.rstrip().rstrip(".")
    return ToolResult.error(
        f"{verb} failed for {pending.label}: {cause}. The action is still pending.",
        details=_details(action, reason, pending, result_details),
    )


class ResolveParams(BaseModel):
    action: ResolveAction = Field(
        description="apply writes the top pending action; discard drops it"
    )
    reason: str = Field(description="Why; shown to the person and passed to the action")


class ResolveTool(Tool):
    """The hidden tool that lets the model finish the top pending preview."""

    name = "resolve"
    label = "Resolve"
    description = (
        "Apply or discard the most recent pending preview (the top of the pending stack). "
        "Use action='apply' to write it or action='discard' to drop it, with a short reason."
    )
    parameters = ResolveParams
    hidden = True

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        assert isinstance(params, ResolveParams)
        if ctx.store is None:
            return ToolResult.error(STORE_UNAVAILABLE)
        return await resolve_pending(ctx.store, params.action, params.reason)
