"""grep: a Python regular expression over the workspace's text files."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from redline.review.result import ToolResult
from redline.tools.base import Tool, ToolContext
from redline.tools.files._common import (
    FileToolError,
    coerce_params,
    default_dot,
    display,
    locate,
    os_error,
)
from redline.tools.files.globbing import compile_glob
from redline.workspace.fsutil import open_regular
from redline.workspace.paths import ConfinementError, iter_workspace_files, resolve_inside
from redline.workspace.preview import DecodeError, decode_text

MAX_MATCHES = 200
MAX_MATCH_LINE_CHARS = 500
# Larger files are skipped (and counted in a note): they are rarely source and slow to scan.
MAX_GREP_FILE_BYTES = 5 * 1024 * 1024
# Bounds one call's work in a huge workspace; the note tells the model to narrow down.
MAX_GREP_TOTAL_BYTES = 256 * 1024 * 1024


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def _clip(line: str) -> str:
    if len(line) <= MAX_MATCH_LINE_CHARS:
        return line
    return f"{line[:MAX_MATCH_LINE_CHARS]} … [line truncated]"


def grep_files(root: Path, absolute: Path, rel: str, pattern: str, glob: str | None) -> str:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise FileToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    except (OverflowError, RecursionError):
        raise FileToolError(f"invalid regular expression {pattern!r}: too complex") from None
    try:
        matches_glob = compile_glob(glob) if glob else None
    except ValueError as exc:
        raise FileToolError(str(exc)) from None
    if not absolute.exists():
        raise FileToolError(f"{rel}: no such file or directory")
    out: list[str] = []
    too_large: list[str] = []
    capped = False
    scanned = 0
    out_of_budget = False
    try:
        for path in iter_workspace_files(root, absolute):
            base_rel = path if rel == "." else path[len(rel) + 1 :]
            if matches_glob is not None and not matches_glob(base_rel, path):
                continue
            try:
                # git lists symlinks as files; one leading outside must not be read.
                file = resolve_inside(root, path)
                size = file.stat().st_size
                if size > MAX_GREP_FILE_BYTES:
                    too_large.append(path)
                    continue
                if scanned + size > MAX_GREP_TOTAL_BYTES:
                    out_of_budget = True
                    break
                with open_regular(file) as handle:
                    data = handle.read()
                scanned += len(data)
            except ConfinementError:
                continue
            except OSError:
                continue  # vanished or unreadable since listing: nothing to show
            try:
                text, _ = decode_text(data, path)
            except DecodeError:
                continue  # binary and non-UTF-8 files hold no lines to match
            for number, line in enumerate(text.split("\n"), start=1):
                line = line.removesuffix("\r")
                if regex.search(line):
                    if len(out) == MAX_MATCHES:
                        capped = True
                        break
                    out.append(f"{path}:{number}: {_clip(line)}")
            if capped:
                break
    except OSError as exc:
        raise os_error(rel, exc) from None
    notes: list[str] = []
    if capped:
        notes.append(
            f"[Stopped after {MAX_MATCHES} matches; narrow the pattern, path or glob to see "
            "the rest.]"
        )
    if out_of_budget:
        notes.append(
            f"[Stopped after searching {_size(scanned)} of files; narrow the path or glob "
            "to search the rest.]"
        )
    if too_large:
        shown = ", ".join(too_large[:5]) + (" ..." if len(too_large) > 5 else "")
        notes.append(
            f"[Skipped {len(too_large)} file(s) over {_size(MAX_GREP_FILE_BYTES)}: {shown}]"
        )
    if not out:
        where = display(rel) + (f" (files matching {glob!r})" if glob else "")
        return "\n".join([f"No matches for {pattern!r} under {where}.", *notes])
    return "\n".join([*out, *(["", *notes] if notes else [])])


class GrepParams(BaseModel):
    pattern: str = Field(description="Python regular expression, searched line by line")
    path: str = Field(
        default=".", description="File or folder to search, relative to the workspace root"
    )
    glob: str | None = Field(
        default=None, description="Only search files matching this glob, e.g. '*.py'"
    )

    _null_path = field_validator("path", mode="before")(default_dot)


class GrepTool(Tool):
    name = "grep"
    label = "Grep"
    description = (
        "Search the workspace's UTF-8 text files for a Python regular expression (use (?i) "
        "for case-insensitive). Prints `path:line: text` for each matching line, at most "
        f"{MAX_MATCHES}. Leaves out binary files, .git/, .redline/, virtual environments "
        "and git-ignored files."
    )
    parameters = GrepParams

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        try:
            args = coerce_params(params, GrepParams)
            absolute, rel = locate(ctx.cwd, args.path or ".")
            text = await asyncio.to_thread(
                grep_files, ctx.cwd, absolute, rel, args.pattern, args.glob
            )
        except FileToolError as exc:
            return ToolResult.error(str(exc))
        return ToolResult.text_result(text)
