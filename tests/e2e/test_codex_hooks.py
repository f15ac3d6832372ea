"""The real Codex (0.171.0) against the scripted Responses server, with the recording hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.e2e.agents import HookRecorder, recording_hooks, require_agent, run_codex, setup_codex
from tests.e2e.model_servers import ResponsesServer, function_outputs

pytestmark = pytest.mark.e2e

PATCH = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello world\n*** End Patch\n"
APPROVED = (
    "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hello, reviewed\n*** End Patch\n"
)


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello\n")
    return workspace


def _pre_answer(**output: object) -> dict[str, object]:
    return {"stdout": {"hookSpecificOutput": {"hookEventName": "PreToolUse", **output}}}


def test_a_deny_blocks_apply_patch_and_the_reason_reaches_the_model(tmp_path: Path) -> None:
    codex = require_agent("codex")
    workspace = _workspace(tmp_path)
    recorder = HookRecorder(tmp_path / "hook")
    reason = "Discarded by the reviewer: say hello properly"
    recorder.answer(
        "PreToolUse", **_pre_answer(permissionDecision="deny", permissionDecisionReason=reason)
    )
    hooks = recording_hooks(recorder, ["PreToolUse", "PostToolUse"], "apply_patch")
    with ResponsesServer() as server:
        server.enqueue_tool_call("apply_patch", PATCH)
        server.enqueue_text("understood")
        setup = setup_codex(tmp_path, workspace, server, hooks)
        run = run_codex(codex, setup, workspace, "greet the world in hello.txt")

    assert run.returncode == 0, run.stderr
    assert (workspace / "hello.txt").read_text() == "hello\n"
    [pre] = recorder.calls()  # no PostToolUse: the tool never ran
    assert pre["hook_event_name"] == "PreToolUse"
    assert pre["tool_name"] == "apply_patch"
    assert pre["tool_input"] == {"command": PATCH}
    assert pre["cwd"] == str(workspace)
    assert pre["session_id"] and pre["tool_use_id"]
    assert len(server.model_requests) == 2
    [result] = function_outputs(server.model_requests[1])
    assert result.startswith(f"Command blocked by PreToolUse hook: {reason}.")


def test_updated_input_rewrites_the_patch_codex_applies(tmp_path: Path) -> None:
    codex = require_agent("codex")
    workspace = _workspace(tmp_path)
    recorder = HookRecorder(tmp_path / "hook")
    recorder.answer(
        "PreToolUse", **_pre_answer(permissionDecision="allow", updatedInput={"command": APPROVED})
    )
    hooks = recording_hooks(recorder, ["PreToolUse", "PostToolUse"], "apply_patch")
    with ResponsesServer() as server:
        server.enqueue_tool_call("apply_patch", PATCH)
        server.enqueue_text("done")
        setup = setup_codex(tmp_path, workspace, server, hooks)
        run = run_codex(codex, setup, workspace, "greet the world in hello.txt")

    assert run.returncode == 0, run.stderr
    assert (workspace / "hello.txt").read_text() == "hello, reviewed\n"
    pre, post = recorder.calls()
    assert pre["tool_input"] == {"command": PATCH}
    assert post["hook_event_name"] == "PostToolUse"
    assert post["tool_input"] == {"command": APPROVED}
    assert "Success." in post["tool_response"]


def test_an_untrusted_hook_is_skipped_silently_and_the_edit_goes_through(tmp_path: Path) -> None:
    codex = require_agent("codex")
    workspace = _workspace(tmp_path)
    recorder = HookRecorder(tmp_path / "hook")
    recorder.answer("*", exit=2, stderr="would block")
    hooks = recording_hooks(recorder, ["PreToolUse"], "apply_patch")
    with ResponsesServer() as server:
        server.enqueue_tool_call("apply_patch", PATCH)
        server.enqueue_text("done")
        setup = setup_codex(tmp_path, workspace, server, hooks, trust_hooks=False)
        run = run_codex(codex, setup, workspace, "greet the world in hello.txt")

    assert run.returncode == 0, run.stderr
    assert recorder.calls() == []
    assert (workspace / "hello.txt").read_text() == "hello world\n"
    assert "hooks.state" not in (setup.codex_home / "config.toml").read_text()
    assert json.loads(setup.hooks_path.read_text()) == hooks
