"""`redline mcp` over stdio, driven by the mcp package's own client in a real subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, Implementation
from tests import warm_python

from redline.mcp_server.proposals import MAX_CONTENT_BYTES

HANG = 60.0  # generous guard for every client round trip


@asynccontextmanager
async def connect(
    root: Path, name: str = "test-agent", mode: str = "auto"
) -> AsyncIterator[Client]:
    command, args = warm_python.stdio_command("redline.cli", "mcp", "-C", str(root))
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with Client(
        params,
        client_info=Implementation(name=name, version="1.0"),
        read_timeout_seconds=HANG,
        mode=mode,
    ) as client:
        yield client


async def call(client: Client, tool: str, args: dict[str, Any]) -> CallToolResult:
    return await asyncio.wait_for(client.call_tool(tool, args), HANG)


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(item, "text", "") for item in result.content)


def redline(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redline.cli", *args[:1], "-C", str(root), *args[1:]],
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )


def pending(root: Path) -> list[dict[str, Any]]:
    done = redline(root, "pending", "list", "--json")
    assert done.returncode == 0, done.stderr
    actions: list[dict[str, Any]] = json.loads(done.stdout)["actions"]
    return actions


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text('def greet():\n    print("hi")\n    print("hi")\n')
    (root / "notes.txt").write_text("alpha\nbeta\n")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02binary\xff")
    return root


async def test_tools_and_schemas(workspace: Path) -> None:
    async with connect(workspace) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {
        "propose_edit",
        "propose_write",
        "ast_edit",
        "review_status",
        "await_review",
    }

    def props(name: str) -> dict[str, Any]:
        schema: dict[str, Any] = tools[name].input_schema
        return schema

    assert set(props("propose_edit")["properties"]) == {"path", "old", "new", "revises"}
    assert set(props("propose_edit")["required"]) == {"path", "old", "new"}
    assert set(props("propose_write")["properties"]) == {"path", "content", "revises"}
    assert set(props("propose_write")["required"]) == {"path", "content"}
    ast = props("ast_edit")
    assert set(ast["properties"]) == {"ops", "path", "glob", "limit", "revises"}
    assert ast["required"] == ["ops"]
    op = ast["$defs"]["AstEditOp"]
    assert set(op["properties"]) == {"pat", "out"}
    assert set(props("review_status")["properties"]) == {"id"}
    assert props("review_status").get("required", []) == []
    wait = props("await_review")
    assert set(wait["properties"]) == {"id", "timeout_s"}
    assert wait["required"] == ["id"]
    assert wait["properties"]["timeout_s"]["default"] == 30
    assert wait["properties"]["timeout_s"]["maximum"] == 50


async def test_edit_reviewed_from_another_process(workspace: Path) -> None:
    before = (workspace / "notes.txt").read_text()
    async with connect(workspace, "claude-code") as client:
        result = await call(
            client, "propose_edit", {"path": "notes.txt", "old": "beta\n", "new": "gamma\n"}
        )
        assert not result.is_error, text(result)
        first = text(result).splitlines()[0]
        assert first.startswith("Queued pa-")
        assert first.endswith("for review: Edit: notes.txt. Nothing has been written yet.")
        action_id = first.split()[1]
        assert "-beta" in text(result) and "+gamma" in text(result)
        assert (workspace / "notes.txt").read_text() == before

        listed = pending(workspace)
        assert [a["id"] for a in listed] == [action_id]
        item = listed[0]
        assert item["source"]["kind"] == "mcp"
        assert item["source"]["name"] == "claude-code"  # clientInfo.name: mcp:claude-code
        assert item["source_tool_name"] == "mcp:propose_edit"
        assert item["applied_by"] == "preview"

        status = await call(client, "review_status", {})
        assert f"{action_id} pending: Edit: notes.txt" in text(status)
        one = await call(client, "review_status", {"id": action_id})
        assert text(one) == f"{action_id} pending: Edit: notes.txt"

        waiting = asyncio.create_task(
            call(client, "await_review", {"id": action_id, "timeout_s": 50})
        )
        done = await asyncio.to_thread(
            redline, workspace, "pending", "apply", action_id, "--reason", "looks right"
        )
        assert done.returncode == 0, done.stderr
        outcome = text(await asyncio.wait_for(waiting, HANG))
        lines = outcome.splitlines()
        assert lines[0] == f"{action_id} applied: Edit: notes.txt. Reason: looks right"
        assert lines[1] == "Applied edit to notes.txt."
        assert (workspace / "notes.txt").read_text() == "alpha\ngamma\n"
        again = await call(client, "review_status", {"id": action_id})
        assert text(again) == f"{action_id} applied: Edit: notes.txt. Reason: looks right"
        assert text(await call(client, "review_status", {})) == (
            "No pending actions proposed by this client."
        )


async def test_discard_reason_and_still_pending(workspace: Path) -> None:
    async with connect(workspace) as client:
        result = await call(client, "propose_write", {"path": "new/file.txt", "content": "x\n"})
        assert not result.is_error, text(result)
        action_id = text(result).split()[1]
        assert "Create" in text(result) or "Write: new/file.txt" in text(result)
        short = await call(client, "await_review", {"id": action_id, "timeout_s": 0})
        assert text(short) == "still pending"
        done = redline(workspace, "pending", "discard", action_id, "--reason", "not needed")
        assert done.returncode == 0, done.stderr
        outcome = text(await call(client, "await_review", {"id": action_id}))
        assert outcome.splitlines()[0] == (
            f"{action_id} discarded: Write: new/file.txt. Reason: not needed"
        )
        assert "Reason: not needed" in outcome.splitlines()[1]
        assert not (workspace / "new").exists()


async def test_write_replace_and_ast_edit(workspace: Path) -> None:
    async with connect(workspace) as client:
        replaced = await call(client, "propose_write", {"path": "notes.txt", "content": "one\n"})
        assert not replaced.is_error, text(replaced)
        assert "-alpha" in text(replaced) and "+one" in text(replaced)
        ast = await call(
            client,
            "ast_edit",
            {"ops": [{"pat": "print($$$A)", "out": "log($$$A)"}], "path": "app.py"},
        )
        assert not ast.is_error, text(ast)
        assert text(ast).startswith("Queued pa-")
        assert '+    log("hi")' in text(ast)
        ast_id = text(ast).split()[1]
        nothing = await call(client, "ast_edit", {"ops": [{"pat": "nomatch($A)", "out": "x($A)"}]})
        assert not nothing.is_error
        assert "Nothing was queued" in text(nothing)
    listed = {a["id"]: a for a in pending(workspace)}
    assert listed[ast_id]["source_tool_name"] == "mcp:ast_edit"
    assert len(listed) == 2
    assert (workspace / "notes.txt").read_text() == "alpha\nbeta\n"
    done = redline(workspace, "pending", "apply", ast_id)
    assert done.returncode == 0, done.stderr
    assert 'log("hi")' in (workspace / "app.py").read_text()


#: Each bad call, the tool error's text it must contain. The cases run in one server (issue
#: 44: one server start per case cost about a second of CPU each); each is asserted on its
#: own, and the queue is empty after all of them, so none of them queued anything.
BAD_INPUT: list[tuple[str, dict[str, Any], str]] = [
    ("propose_edit", {"path": "../outside.txt", "old": "a", "new": "b"}, "outside"),
    ("propose_edit", {"path": "/etc/passwd", "old": "root", "new": "b"}, "outside"),
    ("propose_edit", {"path": "notes.txt", "old": "missing", "new": "b"}, "not found"),
    ("propose_edit", {"path": "app.py", "old": 'print("hi")', "new": "b"}, "ambiguous"),
    ("propose_edit", {"path": "nope.txt", "old": "a", "new": "b"}, "no such file"),
    ("propose_edit", {"path": "blob.bin", "old": "binary", "new": "b"}, "binary"),
    ("propose_write", {"path": "blob.bin", "content": "text"}, "binary"),
    ("propose_write", {"path": "x.txt", "content": "a\x00b"}, "NUL"),
    ("propose_write", {"path": "../x.txt", "content": "a"}, "outside"),
    ("ast_edit", {"ops": [{"pat": "def (", "out": "x"}]}, "Invalid ast_edit operation"),
    ("ast_edit", {"ops": [{"pat": "f($A)", "out": "g($B)"}]}, "Invalid ast_edit operation"),
    ("ast_edit", {"ops": [{"pat": "f($A)", "out": "g($A)"}], "path": "../"}, "path"),
    ("ast_edit", {"ops": []}, "ops"),
    ("review_status", {"id": "nonsense"}, "not a pending action id"),
    ("review_status", {"id": "pa-999"}, "No pending or recently resolved action pa-999"),
    ("await_review", {"id": "pa-999", "timeout_s": 1}, "pa-999"),
    ("await_review", {"id": "pa-1", "timeout_s": 51}, "50"),
]


async def test_bad_input_is_a_tool_error(workspace: Path) -> None:
    async with connect(workspace) as client:
        for tool, args, expected in BAD_INPUT:
            result = await call(client, tool, args)
            case = f"{tool} {args!r}: {text(result)}"
            assert result.is_error, case
            assert expected.lower() in text(result).lower(), case
            assert "Traceback" not in text(result), case
    assert pending(workspace) == []


async def test_content_over_the_limit(workspace: Path) -> None:
    async with connect(workspace) as client:
        result = await call(
            client, "propose_write", {"path": "big.txt", "content": "a" * (MAX_CONTENT_BYTES + 1)}
        )
    assert result.is_error
    assert "too large" in text(result)
    assert pending(workspace) == []


async def test_two_clients_on_one_workspace(workspace: Path) -> None:
    # The second client uses the initialize handshake of clients before the 2026 protocol.
    async with (
        connect(workspace, "one") as first,
        connect(workspace, "two", mode="legacy") as second,
    ):
        a, b = await asyncio.gather(
            call(first, "propose_write", {"path": "a.txt", "content": "a\n"}),
            call(second, "propose_write", {"path": "b.txt", "content": "b\n"}),
        )
        assert not a.is_error and not b.is_error
        id_a, id_b = text(a).split()[1], text(b).split()[1]
        assert id_a != id_b
        mine = text(await call(first, "review_status", {}))
        assert id_a in mine and id_b not in mine
        theirs = text(await call(second, "review_status", {}))
        assert id_b in theirs and id_a not in theirs
        names = {a["id"]: a["source"]["name"] for a in pending(workspace)}
        assert names == {id_a: "one", id_b: "two"}
        done = redline(workspace, "pending", "apply", id_b, "--reason", "ok")
        assert done.returncode == 0, done.stderr
        seen = text(await call(first, "await_review", {"id": id_b, "timeout_s": 5}))
        assert seen.startswith(f"{id_b} applied: Write: b.txt. Reason: ok")


async def test_a_rule_for_mcp_name_matches_that_client(workspace: Path) -> None:
    # docs/rules.md's example: sources = ["mcp:cursor"] is the client named "cursor".
    config = Path(os.environ["REDLINE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "rules.toml").write_text(
        '[[rule]]\nname = "cursor"\ndecision = "apply"\nsources = ["mcp:cursor"]\n'
    )
    async with connect(workspace, name="cursor") as client:
        result = await call(client, "propose_write", {"path": "c.txt", "content": "c\n"})
    assert text(result).startswith("Applied by rule cursor: Write: c.txt."), text(result)
    assert (workspace / "c.txt").read_text() == "c\n"
