"""Approvals: an agent asked for permission with a diff, a person allowed it, and the
agent then writes the file itself (Gemini CLI) or through ``fs/write_text_file``.

:class:`Approvals` is mixed into :class:`~redline.drivers.acp.client.AcpAgent`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import acp
from acp import schema

from redline.drivers.acp import events as acp_events
from redline.drivers.acp.held import NOT_WRITTEN, _Approval, _ToolCall
from redline.drivers.acp.mapping import (
    MappedChange,
    MappingError,
    content_sha256,
    read_disk,
)
from redline.drivers.acp.spec import AgentSpec
from redline.review.events import ErrorEvent, EventStream
from redline.workspace.preview import FileCreate, FileModify, Preview

if TYPE_CHECKING:
    pass


class Approvals:
    """Approved changes of running tool calls, and the journal entries that make them undoable."""

    if TYPE_CHECKING:
        root: Path
        spec: AgentSpec
        events: EventStream
        _approvals: list[_Approval]
        _tool_calls: dict[str, _ToolCall]

    # -- approvals (Gemini asks, then writes through fs) --------------------------------
    def _matching_approval(self, rel: str, preview: Preview) -> _Approval | None:
        change = preview.changes[0]
        base = change.old_sha256 if isinstance(change, FileModify) else None
        content = content_sha256(change)
        for approval in self._approvals:
            call = self._tool_calls.get(approval.tool_call_id)
            if approval.used or (call is not None and call.status in ("completed", "failed")):
                continue
            if (approval.rel, approval.base_sha256, approval.content_sha256) == (
                rel,
                base,
                content,
            ):
                return approval
        return None

    def _apply_approved(
        self, approval: _Approval, rel: str, preview: Preview
    ) -> schema.WriteTextFileResponse:
        from redline.workspace.errors import ApplyError
        from redline.workspace.journal import finish_external
        from redline.workspace.safe_apply import apply_preview

        approval.used = True
        if approval.entry_id is not None:
            # The pre-image entry is not needed: redline writes it itself, journaled.
            with contextlib.suppress(Exception):
                finish_external(self.root, approval.entry_id)
            approval.entry_id = None
        try:
            receipt = apply_preview(
                self.root, preview, label=f"Write: {rel}", source_tool_name="acp:write_text_file"
            )
        except ApplyError as exc:
            raise acp.RequestError(NOT_WRITTEN, str(exc)) from None
        self.events.emit(
            acp_events.AcpNotice(
                message=(
                    f"Applied the agent's write of {rel} at once: it matches the change "
                    f"approved for tool call {approval.tool_call_id} "
                    f"(journal entry {receipt.entry_id})."
                ),
                path=rel,
                tool_call_id=approval.tool_call_id,
                entry_id=receipt.entry_id,
            )
        )
        return schema.WriteTextFileResponse()

    def _tool_call_ended(self, tool_call_id: str) -> None:
        """Record what a self-writing agent wrote after its approval, for undo."""
        from redline.workspace.journal import finish_external

        for approval in self._approvals:
            if approval.tool_call_id != tool_call_id or approval.entry_id is None:
                continue
            entry_id, approval.entry_id = approval.entry_id, None
            try:
                outcome = finish_external(self.root, entry_id)
            except Exception as exc:
                self.events.emit(
                    ErrorEvent(f"Could not record the agent's write of {approval.rel}: {exc}")
                )
                continue
            if not outcome.changed:
                continue
            approval.used = True
            message = (
                f"The agent wrote {approval.rel} itself; recorded as applied "
                f"(journal entry {outcome.entry_id}), `redline undo` reverts it."
            )
            diff_text: str | None = None
            if not outcome.as_approved and approval.approved_text is not None:
                with contextlib.suppress(MappingError, OSError):
                    actual = read_disk(self.root, approval.rel).text or ""
                    diff = Preview(
                        [FileModify(approval.rel, "", approval.approved_text, actual)]
                    ).diff()
                    message += " It differs from what was approved:\n" + diff
                    diff_text = diff
            self.events.emit(
                acp_events.AcpNotice(
                    message=message,
                    path=approval.rel,
                    tool_call_id=tool_call_id,
                    entry_id=outcome.entry_id,
                    diff=diff_text,
                )
            )

    def _approve(self, tool_call_id: str, mapped: list[MappedChange], label: str) -> None:
        """Record the approval; journal each file's pre-image in case the agent writes it."""
        from redline.workspace.journal import begin_external

        for item in mapped:
            change = item.change
            if not isinstance(change, (FileModify, FileCreate)):
                continue
            approval = _Approval(
                tool_call_id,
                change.path,
                change.old_sha256 if isinstance(change, FileModify) else None,
                content_sha256(change),
                change.new_text,
            )
            # Synchronous on purpose: the pre-image is on disk before the agent hears "allow".
            approval.entry_id = begin_external(
                self.root,
                change.path,
                label=f"{label} ({self.spec.display_name})",
                source_tool_name=f"acp:{self._tool_calls.get(tool_call_id, _ToolCall()).kind}",
                approved_sha256=approval.content_sha256,
            )
            self._approvals.append(approval)
