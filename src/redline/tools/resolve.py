"""resolve: the one function that applies or discards the top pending action.

The model's ``resolve`` tool call, ``AgentSession.resolve`` and the dashboard's buttons
all end up in :func:`resolve_pending`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from redline.tools.base import Tool, ToolContext
from redline.tools.pending_action import PendingAction, PendingActionStore
from redline.tools.result import ToolResult, coerce_result

NOTHING_PENDING = "No pending action to resolve. Nothing to apply or discard."
STORE_UNAVAILABLE = "Pending action store unavailable in this runtime."

ResolveAction = Literal["apply", "discard"]
ResolveKind = Literal["applied", "discarded", "failed", "top_changed", "invalid"]


@dataclass(frozen=True)
class ResolvedAction:
    """The facts of the action a resolution was about (it may still be pending)."""

    action_id: str
    label: str
    source_tool_name: str

    @classmethod
    def of(cls, pending: PendingAction) -> ResolvedAction:
        return cls(pending.id, pending.label, pending.source_tool_name)


@dataclass(frozen=True)
class ResolveOutcome:
    """What one apply or discard did.

    ``kind`` says how it ended: ``applied``/``discarded`` (the action left the stack),
    ``failed`` (refused as stale, or its callback failed: the action is still pending),
    ``top_changed`` (``action_id`` was no longer on top: nothing happened) or ``invalid``
    (bad arguments or an empty stack). ``text`` is what the model reads.
    """

    kind: ResolveKind
    text: str
    verb: ResolveAction | None = None
    reason: str = ""
    action: ResolvedAction | None = None
    result_details: Any = None
    expected_action_id: str = ""
    top_action_id: str = ""

    @property
    def is_error(self) -> bool:
        return self.kind not in ("applied", "discarded")

    @property
    def top_changed(self) -> bool:
        return self.kind == "top_changed"

    def tool_details(self) -> dict[str, Any] | None:
        """The details dict of the tool result (the wire shape of ``tool_end`` events)."""
        if self.kind == "top_changed":
            return {
                "expected_action_id": self.expected_action_id,
                "top_action_id": self.top_action_id,
            }
        if self.action is None:
            return None
        return {
            "action": self.verb,
            "reason": self.reason,
            "source_tool_name": self.action.source_tool_name,
            "label": self.action.label,
            "action_id": self.action.action_id,
            "result_details": self.result_details,
        }

    def to_tool_result(self) -> ToolResult:
        return ToolResult.text_result(
            self.text, details=self.tool_details(), is_error=self.is_error
        )


def _invalid(text: str) -> ResolveOutcome:
    return ResolveOutcome("invalid", text)


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
    *,
    resolved_by: str | None = None,
    rule: str | None = None,
) -> ResolveOutcome:
    """Apply or discard the top action; it leaves the stack only if its callback succeeded.

    ``resolved_by`` (and ``rule``) is who a queue-backed store logs this one resolution as;
    None keeps the store's default."""
    if action not in ("apply", "discard"):
        return _invalid(f"Invalid resolve action {action!r}: expected 'apply' or 'discard'.")
    if not isinstance(reason, str):
        return _invalid("The resolve reason must be a string.")
    verb: ResolveAction = "apply" if action == "apply" else "discard"
    await _acquire(store)
    try:
        pending = store.peek()
        if pending is None:
            return _invalid(NOTHING_PENDING)
        if action_id is not None and pending.id != action_id:
            return ResolveOutcome(
                "top_changed",
                f"The top pending action changed: you were looking at {action_id}, but the top "
                f"is now {pending.id} ({pending.label}). Nothing was applied or discarded.",
                verb=verb,
                reason=reason,
                expected_action_id=action_id,
                top_action_id=pending.id,
            )
        credit = (
            store.credited(pending.id, resolved_by, rule)
            if resolved_by is not None
            else contextlib.nullcontext()
        )
        with credit:
            if action == "apply":
                return await _apply(store, pending, reason)
            return await _discard(store, pending, reason)
    finally:
        store.resolution_lock.release()


async def _apply(store: PendingActionStore, pending: PendingAction, reason: str) -> ResolveOutcome:
    if pending.stale:
        return ResolveOutcome(
            "failed",
            f"Refused to apply {pending.label}: it is stale ({pending.stale_reason}). "
            "Nothing was written; re-preview it or discard it.",
            "apply",
            reason,
            ResolvedAction.of(pending),
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
    return ResolveOutcome(
        "applied",
        text,
        "apply",
        reason,
        ResolvedAction.of(pending),
        result.details if result else None,
    )


async def _discard(
    store: PendingActionStore, pending: PendingAction, reason: str
) -> ResolveOutcome:
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
    return ResolveOutcome(
        "discarded",
        text,
        "discard",
        reason,
        ResolvedAction.of(pending),
        result.details if result else None,
    )


def _failed(
    action: ResolveAction,
    pending: PendingAction,
    reason: str,
    cause: str,
    result_details: Any = None,
) -> ResolveOutcome:
    verb = "Apply" if action == "apply" else "Discard"
    cause = cause.rstrip().rstrip(".")
    return ResolveOutcome(
        "failed",
        f"{verb} failed for {pending.label}: {cause}. The action is still pending.",
        action,
        reason,
        ResolvedAction.of(pending),
        result_details,
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
        outcome = await resolve_pending(ctx.store, params.action, params.reason)
        return outcome.to_tool_result()
