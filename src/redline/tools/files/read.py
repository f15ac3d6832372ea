"""read: a text file with line numbers, a window at a time."""

from __future__ import annotations

import asyncio
import codecs
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, Field

from redline.review.result import ToolResult
from redline.tools.base import Tool, ToolContext
from redline.tools.files._common import FileToolError, coerce_params, locate, os_error
from redline.workspace.fsutil import NotRegularFileError, open_regular

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# Bytes read of one line before the rest is skipped: enough for MAX_LINE_CHARS of UTF-8.
_MAX_LINE_BYTES = MAX_LINE_CHARS * 4
# A model cannot use more than this per call; the rest is a later offset away.
MAX_OUTPUT_CHARS = 100_000
# How far past the window we keep counting lines to report the total.
_COUNT_BUDGET_BYTES = 64 * 1024 * 1024
_CHUNK = 64 * 1024


class ReadParams(BaseModel):
    path: str = Field(description="File to read, relative to the workspace root")
    offset: int | None = Field(
        default=None, ge=1, description="1-based line number to start at (default 1)"
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"How many lines to show (default {DEFAULT_LIMIT})"
    )


def _read_line(handle: BinaryIO) -> tuple[bytes, int] | None:
    """One line's first bytes (without the newline) and how many bytes were skipped."""
    head = handle.readline(_MAX_LINE_BYTES)
    if not head:
        return None
    skipped = 0
    if not head.endswith(b"\n"):
        while True:
            rest = handle.readline(_CHUNK)
            if not rest:
                break
            skipped += len(rest) - (1 if rest.endswith(b"\n") else 0)
            if rest.endswith(b"\n"):
                break
    head = head.removesuffix(b"\n")
    if skipped == 0:
        head = head.removesuffix(b"\r")
    return head, skipped


def _decode(head: bytes, cut: bool, rel: str, number: int) -> str:
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        # A cut line may end inside a multi-byte character; final=False keeps that quiet.
        return decoder.decode(head, final=not cut)
    except UnicodeDecodeError:
        raise FileToolError(
            f"{rel}: not valid UTF-8 (line {number}); read shows UTF-8 text files only"
        ) from None


def _count_rest(handle: BinaryIO) -> tuple[int, bool]:
    """Lines after the current position (just past a newline), and whether counting
    reached the end of the file."""
    count = 0
    budget = _COUNT_BUDGET_BYTES
    last = b"\n"
    while budget > 0:
        chunk = handle.read(min(_CHUNK, budget))
        if not chunk:
            tail = 0 if last in (b"", b"\n") else 1
            return count + tail, True
        count += chunk.count(b"\n")
        last = chunk[-1:]
        budget -= len(chunk)
    return count, False


def read_window(absolute: Path, rel: str, offset: int, limit: int) -> str:
    try:
        if absolute.is_dir():
            raise FileToolError(f"{rel} is a directory; use ls to list its entries")
        if not absolute.exists():
            raise FileToolError(f"{rel}: no such file")
        with open_regular(absolute) as handle:
            return _render(handle, rel, offset, limit)
    except NotRegularFileError as exc:
        raise FileToolError(f"{rel} {exc.strerror}; read shows regular text files only") from None
    except OSError as exc:
        raise os_error(rel, exc) from None


def _render(handle: BinaryIO, rel: str, offset: int, limit: int) -> str:
    start = handle.read(8192)
    if b"\x00" in start:
        raise FileToolError(f"{rel}: binary file (contains NUL bytes); read shows text files only")
    handle.seek(3 if start.startswith(codecs.BOM_UTF8) else 0)
    out: list[str] = []
    used = 0
    number = 0
    last_shown = 0
    while True:
        line = _read_line(handle)
        if line is None:
            break
        head, skipped = line
        number += 1
        if number < offset:
            continue
        if number >= offset + limit:
            # This line exists but lies past the window: count it and the rest.
            more, complete = _count_rest(handle)
            return _finish(out, rel, offset, last_shown, number + more, complete)
        text = _decode(head, skipped > 0, rel, number)
        if skipped or len(text) > MAX_LINE_CHARS:
            shown = text[:MAX_LINE_CHARS]
            more_bytes = len(head) - len(shown.encode("utf-8")) + skipped
            text = f"{shown} … [line truncated; {more_bytes} more bytes]"
        rendered = f"{number:>6}\t{text}"
        if out and used + len(rendered) > MAX_OUTPUT_CHARS:
            more, complete = _count_rest(handle)
            return _finish(out, rel, offset, last_shown, number + more, complete, for_size=True)
        out.append(rendered)
        used += len(rendered) + 1
        last_shown = number
    if number == 0:
        return f"({rel} is empty)"
    if number < offset:
        raise FileToolError(
            f"offset {offset} is past the end of {rel} ({number} line{'s' if number != 1 else ''})"
        )
    return "\n".join(out)


def _finish(
    out: list[str],
    rel: str,
    offset: int,
    last_shown: int,
    total: int,
    complete: bool,
    for_size: bool = False,
) -> str:
    of = f"of {total}" if complete else f"of more than {total}"
    why = " (output size limit)" if for_size else ""
    note = (
        f"[Showing lines {offset}-{last_shown} {of} in {rel}{why}. "
        f"Use offset={last_shown + 1} to read more.]"
    )
    return "\n".join([*out, "", note])


class ReadTool(Tool):
    name = "read"
    label = "Read"
    description = (
        "Read a UTF-8 text file in the workspace. Lines are numbered from 1 like `cat -n` "
        f"(line number, tab, text). Shows up to {DEFAULT_LIMIT} lines from `offset`; "
        f"lines over {MAX_LINE_CHARS} characters are cut with a marker. When output is cut, "
        "a note at the end says which offset to use to read on. Binary and non-UTF-8 files "
        "are refused; use ls for folders."
    )
    parameters = ReadParams

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        try:
            args = coerce_params(params, ReadParams)
            absolute, rel = locate(ctx.cwd, args.path)
            text = await asyncio.to_thread(
                read_window, absolute, rel, args.offset or 1, args.limit or DEFAULT_LIMIT
            )
        except FileToolError as exc:
            return ToolResult.error(str(exc))
        return ToolResult.text_result(text)
