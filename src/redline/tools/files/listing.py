"""ls and find: what is in the workspace, minus what redline never looks at."""

from __future__ import annotations

import asyncio
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
from redline.workspace.paths import iter_workspace_files

MAX_LS_ENTRIES = 1000
MAX_FIND_RESULTS = 1000


def _relative_to_base(rel: str, base_rel: str) -> str:
    return rel if base_rel == "." else rel[len(base_rel) + 1 :]


def list_folder(root: Path, absolute: Path, rel: str) -> str:
    try:
        if not absolute.exists():
            raise FileToolError(f"{rel}: no such directory")
        if not absolute.is_dir():
            raise FileToolError(f"{rel} is a file, not a directory; use read to view it")
        # Entries come from the workspace listing so git-ignored files and folders (and
        # folders holding nothing but those) stay hidden, the same way find and grep see them.
        entries: set[str] = set()
        for path in iter_workspace_files(root, absolute):
            inside = _relative_to_base(path, rel)
            first, sep, _ = inside.partition("/")
            entries.add(first + "/" if sep else first)
    except OSError as exc:
        raise os_error(rel, exc) from None
    if not entries:
        return f"({display(rel)} has no files redline can see)"
    ordered = sorted(entries, key=lambda entry: entry.rstrip("/"))
    lines = ordered[:MAX_LS_ENTRIES]
    if len(ordered) > MAX_LS_ENTRIES:
        lines += [
            "",
            f"[Showing {MAX_LS_ENTRIES} of {len(ordered)} entries; use find with a pattern "
            "to narrow down.]",
        ]
    return "\n".join(lines)


class LsParams(BaseModel):
    path: str = Field(default=".", description="Folder to list, relative to the workspace root")

    _null_path = field_validator("path", mode="before")(default_dot)


class LsTool(Tool):
    name = "ls"
    label = "List"
    description = (
        "List the entries of a folder in the workspace (default: the root), one per line, "
        "folders with a trailing '/'. Leaves out .git/, .redline/, virtual environments "
        "and git-ignored files."
    )
    parameters = LsParams

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        try:
            args = coerce_params(params, LsParams)
            absolute, rel = locate(ctx.cwd, args.path or ".")
            text = await asyncio.to_thread(list_folder, ctx.cwd, absolute, rel)
        except FileToolError as exc:
            return ToolResult.error(str(exc))
        return ToolResult.text_result(text)


def find_files(root: Path, absolute: Path, rel: str, pattern: str) -> str:
    try:
        matches = compile_glob(pattern)
    except ValueError as exc:
        raise FileToolError(str(exc)) from None
    try:
        if not absolute.exists():
            raise FileToolError(f"{rel}: no such file or directory")
        found: list[str] = []
        total = 0
        for path in iter_workspace_files(root, absolute):
            if matches(_relative_to_base(path, rel), path):
                total += 1
                if len(found) < MAX_FIND_RESULTS:
                    found.append(path)
    except OSError as exc:
        raise os_error(rel, exc) from None
    if not found:
        return f"No files match {pattern!r} under {display(rel)}."
    if total > len(found):
        found += [
            "",
            f"[Showing the first {len(found)} of {total} matches; narrow the pattern or path.]",
        ]
    return "\n".join(found)


class FindParams(BaseModel):
    pattern: str = Field(
        description=(
            "Glob: '*.py' matches file names at any depth; a pattern with '/' such as "
            "'src/**/*.py' matches paths. Supports *, ?, [...], ** and {a,b}."
        )
    )
    path: str = Field(default=".", description="Folder to search, relative to the workspace root")

    _null_path = field_validator("path", mode="before")(default_dot)


class FindTool(Tool):
    name = "find"
    label = "Find"
    description = (
        "Find workspace files by glob pattern. Prints matching paths relative to the "
        f"workspace root, sorted, at most {MAX_FIND_RESULTS}. Leaves out .git/, .redline/, "
        "virtual environments and git-ignored files."
    )
    parameters = FindParams

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        try:
            args = coerce_params(params, FindParams)
            absolute, rel = locate(ctx.cwd, args.path or ".")
            text = await asyncio.to_thread(find_files, ctx.cwd, absolute, rel, args.pattern)
        except FileToolError as exc:
            return ToolResult.error(str(exc))
        return ToolResult.text_result(text)
