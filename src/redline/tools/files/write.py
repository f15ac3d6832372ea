"""write: create or overwrite a whole file, previewed as a pending action."""

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
    os_error,
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
from redline.workspace.preview import (
    DecodeError,
    FileChange,
    FileCreate,
    FileModify,
    Preview,
    decode_text,
    sha256_bytes,
)


class WriteParams(BaseModel):
    path: str = Field(description="File to create or overwrite, relative to the workspace root")
    content: str = Field(description="The complete new content of the file")


class NothingToWrite(Exception):
    """The file already holds exactly the content; no action is needed."""


@dataclass(frozen=True)
class WriteRequest:
    root: Path
    path: str
    content: str


def _check_parents(root: Path, absolute: Path, rel: str) -> None:
    base = root.resolve()
    for parent in absolute.parents:
        if parent == base or not parent.is_relative_to(base):
            return
        if parent.exists() and not parent.is_dir():
            raise FileToolError(
                f"cannot write {rel}: {parent.relative_to(base).as_posix()} is a file, "
                "not a directory"
            )


def _change_for(request: WriteRequest) -> tuple[FileChange, str]:
    absolute, rel = locate(request.root, request.path)
    try:
        if rel == "." or absolute.is_dir():
            raise FileToolError(f"{rel} is a directory; write needs a file path")
        _check_parents(request.root, absolute, rel)
        exists = absolute.exists() or absolute.is_symlink()
    except OSError as exc:
        raise os_error(rel, exc) from None
    if not exists:
        return FileCreate(path=rel, new_text=request.content, encoding="utf-8"), rel
    data = read_bytes_bounded(absolute, rel)
    try:
        text, encoding = decode_text(data, rel)
    except DecodeError as exc:
        raise FileToolError(f"cannot overwrite {exc}") from None
    content = request.content
    if encoding == "utf-8-sig":
        # The encoding writes the BOM back; one in the content would double it.
        content = content.removeprefix("\ufeff")
    if content == text:
        raise NothingToWrite(f"{rel} already has exactly this content; nothing to write.")
    change = FileModify(
        path=rel, old_sha256=sha256_bytes(data), old_text=text, new_text=content, encoding=encoding
    )
    return change, rel


def build_write_action(request: WriteRequest) -> PendingAction:
    """Compute the write's pending action against the file as it is now."""
    change, rel = _change_for(request)
    preview = Preview([change])
    validate_preview(request.root, preview)

    def repreview() -> PendingAction:
        try:
            return build_write_action(request)
        except (FileToolError, NothingToWrite) as exc:
            raise RepreviewError(f"Cannot re-preview the write of {rel}: {exc}") from None

    done = "created" if isinstance(change, FileCreate) else "overwritten"
    return file_action(
        request.root,
        preview,
        label=f"Write: {rel}",
        source_tool_name="write",
        applied_text=f"Applied write to {rel} ({done}).",
        repreview=repreview,
        details=FileChangeDetails(path=rel, change=change.kind),
    )


class WriteTool(Tool):
    name = "write"
    label = "Write"
    description = (
        "Create a workspace file (missing folders are created), or overwrite one with new "
        "complete content (an existing file keeps its encoding). Nothing is written: the "
        "change becomes a pending preview that must be applied or discarded with resolve. "
        "Prefer edit for small changes to existing files."
    )
    parameters = WriteParams
    deferrable = True

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        try:
            args = coerce_params(params, WriteParams)
            if ctx.store is None:
                return ToolResult.error(STORE_UNAVAILABLE)
            request = WriteRequest(ctx.cwd, args.path, args.content)
            action = await asyncio.to_thread(build_write_action, request)
        except FileToolError as exc:
            return ToolResult.error(str(exc))
        except NothingToWrite as exc:
            return ToolResult.text_result(str(exc))
        action = ctx.store.push(action)
        details = action.details
        assert isinstance(details, FileChangeDetails)
        verb = "Create" if details.change == "create" else "Overwrite"
        return preview_result(action, f"{verb} {details.path}")
