"""Issue 46, done when: an edit the hook handed over (no decision within ``[hooks]
wait_seconds``) and applied later is reported to its agent — the real Claude Code, Codex
and Gemini CLI with redline's hooks installed — at that session's next prompt, once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from tests.e2e.agents import (
    AgentRun,
    CodexSetup,
    isolated_env,
    require_agent,
    run_agent,
    setup_codex,
    setup_gemini,
)
from tests.e2e.anthropic_server import ScriptedAnthropic
from tests.e2e.model_servers import GeminiServer, ResponsesServer

pytestmark = pytest.mark.e2e

REDLINE = str(Path(sys.executable).with_name("redline"))


@pytest.fixture
def workspace(tmp_path: Path, isolated_user_config: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "hello.txt").write_text("hello\n", encoding="utf-8")
    # Hand over almost at once; no desktop notification from the test's hooks.
    (isolated_user_config / "config.toml").write_text(
        '[hooks]\nwait_seconds = 1\n[notify]\ndesktop = "off"\n', encoding="utf-8"
    )
    return root


def redline(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [REDLINE, *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def redline_env(**extra: str) -> dict[str, str]:
    """What the agents pass on to redline's hook: the test's own config and state folders."""
    return {
        "REDLINE_CONFIG_DIR": os.environ["REDLINE_CONFIG_DIR"],
        "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
        **extra,
    }


def the_handed_over_action(root: Path) -> str:
    out = json.loads(redline(root, "pending", "list", "--json"))
    [action] = out["actions"] if isinstance(out, dict) else out
    return str(action["id"])


def seen(request: object) -> str:
    return json.dumps(request, ensure_ascii=False)


def told(action: str, label: str, file: str) -> str:
    return (
        f"{action} ({label}), which you proposed earlier, was applied — re-read {file} "
        "before editing it"
    )


def test_claude_code_hears_a_late_apply_at_its_next_prompt(workspace: Path, tmp_path: Path) -> None:
    claude = require_agent("claude")
    redline(workspace, "hooks", "install", "claude", "-C", str(workspace))
    session = str(uuid.uuid4())
    target = workspace / "new.txt"
    turns = [[{"tool_use": "Write", "input": {"file_path": str(target), "content": "new\n"}}]]
    with ScriptedAnthropic(turns) as server:
        env = {k: v for k, v in os.environ.items() if k != "IS_SANDBOX"}
        env.update(
            HOME=str(tmp_path / "home"),
            ANTHROPIC_BASE_URL=server.url,
            ANTHROPIC_API_KEY="dummy",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        base = [str(claude), "--permission-mode", "acceptEdits"]
        first = run_agent([*base, "--session-id", session, "-p", "write it"], workspace, env)
        assert first.returncode == 0, first.stderr
        assert not target.exists()  # handed over: still pending
        action = the_handed_over_action(workspace)
        redline(workspace, "pending", "apply", action)
        assert target.read_text() == "new\n"
        before = len(server.agent_requests())
        second = run_agent([*base, "--resume", session, "-p", "go on"], workspace, env)
        assert second.returncode == 0, second.stderr
        later = server.agent_requests()[before:]
        third = run_agent([*base, "--resume", session, "-p", "and on"], workspace, env)
        assert third.returncode == 0, third.stderr
        last = server.agent_requests()[before + len(later) :]
    text = told(action, "Write new.txt", "new.txt")
    assert text in seen(later[0]["messages"][-1])
    assert text not in seen(last[0]["messages"][-1])  # told once


def test_codex_hears_a_late_apply_at_its_next_prompt(workspace: Path, tmp_path: Path) -> None:
    codex = require_agent("codex")
    patch = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello world\n*** End Patch\n"
    with ResponsesServer() as server:
        server.enqueue_tool_call("apply_patch", patch)
        server.enqueue_text("waiting")
        server.enqueue_text("noted")
        setup = setup_codex(tmp_path, workspace, server, None)
        install_env = {**os.environ, "HOME": str(setup.home), "CODEX_HOME": str(setup.codex_home)}
        redline(
            workspace, "hooks", "install", "codex", "--user", "--trust-codex-hook", env=install_env
        )
        extra = redline_env()
        first = run_codex_with(codex, setup, workspace, extra, "greet the world")
        assert first.returncode == 0, first.stderr
        assert (workspace / "hello.txt").read_text() == "hello\n"
        action = the_handed_over_action(workspace)
        from redline.workspace.queue import WorkspaceQueue

        with WorkspaceQueue(workspace) as queue:
            record = queue.get(action)
            assert record is not None
            session = record.source.session_id
        redline(workspace, "pending", "apply", action)
        assert (workspace / "hello.txt").read_text() == "hello world\n"
        before = len(server.model_requests)
        second = run_codex_with(codex, setup, workspace, extra, "go on", resume=session)
        assert second.returncode == 0, second.stderr
        later = server.model_requests[before:]
    assert told(action, "apply_patch hello.txt", "hello.txt") in seen(later[0])


def run_codex_with(
    binary: Path,
    setup: CodexSetup,
    workspace: Path,
    extra: dict[str, str],
    prompt: str,
    resume: str | None = None,
) -> AgentRun:
    """``codex exec`` (or ``codex exec resume SESSION``) passing redline's folders on."""
    env = isolated_env(
        setup.home, CODEX_HOME=str(setup.codex_home), SCRIPTED_API_KEY="dummy", **extra
    )
    argv = [str(binary), "exec", *(["resume", resume] if resume else [])]
    return run_agent([*argv, "--json", "--skip-git-repo-check", prompt], workspace, env)


def test_gemini_cli_hears_a_late_apply_before_its_next_turn(
    workspace: Path, tmp_path: Path
) -> None:
    gemini = require_agent("gemini")
    target = str(workspace / "hello.txt")
    with GeminiServer() as server:
        server.enqueue_tool_call("write_file", {"file_path": target, "content": "hello world\n"})
        server.enqueue_text("waiting")
        server.enqueue_text("noted")
        setup = setup_gemini(tmp_path, workspace, None, trust_folder=True)
        redline(
            workspace,
            "hooks",
            "install",
            "gemini",
            "--user",
            env={**os.environ, "HOME": str(setup.home)},
        )
        env = isolated_env(
            setup.home,
            GEMINI_API_KEY="dummy",
            GOOGLE_GEMINI_BASE_URL=server.origin,
            GEMINI_CLI_NO_RELAUNCH="true",
            **redline_env(),
        )
        base = [str(gemini), "-m", "gemini-2.5-flash", "--yolo", "--output-format", "json"]
        first = run_agent([*base, "-p", "greet the world"], workspace, env)
        assert first.returncode == 0, first.stderr
        assert (workspace / "hello.txt").read_text() == "hello\n"
        action = the_handed_over_action(workspace)
        redline(workspace, "pending", "apply", action)
        before = len(server.model_requests)
        second = run_agent([*base, "--resume", "latest", "-p", "go on"], workspace, env)
        assert second.returncode == 0, second.stderr
        later = server.model_requests[before:]
    assert told(action, "write_file hello.txt", "hello.txt") in seen(later[0])
