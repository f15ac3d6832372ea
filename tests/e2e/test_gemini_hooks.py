"""The real Gemini CLI (0.61.0) against the scripted Gemini API server, with the recording hook."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.e2e.agents import HookRecorder, recording_hooks, require_agent, run_gemini, setup_gemini
from tests.e2e.model_servers import GeminiServer, function_responses

pytestmark = pytest.mark.e2e


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello\n")
    return workspace


def test_a_deny_blocks_write_file_and_the_reason_reaches_the_model(tmp_path: Path) -> None:
    gemini = require_agent("gemini")
    workspace = _workspace(tmp_path)
    target = str(workspace / "hello.txt")
    recorder = HookRecorder(tmp_path / "hook")
    reason = "Discarded by the reviewer: say hello properly"
    recorder.answer("BeforeTool", stdout={"decision": "deny", "reason": reason})
    hooks = recording_hooks(recorder, ["BeforeTool", "AfterTool"], "write_file|replace")
    with GeminiServer() as server:
        server.enqueue_tool_call("write_file", {"file_path": target, "content": "hello world\n"})
        server.enqueue_text("understood")
        setup = setup_gemini(tmp_path, workspace, hooks, trust_folder=True)
        run = run_gemini(gemini, setup, server, workspace, "greet the world in hello.txt")

    assert run.returncode == 0, run.stderr
    assert (workspace / "hello.txt").read_text() == "hello\n"
    [before] = recorder.calls()  # no AfterTool: the tool never ran
    assert before["hook_event_name"] == "BeforeTool"
    assert before["tool_name"] == "write_file"
    assert before["tool_input"] == {"file_path": target, "content": "hello world\n"}
    assert before["cwd"] == str(workspace)
    assert len(server.model_requests) == 2
    assert function_responses(server.model_requests[1]) == [
        {"error": f"Tool execution blocked: {reason}"}
    ]


def test_a_full_tool_input_rewrites_the_replace_gemini_performs(tmp_path: Path) -> None:
    gemini = require_agent("gemini")
    workspace = _workspace(tmp_path)
    target = str(workspace / "hello.txt")
    recorder = HookRecorder(tmp_path / "hook")
    approved = {
        "file_path": target,
        "old_string": "hello\n",
        "new_string": "hello, reviewed\n",
        "instruction": "as reviewed",
    }
    recorder.answer(
        "BeforeTool",
        stdout={"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": approved}},
    )
    hooks = recording_hooks(recorder, ["BeforeTool", "AfterTool"], "write_file|replace")
    proposed = {
        "file_path": target,
        "old_string": "hello",
        "new_string": "hello world",
        "instruction": "greet the world",
    }
    with GeminiServer() as server:
        server.enqueue_tool_call("replace", proposed)
        server.enqueue_text("done")
        setup = setup_gemini(tmp_path, workspace, hooks, trust_folder=True)
        run = run_gemini(gemini, setup, server, workspace, "greet the world in hello.txt")

    assert run.returncode == 0, run.stderr
    assert (workspace / "hello.txt").read_text() == "hello, reviewed\n"
    before, after = recorder.calls()
    assert before["tool_input"] == proposed
    assert after["hook_event_name"] == "AfterTool"
    assert after["tool_input"] == approved
    [response] = function_responses(server.model_requests[1])
    assert "modified by a hook" in response["output"]


def test_headless_gemini_refuses_an_untrusted_folder(tmp_path: Path) -> None:
    gemini = require_agent("gemini")
    workspace = _workspace(tmp_path)
    recorder = HookRecorder(tmp_path / "hook")
    hooks = recording_hooks(recorder, ["BeforeTool"], "write_file")
    with GeminiServer() as server:
        setup = setup_gemini(tmp_path, workspace, hooks, trust_folder=False)
        run = run_gemini(gemini, setup, server, workspace, "anything")
        assert server.model_requests == []

    assert run.returncode == 55
    assert "not running in a trusted directory" in run.stderr
    assert recorder.calls() == []


def test_the_model_of_a_write_is_read_from_the_chat_recording(tmp_path: Path) -> None:
    """Issue 48: Gemini CLI's hook calls name no model and no call id; the chat recording
    at ``transcript_path`` holds the call with the model that made it."""
    import json
    import os

    from redline.drivers.hooks.agent_model import model_of
    from redline.drivers.hooks.payload import parse_payload

    gemini = require_agent("gemini")
    workspace = _workspace(tmp_path)
    target = str(workspace / "hello.txt")
    recorder = HookRecorder(tmp_path / "hook")
    hooks = recording_hooks(recorder, ["AfterTool"], "write_file|replace")
    with GeminiServer() as server:
        server.enqueue_tool_call("write_file", {"file_path": target, "content": "hello world\n"})
        server.enqueue_text("done")
        setup = setup_gemini(tmp_path, workspace, hooks, trust_folder=True)
        run = run_gemini(gemini, setup, server, workspace, "greet the world in hello.txt")
    assert run.returncode == 0, run.stderr
    [after] = recorder.calls()
    record = os.environ.get("REDLINE_RECORD_TRANSCRIPT")
    if record:  # how tests/fixtures/hooks/gemini/transcript.jsonl was made
        Path(record).write_bytes(Path(after["transcript_path"]).read_bytes())
        Path(record).with_suffix(".after.json").write_text(json.dumps(after, indent=2))
    model, why = model_of(parse_payload("gemini", json.dumps(after).encode()))
    assert model and model.startswith("gemini"), why
