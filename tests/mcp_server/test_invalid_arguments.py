"""Arguments that do not fit a tool's schema: the field and what was wrong, not pydantic's dump."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from redline.mcp_server.server import build_server


async def refused(root: Path, tool: str, args: dict[str, Any]) -> str:
    server = build_server(root)
    with pytest.raises(ToolError) as caught:
        await server.call_tool(tool, args)
    return str(caught.value)


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        (
            "await_review",
            {"id": "pa-1", "timeout_s": 100},
            "Invalid arguments for await_review: timeout_s: Input should be less than or "
            "equal to 50.",
        ),
        (
            "propose_write",
            {"path": "a.txt"},
            "Invalid arguments for propose_write: content: required, but not given.",
        ),
        (
            "ast_edit",
            {"ops": [{"pat": "print($A)"}]},
            "Invalid arguments for ast_edit: ops.0.out: required, but not given.",
        ),
    ],
)
async def test_invalid_arguments_name_the_field(
    tmp_path: Path, tool: str, args: dict[str, Any], expected: str
) -> None:
    text = await refused(tmp_path, tool, args)
    assert text == expected
    assert "pydantic" not in text and "validation error" not in text and "type=" not in text
