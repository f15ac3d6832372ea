"""edit: one exact text replacement, previewed as a pending action."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.tools.base import Tool, ToolContext
from redline.tools.files._common import (
    FileToolError,
    coerce_params,
    locate,
    read_bytes_bounded,
    validate_preview,
)
from redline.tools.files.pending import (
    STORE_UNAVAILABLE,
    RepreviewError,
    file_action,
    preview_result,
)
from redline.workspace.details import FileChangeDetails
from redline.workspace.preview import DecodeError, FileModify, Preview, decode_text, sha256_bytes


class EditParams(BaseModel):
    path: str = Field(description="File to change, relative to the workspace root")
    old: str = Field(
        description="Exact text to replace; must occur exactly once (include surrounding lines)"
    )
    new: str = Field(description="Text to put in its place")


def count_occurrences(text: str, needle: str) -> tuple[int, int]:
    """``(occurrences, index of the first)``, overlapping ones included: `aa` twice in `aaa`."""
    first = text.find(needle)
    if first == -1:
        return 0, -1
    count = 1
    index = text.find(needle, first + 1)
    while index != -1:
        count += 1
        index = text.find(needle, index + 1)
    return count, first


def replace_once(text: str, old: str, new: str, rel: str) -> str:
    """``text`` with its single occurrence of ``old`` replaced, or a FileToolError saying why not.

    Models write ``\\n`` even for CRLF files; when ``old`` as given is absent from a CRLF
    file, its CRLF spelling is tried (and ``new`` is written with CRLF to match).
    """
    count, index = count_occurrences(text, old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r" not in old:
        crlf_old = old.replace("\n", "\r\n")
        count, index = count_occurrences(text, crlf_old)
        if count:
            old, new = crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
    if count == 0:
        raise FileToolError(
            f"`old` not found in {rel}. It must match the file exactly, including whitespace "
            "and indentation; read the file and copy the text."
        )
    if count > 1:
        raise FileToolError(
            f"`old` is ambiguous: it occurs {count} times in {rel}. Add surrounding lines to "
            "`old` so it matches exactly once."
        )
    return text[:index] + new + text[index + len(old) :]


@dataclass(frozen=True)
class EditRequest:
    root: Path
    path: str
    old: str
    new: str


def build_edit_action(request: EditRequest) -> PendingAction:
    """Read the file now and compute the edit's pending action (raises FileToolError)."""
    if request.old == "":
        raise FileToolError("`old` is empty; to create or replace a whole file, use write")
    if request.old == request.new:
        raise FileToolError("`old` and `new` are identical; the edit would change nothing")
    absolute, rel = locate(request.root, request.path)
    data = read_bytes_bounded(absolute, rel)
    try:
        text, encoding = decode_text(data, rel)
    except DecodeError as exc:
        raise FileToolError(str(exc)) from None
    new_text = replace_once(text, request.old, request.new, rel)
    preview = Preview(
        [
            FileModify(
                path=rel,
                old_sha256=sha256_bytes(data),
                old_text=text,
                new_text=new_text,
                encoding=encoding,
            )
        ]
    )
    validate_preview(request.root, preview)

    def repreview() -> PendingAction:
        try:
            return build_edit_action(request)
        except FileToolError as exc:
            raise RepreviewError(f"Cannot re-preview the edit of {rel}: {exc}") from None

    return file_action(
        request.root,
        preview,
        label=f"Edit: {rel}",
        source_tool_name="edit",
        applied_text=f"Applied edit to {rel}.",
        repreview=repreview,
        details=FileChangeDetails(path=rel),
    )


class EditTool(Tool):
    name = "edit"
    label = "Edit"
    description = (
        "Replace one exact piece of text in a workspace file. `old` must occur exactly once "
        "(copy it from read output without the line numbers, with enough surrounding lines "
        "to be unique). Nothing is written: the change becomes a pending preview that must "
        "be applied or discarded with resolve."
    )
    parameters = EditParams
    deferrable = True

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        try:
            args = coerce_params(params, EditParams)
            if ctx.store is None:
                return ToolResult.error(STORE_UNAVAILABLE)
            request = EditRequest(ctx.cwd, args.path, args.old, args.new)
            action = await asyncio.to_thread(build_edit_action, request)
        except FileToolError as exc:
            return ToolResult.error(str(exc))
        action = ctx.store.push(action)
        assert isinstance(action.details, FileChangeDetails)
        return preview_result(action, f"Edit {action.details.path}")
