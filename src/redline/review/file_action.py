"""The file-change action: a Preview that only safe apply may write."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from redline.review.result import ToolResult
from redline.review.store import ActionDetails, PendingAction, resolving_action
from redline.review.texts import applied_edited_text
from redline.workspace.hunks import Origin
from redline.workspace.preview import Preview


def file_action(
    root: Path,
    preview: Preview,
    *,
    label: str,
    source_tool_name: str,
    applied_text: str,
    repreview: Callable[[], PendingAction | Awaitable[PendingAction]] | None,
    details: ActionDetails = None,
    origin: Origin | None = None,
) -> PendingAction:
    """A PendingAction whose apply writes ``preview`` through safe apply, and nothing else.

    ``origin`` is set for derived actions (a remaining part, a rebase, a person's edit).
    Applying an edited action tells the model the diff from its proposal to what was written.
    """

    def apply(reason: str) -> ToolResult:
        # Imported here: safe apply is only needed once something is actually written.
        from redline.workspace.safe_apply import apply_preview

        # Synchronous on purpose: a cancelled resolve must never leave a write half-known.
        # ApplyError propagates; resolve reports it and keeps the action on the stack.
        # The action as the store holds it: its id, its Preview with the real paths the
        # store named when it was pushed.
        current = resolving_action()
        written = current.preview if current is not None and current.preview else preview
        receipt = apply_preview(
            root,
            written,
            label=label,
            source_tool_name=source_tool_name,
            action_id=(current.id or None) if current is not None else None,
        )
        text = applied_text
        if origin is not None and origin.proposal is not None:
            text = applied_edited_text(label, reason, origin.proposal, written)
        return ToolResult.text_result(
            text,
            details={"entry_id": receipt.entry_id, "files": list(receipt.files)},
        )

    return PendingAction(
        label=label,
        apply=apply,
        source_tool_name=source_tool_name,
        preview=preview,
        repreview=repreview if origin is None or origin.proposal is None else None,
        details=details,
        origin=origin,
        root=root,
        applied_text=applied_text,
        kind="ast_edit" if source_tool_name == "ast_edit" else "file_change",
        preview_apply=True,
    )
