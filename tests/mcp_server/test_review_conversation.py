"""Issue 47 over MCP (the official client, a real `redline mcp` process): comments reach
the agent through await_review (text and a structured `comments` list) and review_status;
the next proposal is revision 2 — named with `revises`, or by the same server process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.mcp_server.test_stdio import HANG, call, connect, text


def redline(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redline.cli", *args[:1], "-C", str(root), *args[1:]],
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )


def show(root: Path, action_id: str) -> dict[str, Any]:
    done = redline(root, "pending", "show", action_id, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def greet():\n    print('hi')\n\n\ndef bye():\n    pass\n")
    return root


def review(root: Path) -> None:
    """The person comments on two lines of pa-1 and requests changes."""
    assert redline(root, "pending", "comment", "pa-1", "app.py:2", "use logging").returncode == 0
    assert redline(root, "pending", "comment", "pa-1", "app.py:-2", "was fine").returncode == 0
    done = redline(root, "pending", "discard", "pa-1", "--reason", "not like this")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("named", [True, False], ids=["revises", "same-process"])
async def test_comment_discard_revise_round_trip(workspace: Path, named: bool) -> None:
    async with connect(workspace) as client:
        first = await call(
            client, "propose_edit", {"path": "app.py", "old": "print('hi')", "new": "print('hey')"}
        )
        assert "Queued pa-1" in text(first)
        status = await call(client, "review_status", {"id": "pa-1"})
        assert "pa-1 pending" in text(status)
        review(workspace)
        waited = await call(client, "await_review", {"id": "pa-1", "timeout_s": 10})
        said = text(waited)
        assert "pa-1 discarded" in said and "Reason: not like this" in said
        assert "app.py:2: use logging" in said and "app.py:-2: was fine" in said
        assert 'revise it with revises="pa-1"' in said
        comments = (waited.structured_content or {})["comments"]
        assert [(c["id"], c["path"], c["line"], c["side"]) for c in comments] == [
            ("c-1", "app.py", 2, "new"),
            ("c-2", "app.py", 2, "old"),
        ]
        status = await call(client, "review_status", {"id": "pa-1"})
        assert "app.py:2: use logging" in text(status)
        args: dict[str, Any] = {"path": "app.py", "old": "print('hi')", "new": "log.info('hi')"}
        if named:
            args["revises"] = "pa-1"
        second = await call(client, "propose_edit", args)
        assert "Queued pa-2" in text(second) and "It is revision 2 of pa-1." in text(second)
        again = await call(client, "propose_edit", {**args, "revises": "pa-1"})
        assert again.is_error and "pa-1 was already revised by pa-2" in text(again)
    data = show(workspace, "pa-2")
    assert data["revision"] == {
        "number": 2,
        "of": "pa-1",
        "interdiff": "--- pa-1/app.py\n+++ pa-2/app.py\n@@ -1,5 +1,5 @@\n def greet():\n"
        "-    print('hey')\n+    log.info('hi')\n \n \n def bye():\n",
        "base_changed": False,
    }
    assert [(c["id"], c["outdated"]) for c in data["comments"]] == [("c-1", True), ("c-2", False)]


async def test_revises_names_only_a_discarded_action(workspace: Path) -> None:
    async with connect(workspace) as client:
        await call(client, "propose_edit", {"path": "app.py", "old": "pass", "new": "return"})
        args = {"path": "app.py", "old": "print('hi')", "new": "print('x')"}
        pending = await call(client, "propose_edit", {**args, "revises": "pa-1"})
        assert pending.is_error and "pa-1 is still pending" in text(pending)
        assert "Nothing was queued" in text(pending)
        unknown = await call(client, "propose_edit", {**args, "revises": "pa-9"})
        assert unknown.is_error and "no recently resolved action pa-9" in text(unknown)
        bad = await call(client, "propose_write", {"path": "n.txt", "content": "x", "revises": "x"})
        assert bad.is_error and "is not a pending action id" in text(bad)
    done = redline(workspace, "pending", "list", "--json")
    assert [a["id"] for a in json.loads(done.stdout)["actions"]] == ["pa-1"]


@pytest.mark.parametrize("connection", ["stdio", "http-session:abc", "http-client:zed"])
async def test_stateless_http_links_only_by_revises(workspace: Path, connection: str) -> None:
    from redline.mcp_server.proposals import Proposals
    from redline.mcp_server.server import _implicit
    from redline.review.queued import resolve_queued

    work = Proposals(workspace)
    try:
        session = work.session_for(connection)
        implicit = _implicit(connection)
        first = await work.propose_edit("zed", session, "app.py", "pass", "return", None, implicit)
        assert first.action_id is not None
        assert not (await resolve_queued(work.queue, first.action_id, "discard", "no")).is_error
        second = await work.propose_edit(
            "zed", session, "app.py", "pass", "return None", None, implicit
        )
        record = work.queue.get(str(second.action_id))
        assert record is not None
        assert record.revision_of == (None if connection.startswith("http-client:") else "pa-1")
    finally:
        work.close()
