"""The pending action edit and write push: a Preview that only safe apply may write."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from redline.tools.base import PREVIEW_BANNER
from redline.tools.pending_action import PendingAction
from redline.tools.result import ToolResult
from redline.workspace.preview import Preview

STORE_UNAVAILABLE = "Pending action store unavailable in this runtime; nothing can be previewed."


class RepreviewError(ValueError):
    """A pending change can no longer be computed against the current files."""


def file_action(
    root: Path,
    preview: Preview,
    *,
    label: str,
    source_tool_name: str,
    applied_text: str,
    repreview: Callable[[], PendingAction],
    details: object = None,
) -> PendingAction:
    """A PendingAction whose apply writes ``preview`` through safe apply, and nothing else."""

    def apply(reason: str) -> ToolResult:
        # Imported here: safe apply is only needed once something is actually written.
        from redline.workspace.safe_apply import apply_preview

        # Synchronous on purpose: a cancelled resolve must never leave a write half-known.
        # ApplyError propagates; resolve reports it and keeps the action on the stack.
        receipt = apply_preview(
            root,
            preview,
            label=label,
            source_tool_name=source_tool_name,
            action_id=action.id or None,
        )
        return ToolResult.text_result(
            applied_text,
            details={"entry_id": receipt.entry_id, "files": list(receipt.files)},
        )

    apply.__redline_preview_apply__ = True  # type: ignore[attr-defined]  # queue: applied_by "preview"
    action = PendingAction(
        label=label,
        apply=apply,
        source_tool_name=source_tool_name,
        preview=preview,
        repreview=repreview,
        details=details,
    )
    return action


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
