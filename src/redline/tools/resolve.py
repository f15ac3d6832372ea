"""resolve: the model's hidden tool that applies or discards the top pending action.

A thin adapter: the decision itself is :func:`redline.review.resolve.resolve_pending`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from redline.review.resolve import ResolveAction, resolve_pending
from redline.review.result import ToolResult
from redline.tools.base import Tool, ToolContext

STORE_UNAVAILABLE = "Pending action store unavailable in this runtime."


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
