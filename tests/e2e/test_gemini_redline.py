"""End to end: the real Gemini CLI (0.61.0, npm) with redline's hook installed by ``redline
hooks install gemini --user``, against the scripted Gemini API server; a person decides with
``redline pending`` from another process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.e2e.agents import GEMINI_MODEL, GeminiSetup, isolated_env, require_agent, setup_gemini
from tests.e2e.model_servers import GeminiServer, function_responses
from tests.e2e.test_claude_hooks import REDLINE, _hook_pid, redline, wait_pending
from tests.e2e.test_codex_redline import redline_env

pytestmark = pytest.mark.e2e


@dataclass
class Run:
    workspace: Path
    server: GeminiServer
    setup: GeminiSetup
    agents: list[subprocess.Popen[str]]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "hello.txt").write_text("hello\n", encoding="utf-8")
    with GeminiServer() as server:
        setup = setup_gemini(tmp_path, workspace, None, trust_folder=True)
        env = {**os.environ, "HOME": str(setup.home)}
        done = subprocess.run(
            [REDLINE, "hooks", "install", "gemini", "--user", "-C", str(workspace)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        status = subprocess.run(
            [REDLINE, "hooks", "status", "-C", str(workspace)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert "gemini: installed in " in status.stdout, status.stdout
        agents: list[subprocess.Popen[str]] = []
        try:
            yield Run(workspace, server, setup, agents)
        finally:
            for agent in agents:
                if agent.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(agent.pid, signal.SIGKILL)
                    agent.communicate()


def start_gemini(run: Run, *extra: str) -> subprocess.Popen[str]:
    env = isolated_env(
        run.setup.home,
        GEMINI_API_KEY="dummy",
        GOOGLE_GEMINI_BASE_URL=run.server.origin,
        GEMINI_CLI_NO_RELAUNCH="true",
        **redline_env(),
    )
    argv = [str(require_agent("gemini")), "-m", GEMINI_MODEL, "--yolo", "--output-format"]
    agent = subprocess.Popen(
        [*argv, "json", *extra, "-p", "greet the world in hello.txt"],
        cwd=run.workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    run.agents.append(agent)
    return agent


def finish(agent: subprocess.Popen[str]) -> None:
    _out, err = agent.communicate(timeout=120)
    assert agent.returncode == 0, err


def write_call(run: Run) -> None:
    target = str(run.workspace / "hello.txt")
    run.server.enqueue_tool_call("write_file", {"file_path": target, "content": "hello world\n"})
    run.server.enqueue_text("done")


def replace_call(run: Run) -> None:
    run.server.enqueue_tool_call(
        "replace",
        {
            "file_path": str(run.workspace / "hello.txt"),
            "old_string": "hello",
            "new_string": "hello world",
            "instruction": "greet the world",
        },
    )
    run.server.enqueue_text("done")


def test_discard_reason_reaches_the_model(run: Run) -> None:
    write_call(run)
    agent = start_gemini(run)
    action = wait_pending(run.workspace, agent)
    done = redline(run.workspace, "pending", "discard", str(action["id"]), "--reason", "be brief")
    assert done.returncode == 0, done.stderr
    finish(agent)
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello\n"
    assert function_responses(run.server.model_requests[1]) == [
        {"error": "Tool execution blocked: Discarded by the reviewer: be brief"}
    ]


def test_apply_writes_and_undo_restores(run: Run) -> None:
    replace_call(run)
    agent = start_gemini(run)
    action = wait_pending(run.workspace, agent)
    done = redline(run.workspace, "pending", "apply", str(action["id"]))
    assert done.returncode == 0, done.stderr
    finish(agent)
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello world\n"
    undone = redline(run.workspace, "undo")
    assert undone.returncode == 0, undone.stderr + undone.stdout
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello\n"


def test_reviewer_edit_is_what_lands(run: Run, tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'hello, reviewed\\n' > \"$1\"\n", encoding="utf-8")
    editor.chmod(0o755)
    replace_call(run)
    agent = start_gemini(run)
    action = wait_pending(run.workspace, agent)
    env = {**os.environ, "VISUAL": str(editor), "EDITOR": str(editor)}
    edited = subprocess.run(
        [REDLINE, "pending", "edit", str(action["id"])],
        cwd=run.workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert edited.returncode == 0, edited.stderr
    new_id = edited.stdout.strip().rsplit(" is now ", 1)[1].split(" ")[0]
    applied = redline(run.workspace, "pending", "apply", new_id)
    assert applied.returncode == 0, applied.stderr
    finish(agent)
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello, reviewed\n"
    [response] = function_responses(run.server.model_requests[1])
    assert "modified by a hook" in response["output"]


def test_killing_redline_mid_wait_blocks_the_edit(run: Run) -> None:
    write_call(run)
    agent = start_gemini(run)
    wait_pending(run.workspace, agent)
    os.kill(_hook_pid(run.workspace), signal.SIGKILL)
    finish(agent)
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello\n"
    [response] = function_responses(run.server.model_requests[1])
    assert "redline hook failed" in response["error"]


def test_user_hooks_still_run_under_skip_trust(run: Run) -> None:
    write_call(run)
    agent = start_gemini(run, "--skip-trust")
    action = wait_pending(run.workspace, agent)
    redline(run.workspace, "pending", "discard", str(action["id"]), "--reason", "no")
    finish(agent)
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello\n"
