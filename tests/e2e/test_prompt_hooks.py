"""The prompt-time hook events of the real agents (issue 46): what each sends, and that the
``additionalContext`` a hook answers with reaches the model.

Claude Code ``UserPromptSubmit`` and ``PreToolUse``, Codex ``UserPromptSubmit``, Gemini CLI
``BeforeAgent``, each run against its scripted model server with the recording hook. With
``REDLINE_RECORD_PROMPT_HOOKS=DIR`` the payloads are saved to ``DIR/<agent>/`` (how
``tests/fixtures/hooks/<agent>/UserPromptSubmit.json`` and the others were made).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.agents import (
    HookRecorder,
    isolated_env,
    recording_hooks,
    require_agent,
    run_agent,
    run_codex,
    run_gemini,
    setup_codex,
    setup_gemini,
)
from tests.e2e.anthropic_server import ScriptedAnthropic
from tests.e2e.model_servers import GeminiServer, ResponsesServer

pytestmark = pytest.mark.e2e

PROMPT_NOTE = "redline-note: pa-5 (Write a.py), which you proposed earlier, was applied"
TOOL_NOTE = "redline-note: pa-6 (Edit b.py), which you proposed earlier, was discarded: no"


def _save(agent: str, name: str, payload: dict[str, Any]) -> None:
    folder = os.environ.get("REDLINE_RECORD_PROMPT_HOOKS")
    if folder:
        target = Path(folder) / agent
        target.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello\n")
    return workspace


def _context(event: str, text: str) -> dict[str, Any]:
    return {"stdout": {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}}


def test_claude_code_hears_additional_context_at_the_prompt_and_before_a_tool(
    tmp_path: Path,
) -> None:
    claude = require_agent("claude")
    workspace = _workspace(tmp_path)
    recorder = HookRecorder(tmp_path / "hook")
    recorder.answer("UserPromptSubmit", **_context("UserPromptSubmit", PROMPT_NOTE))
    # No permission decision: the call goes on as it would without the hook (a "pass").
    recorder.answer("PreToolUse", **_context("PreToolUse", TOOL_NOTE))
    hooks = recording_hooks(recorder, ["PreToolUse"], "*")
    hooks["hooks"].update(recording_hooks(recorder, ["UserPromptSubmit"], None)["hooks"])
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.local.json").write_text(json.dumps(hooks))
    turns = [[{"tool_use": "Read", "input": {"file_path": str(workspace / "hello.txt")}}]]
    with ScriptedAnthropic(turns) as server:
        env = isolated_env(
            tmp_path / "home",
            ANTHROPIC_BASE_URL=server.url,
            ANTHROPIC_API_KEY="dummy",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        argv = [str(claude), "-p", "read hello.txt", "--permission-mode", "acceptEdits"]
        run = run_agent(argv, workspace, env)
        requests = server.agent_requests()
    assert run.returncode == 0, run.stderr
    [prompt] = recorder.calls("UserPromptSubmit")
    [pre] = recorder.calls("PreToolUse")
    _save("claude", "user-prompt-submit.json", prompt)
    _save("claude", "pre-read-context.json", pre)
    assert prompt["prompt"] == "read hello.txt"
    assert prompt["session_id"] == pre["session_id"]
    assert PROMPT_NOTE in json.dumps(requests[0]["messages"])
    assert TOOL_NOTE in json.dumps(requests[-1]["messages"])


def test_codex_hears_additional_context_at_the_prompt(tmp_path: Path) -> None:
    codex = require_agent("codex")
    workspace = _workspace(tmp_path)
    recorder = HookRecorder(tmp_path / "hook")
    recorder.answer("UserPromptSubmit", **_context("UserPromptSubmit", PROMPT_NOTE))
    hooks = recording_hooks(recorder, ["UserPromptSubmit"], None)
    with ResponsesServer() as server:
        server.enqueue_text("understood")
        setup = setup_codex(tmp_path, workspace, server, hooks)
        run = run_codex(codex, setup, workspace, "say hello")
        requests = list(server.model_requests)
    assert run.returncode == 0, run.stderr
    [prompt] = recorder.calls("UserPromptSubmit")
    _save("codex", "UserPromptSubmit.json", prompt)
    assert prompt["prompt"] == "say hello"
    assert prompt["session_id"]
    assert PROMPT_NOTE in json.dumps(requests[0])


def test_gemini_cli_hears_additional_context_before_the_agent(tmp_path: Path) -> None:
    gemini = require_agent("gemini")
    workspace = _workspace(tmp_path)
    recorder = HookRecorder(tmp_path / "hook")
    recorder.answer("BeforeAgent", **_context("BeforeAgent", PROMPT_NOTE))
    hooks = recording_hooks(recorder, ["BeforeAgent"], None)
    with GeminiServer() as server:
        server.enqueue_text("understood")
        setup = setup_gemini(tmp_path, workspace, hooks, trust_folder=True)
        run = run_gemini(gemini, setup, server, workspace, "say hello")
        requests = list(server.model_requests)
    assert run.returncode == 0, run.stderr
    [prompt] = recorder.calls("BeforeAgent")
    _save("gemini", "BeforeAgent.json", prompt)
    assert prompt["prompt"] == "say hello"
    assert prompt["session_id"]
    assert PROMPT_NOTE in json.dumps(requests[0])
