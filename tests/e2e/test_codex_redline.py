"""End to end: the real Codex (0.171.0, npm) with redline's hook installed by ``redline hooks
install codex --user --trust-codex-hook``, against the scripted Responses server; a person
decides with ``redline pending`` from another process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.e2e.agents import CodexSetup, isolated_env, require_agent, setup_codex
from tests.e2e.model_servers import ResponsesServer, function_outputs
from tests.e2e.test_claude_hooks import REDLINE, redline, wait_pending

pytestmark = pytest.mark.e2e

PATCH = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello world\n*** End Patch\n"


@dataclass
class Run:
    workspace: Path
    server: ResponsesServer
    setup: CodexSetup
    agents: list[subprocess.Popen[str]]


def redline_env() -> dict[str, str]:
    """What the hook needs from the test's environment: the same redline state and config
    folders as the `redline pending` the test runs (tests/conftest.py sets them)."""
    return {k: v for k, v in os.environ.items() if k in ("XDG_STATE_HOME", "XDG_CONFIG_HOME")}


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "hello.txt").write_text("hello\n", encoding="utf-8")
    with ResponsesServer() as server:
        setup = setup_codex(tmp_path, workspace, server, None)
        env = {**os.environ, "HOME": str(setup.home), "CODEX_HOME": str(setup.codex_home)}
        done = subprocess.run(
            [
                REDLINE,
                "hooks",
                "install",
                "codex",
                "--user",
                "--trust-codex-hook",
                "-C",
                str(workspace),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "Recorded Codex's trust" in done.stdout
        status = subprocess.run(
            [REDLINE, "hooks", "status", "-C", str(workspace)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert f"codex: installed in {setup.codex_home / 'hooks.json'}" in status.stdout
        agents: list[subprocess.Popen[str]] = []
        try:
            yield Run(workspace, server, setup, agents)
        finally:
            for agent in agents:  # a failed test leaves no agent or hook behind
                if agent.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(agent.pid, signal.SIGKILL)
                    agent.communicate()


def start_codex(run: Run) -> subprocess.Popen[str]:
    env = isolated_env(
        run.setup.home,
        CODEX_HOME=str(run.setup.codex_home),
        SCRIPTED_API_KEY="dummy",
        **redline_env(),
    )
    argv = [str(require_agent("codex")), "exec", "--json", "--skip-git-repo-check", "greet"]
    agent = subprocess.Popen(
        argv,
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


def test_discard_reason_reaches_the_model(run: Run) -> None:
    run.server.enqueue_tool_call("apply_patch", PATCH)
    run.server.enqueue_text("understood")
    agent = start_codex(run)
    action = wait_pending(run.workspace, agent)
    done = redline(run.workspace, "pending", "discard", str(action["id"]), "--reason", "be brief")
    assert done.returncode == 0, done.stderr
    finish(agent)
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello\n"
    [result] = function_outputs(run.server.model_requests[1])
    assert "Discarded by the reviewer: be brief" in result


def test_apply_writes_and_undo_restores(run: Run) -> None:
    run.server.enqueue_tool_call("apply_patch", PATCH)
    run.server.enqueue_text("done")
    agent = start_codex(run)
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
    run.server.enqueue_tool_call("apply_patch", PATCH)
    run.server.enqueue_text("done")
    agent = start_codex(run)
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
    [result] = function_outputs(run.server.model_requests[1])
    assert "hello.txt: applied with the reviewer's edits" in result  # the post-tool note


def test_killing_redline_mid_wait_blocks_the_edit(run: Run) -> None:
    run.server.enqueue_tool_call("apply_patch", PATCH)
    run.server.enqueue_text("done")
    agent = start_codex(run)
    wait_pending(run.workspace, agent)
    from tests.e2e.test_claude_hooks import _hook_pid

    os.kill(_hook_pid(run.workspace), signal.SIGKILL)
    finish(agent)
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello\n"
    [result] = function_outputs(run.server.model_requests[1])
    assert "redline hook failed" in result
    assert json.dumps(result)  # the model was told why


MULTI = (
    "*** Begin Patch\n*** Add File: new.txt\n+brand new\n*** Update File: hello.txt\n@@\n"
    "-hello\n+hello world\n*** End Patch\n"
)


def test_a_patch_over_two_files_applied_in_part(run: Run) -> None:
    """One action per file; the discarded one is left out of the patch Codex applies, and
    the model hears which file was not written and why."""
    run.server.enqueue_tool_call("apply_patch", MULTI)
    run.server.enqueue_text("done")
    agent = start_codex(run)
    wait_pending(run.workspace, agent)
    from redline.review.follower import follow
    from redline.workspace.queue import WorkspaceQueue

    queue = WorkspaceQueue(run.workspace)
    try:
        import threading

        changed = threading.Event()
        stop = follow(queue, changed.set)
        while len(queue.list()) < 2:
            assert changed.wait(60), "the second file was not queued"
            changed.clear()
        stop()
        by_file = {r.label.split()[1]: r.id for r in queue.list()}
    finally:
        queue.close()
    assert set(by_file) == {"new.txt", "hello.txt"}
    discarded = redline(
        run.workspace, "pending", "discard", by_file["new.txt"], "--reason", "no new files"
    )
    assert discarded.returncode == 0, discarded.stderr
    applied = redline(run.workspace, "pending", "apply", by_file["hello.txt"])
    assert applied.returncode == 0, applied.stderr
    finish(agent)
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello world\n"
    assert not (run.workspace / "new.txt").exists()
    [result] = function_outputs(run.server.model_requests[1])
    assert "new.txt: not written. Discarded by the reviewer: no new files" in result
    assert "hello.txt: applied as proposed" in result
    undone = redline(run.workspace, "undo")
    assert undone.returncode == 0, undone.stderr + undone.stdout
    assert (run.workspace / "hello.txt").read_text(encoding="utf-8") == "hello\n"


SHELL_COMMAND = "echo ran > out.txt"


def test_review_shell_discard_keeps_the_command_from_running(run: Run) -> None:
    """`[hooks] review_shell = true`: Codex's shell tool (exec_command, sent to hooks as
    Bash) waits for review; a discard keeps it from running and the reason reaches the model."""
    state = run.workspace / ".redline"
    state.mkdir(mode=0o700)
    (state / "config.toml").write_text("[hooks]\nreview_shell = true\n", encoding="utf-8")
    run.server.enqueue_tool_call("exec_command", {"cmd": SHELL_COMMAND})
    run.server.enqueue_text("understood")
    agent = start_codex(run)
    action = wait_pending(run.workspace, agent)
    from redline.workspace.queue import WorkspaceQueue

    queue = WorkspaceQueue(run.workspace)
    record = queue.get(str(action["id"]))
    queue.close()
    assert record is not None and record.label == f"Bash: {SHELL_COMMAND}"
    assert (record.source_tool_name, record.source.canonical) == ("hook:Bash", "hook:codex")
    done = redline(run.workspace, "pending", "discard", str(action["id"]), "--reason", "no shell")
    assert done.returncode == 0, done.stderr
    finish(agent)
    assert not (run.workspace / "out.txt").exists()
    [result] = function_outputs(run.server.model_requests[1])
    assert "Discarded by the reviewer: no shell" in result


def test_without_review_shell_the_command_runs_untouched(run: Run) -> None:
    """The installed matcher calls the hook for the shell tool too; it passes it through."""
    run.server.enqueue_tool_call("exec_command", {"cmd": SHELL_COMMAND})
    run.server.enqueue_text("done")
    agent = start_codex(run)
    finish(agent)
    assert (run.workspace / "out.txt").read_text(encoding="utf-8") == "ran\n"
    hooks = json.loads((run.setup.codex_home / "hooks.json").read_text(encoding="utf-8"))
    assert hooks["hooks"]["PreToolUse"][0]["matcher"] == "apply_patch|Bash"
