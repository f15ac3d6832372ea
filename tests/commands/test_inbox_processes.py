"""Issue 45: real separate processes queue in three workspaces -- ``redline mcp`` (the mcp
package's own client over stdio) and ``redline exec`` -- and the inbox's backend and
``redline pending … pa-N@WSID`` from a fourth folder decide them; every write lands only
in its own workspace."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation
from tests import warm_python

from redline.review.all_source import AllWorkspacesSource
from redline.review.session import Decision

HANG = 120.0


def _redline(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REDLINE_SCRIPTED_WAIT_SCALE": "0", "OPENAI_API_KEY": "sk-test"}
    return subprocess.run(
        [sys.executable, "-m", "redline", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HANG,
        env=env,
        check=False,
    )


async def _mcp_propose(root: Path, agent: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    command, args = warm_python.stdio_command("redline.cli", "mcp", "-C", str(root))
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with Client(
        params,
        client_info=Implementation(name=agent, version="1.0"),
        read_timeout_seconds=HANG,
    ) as client:
        for tool, args in calls:
            result = await asyncio.wait_for(client.call_tool(tool, args), HANG)
            assert not result.is_error, result.content


def _exec_propose(root: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    step = {"call": [{"tool": "write", "args": {"path": "notes.md", "content": "# web notes\n"}}]}
    plan.write_text(json.dumps({"name": "t", "steps": [step, {"say": "waiting"}]}))
    done = _redline(
        root,
        "exec",
        "-C",
        str(root),
        "--model",
        f"scripted:{plan}",
        "--resolver",
        "human",
        "--prompt",
        "add notes",
    )
    assert done.returncode == 3, done.stderr  # left pending for a person


@pytest.fixture
def three(tmp_path: Path) -> dict[str, Path]:
    roots = {}
    for name in ("api", "web", "docs"):
        root = tmp_path / name
        root.mkdir()
        (root / "app.py").write_text(f"print('{name}')\n")
        roots[name] = root.resolve()
    asyncio.run(
        _mcp_propose(
            roots["api"],
            "claude-code",
            [("propose_edit", {"path": "app.py", "old": "'api'", "new": "'API'"})],
        )
    )
    _exec_propose(roots["web"], tmp_path)
    asyncio.run(
        _mcp_propose(
            roots["docs"],
            "cursor",
            [
                ("propose_write", {"path": "README.md", "content": "docs\n"}),
                ("propose_edit", {"path": "app.py", "old": "'docs'", "new": "'DOCS'"}),
            ],
        )
    )
    return roots


def _listed(fourth: Path) -> dict[str, dict[str, Any]]:
    done = _redline(fourth, "pending", "list", "--all", "--json")
    assert done.returncode == 0, done.stderr
    return {
        a["workspace"]["path"] + " " + a["local_id"]: a for a in json.loads(done.stdout)["actions"]
    }


def _files(roots: dict[str, Path]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for name, root in roots.items():
        found[name] = {p.name: p.read_text() for p in sorted(root.iterdir()) if p.is_file()}
    return found


def test_three_producers_one_inbox_each_write_in_its_workspace(
    three: dict[str, Path], tmp_path: Path
) -> None:
    fourth = tmp_path / "elsewhere"
    fourth.mkdir()
    listed = _listed(fourth)
    api, web, docs = three["api"], three["web"], three["docs"]
    assert set(listed) == {f"{api} pa-1", f"{web} pa-1", f"{docs} pa-1", f"{docs} pa-2"}
    assert listed[f"{api} pa-1"]["source"]["kind"] == "mcp"
    assert listed[f"{web} pa-1"]["source"]["kind"] == "exec"
    before = _files(three)

    # The inbox's backend decides the exec action (another process's) in web.
    source = AllWorkspacesSource()
    try:
        rows = {row.id: row for row in source.listed()}
        web_id = listed[f"{web} pa-1"]["id"]
        assert web_id in rows and rows[web_id].source == "exec"
        view = source.view(web_id)
        assert view.preview is not None and view.preview.paths == ("notes.md",)
        outcome = source.decide(web_id, Decision("apply"))
        assert outcome.ok, outcome.text
    finally:
        source.close()
    after = _files(three)
    assert after["web"] == {**before["web"], "notes.md": "# web notes\n"}
    assert after["api"] == before["api"] and after["docs"] == before["docs"]

    # `redline pending apply pa-N@WSID` from a fourth folder: only docs changes.
    docs_id = listed[f"{docs} pa-2"]["id"]
    done = _redline(fourth, "pending", "apply", docs_id)
    assert done.returncode == 0, done.stderr
    final = _files(three)
    assert final["docs"]["app.py"] == "print('DOCS')\n"
    assert "README.md" not in final["docs"]  # its other action still waits
    assert final["api"] == before["api"] and final["web"] == after["web"]
    assert not any(fourth.iterdir())  # nothing written where it was run

    # The rest by the inbox: a discard with a reason, in api only.
    source = AllWorkspacesSource()
    try:
        api_id = listed[f"{api} pa-1"]["id"]
        gone = source.decide(api_id, Decision("discard", "not this one"))
        assert gone.ok, gone.text
        assert [row.id for row in source.listed()] == [listed[f"{docs} pa-1"]["id"]]
    finally:
        source.close()
    assert _files(three)["api"] == before["api"]
    remaining = _listed(fourth)
    assert list(remaining) == [f"{docs} pa-1"]
