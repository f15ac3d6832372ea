"""The tools every session starts with (``resolve`` is added by the session itself)."""

from __future__ import annotations

from redline.tools.base import Tool

BUILTIN_TOOL_NAMES: tuple[str, ...] = ("read", "ls", "find", "grep", "edit", "write", "ast_edit")


def builtin_tools() -> list[Tool]:
    """Fresh instances of the built-in tools, in BUILTIN_TOOL_NAMES order."""
    from redline.tools.files import (
        EditTool,
        FindTool,
        GrepTool,
        LsTool,
        ReadTool,
        WriteTool,
    )

    tools: list[Tool] = [ReadTool(), LsTool(), FindTool(), GrepTool(), EditTool(), WriteTool()]
    try:
        from redline.tools.ast_edit.tool import AstEditTool
    except ModuleNotFoundError as exc:
        # ast_edit is built separately and may be absent from a partial checkout; the
        # other tools must still work. A broken ast_edit module (any other import
        # failure) is a bug and surfaces.
        if exc.name not in ("redline.tools.ast_edit", "redline.tools.ast_edit.tool"):
            raise
    else:
        tools.append(AstEditTool())
    return tools
