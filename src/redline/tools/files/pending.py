"""The pending action edit and write push: a Preview that only safe apply may write."""

from __future__ import annotations

from redline.review.file_action import file_action
from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.tools.base import PREVIEW_BANNER
from redline.workspace.preview import Preview

STORE_UNAVAILABLE = "Pending action store unavailable in this runtime; nothing can be previewed."


__all__ = ["STORE_UNAVAILABLE", "RepreviewError", "file_action", "preview_result"]


class RepreviewError(ValueError):
    """A pending change can no longer be computed against the current files."""


def preview_result(action: PendingAction, summary: str) -> ToolResult:
    """The tool result of a pushed preview: banner, one summary line, the diff."""
    preview = action.preview if action.preview is not None else Preview()
    stats = preview.stats()
    text = (
        f"{PREVIEW_BANNER}\n"
        f"{summary} (+{stats.added} -{stats.removed} lines; pending action {action.id}).\n\n"
        f"{preview.diff()}"
    )
    return ToolResult.text_result(
        text,
        details={
            "action_id": action.id,
            "label": action.label,
            "source_tool_name": action.source_tool_name,
            "preview": preview.summary(),
        },
    )
