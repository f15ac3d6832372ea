"""`redline mcp` refuses hostile paths as tool errors, without a traceback on its stderr."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, Implementation
from tests import warm_python

HANG = 60.0  # a guard for each round trip, not a timing assertion


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(item, "text", "") for item in result.content)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    return root


NUL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("propose_edit", {"path": "app\x00.py", "old": "x", "new": "y"}),
    ("propose_write", {"path": "a\x00b.py", "content": "z\n"}),
    ("ast_edit", {"ops": [{"pat": "x", "out": "y"}], "path": "app.py\x00"}),
]


async def test_a_nul_byte_in_a_path_is_a_clear_tool_error(workspace: Path, tmp_path: Path) -> None:
    command, args = warm_python.stdio_command("redline.cli", "mcp", "-C", str(workspace))
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        async with Client(
            stdio_client(params, errlog=err),
            client_info=Implementation(name="hostile", version="1.0"),
            read_timeout_seconds=HANG,
        ) as client:
            results = [
                await asyncio.wait_for(client.call_tool(tool, args), HANG)
                for tool, args in NUL_CALLS
            ]
    for (tool, _), result in zip(NUL_CALLS, results, strict=True):
        assert result.is_error, (tool, _text(result))
        assert "invalid path (contains a NUL byte" in _text(result), _text(result)
        assert "Nothing was queued" in _text(result)
    stderr = errlog.read_text()
    assert "Traceback" not in stderr
    assert "embedded null byte" not in stderr
    assert "unexpected" not in stderr.lower()
    assert not (workspace / ".redline" / "queue" / "actions").exists() or not list(
        (workspace / ".redline" / "queue" / "actions").iterdir()
    )
