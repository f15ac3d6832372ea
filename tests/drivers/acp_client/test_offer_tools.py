"""`--offer-tools`: redline's own MCP server offered to an external ACP agent in session/new."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests import warm_python

from redline.commands import dashboard
from redline.drivers.acp.client import redline_mcp_server
from redline.drivers.acp.session import AcpSession
from redline.drivers.acp.spec import resolve_agent

AGENT = Path(__file__).with_name("scripted_agent.py")
HANG_GUARD = 120


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    print('hi')\n")
    return root


def agent_command(tmp_path: Path, steps: list[dict[str, Any]]) -> tuple[str, Path]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    record = tmp_path / "record.jsonl"
    return shlex.join([sys.executable, str(AGENT), str(script), str(record)]), record


def heard(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def offered(record: Path) -> list[dict[str, Any]]:
    sessions = [h for h in heard(record) if h["event"] == "new_session"]
    assert len(sessions) == 1
    servers: list[dict[str, Any]] = sessions[0]["mcp_servers"]
    return servers


def redline(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return warm_python.run(
        [sys.executable, "-m", "redline.cli", *args],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
        cwd=root,
    )


def exec_agent(
    tmp_path: Path, workspace: Path, steps: list[dict[str, Any]], *extra: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    command, record = agent_command(tmp_path, steps)
    done = redline(
        workspace,
        "exec",
        "--agent",
        command,
        "-C",
        str(workspace),
        "--prompt",
        "do the task",
        "--json",
        "--resolver",
        "human",
        *extra,
    )
    return done, record


def expected_server(workspace: Path, config_dir: Path) -> dict[str, Any]:
    return {
        "name": "redline",
        "command": str(Path(sys.executable).absolute()),
        "args": ["-m", "redline.cli", "mcp", "-C", str(workspace.resolve())],
        "env": [
            {"name": "REDLINE_CONFIG_DIR", "value": str(config_dir.absolute())},
            # The state key's folder (the test suite sets it), so the server signs as we do.
            {"name": "XDG_STATE_HOME", "value": os.environ["XDG_STATE_HOME"]},
        ],
    }


def test_exec_offers_exactly_the_redline_server(
    tmp_path: Path, workspace: Path, isolated_user_config: Path
) -> None:
    done, record = exec_agent(tmp_path, workspace, [{"do": "text", "text": "hi"}], "--offer-tools")
    assert done.returncode == 0, done.stderr
    assert offered(record) == [expected_server(workspace, isolated_user_config)]


def test_exec_without_the_flag_offers_nothing(tmp_path: Path, workspace: Path) -> None:
    done, record = exec_agent(tmp_path, workspace, [{"do": "text", "text": "hi"}])
    assert done.returncode == 0, done.stderr
    assert offered(record) == []


def test_the_flag_without_an_agent_is_refused(workspace: Path) -> None:
    done = redline(workspace, "exec", "--offer-tools", "-C", str(workspace), "--prompt", "x")
    assert done.returncode == 2
    assert "--offer-tools needs --agent" in done.stderr
    code = dashboard.run(dashboard_args(workspace, "--offer-tools"))
    assert code == 2


def dashboard_args(workspace: Path, *extra: str) -> Any:
    import argparse

    parser = argparse.ArgumentParser()
    dashboard.configure(parser)
    return parser.parse_args(["-C", str(workspace), *extra])


def test_server_description_is_a_stdio_server(workspace: Path, isolated_user_config: Path) -> None:
    server = redline_mcp_server(workspace.resolve())
    dumped = server.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped == expected_server(workspace, isolated_user_config)
    assert Path(server.command).is_absolute()


@pytest.mark.parametrize("offer", [True, False])
def test_dashboard_session_offers_only_with_the_flag(
    tmp_path: Path, workspace: Path, isolated_user_config: Path, offer: bool
) -> None:
    command, record = agent_command(tmp_path, [{"do": "text", "text": "hi"}])
    session = AcpSession(
        workspace, resolve_agent(command, workspace), log_session=False, offer_tools=offer
    )
    try:
        status = session.start_prompt("go").result(timeout=HANG_GUARD)
    finally:
        session.close()
    assert status == "done"
    expected = [expected_server(workspace, isolated_user_config)] if offer else []
    assert offered(record) == expected


def test_agent_proposes_through_the_offered_server(tmp_path: Path, workspace: Path) -> None:
    step = {
        "do": "mcp_call",
        "tool": "propose_edit",
        "arguments": {"path": "app.py", "old": "'hi'", "new": "'hello'"},
    }
    done, record = exec_agent(tmp_path, workspace, [step], "--offer-tools")
    assert done.returncode == 0, done.stderr
    call = next(h for h in heard(record) if h["event"] == "mcp_call")
    assert call["error"] is False, call
    assert call["text"].startswith("Queued ")
    action_id = call["text"].split()[1]
    assert (workspace / "app.py").read_text() == "def main():\n    print('hi')\n"
    listed = redline(workspace, "pending", "-C", str(workspace), "list", "--json")
    assert listed.returncode == 0, listed.stderr
    actions = json.loads(listed.stdout)["actions"]
    assert [a["id"] for a in actions] == [action_id]
    assert actions[0]["source_tool_name"] == "mcp:propose_edit"
