"""The e2e harness without any agent: the scripted servers, the recording hook, the trust hash."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.agents import (
    HookRecorder,
    codex_hook_hash,
    codex_trust_state,
    find_agent,
    recording_hooks,
)
from tests.e2e.model_servers import (
    FALLBACK_TEXT,
    GeminiServer,
    ResponsesServer,
    function_outputs,
    function_responses,
)


def _post(url: str, body: dict[str, Any]) -> tuple[str, str]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["content-type"], response.read().decode()


def _sse(text: str) -> list[tuple[str | None, Any]]:
    events = []
    for block in text.strip().split("\n\n"):
        name = None
        data = None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: ") :])
        events.append((name, data))
    return events


def test_responses_server_streams_the_scripted_turns_and_records_requests() -> None:
    with ResponsesServer() as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        server.enqueue_tool_call("apply_patch", "*** Begin Patch\n*** End Patch\n")
        server.enqueue_tool_call("exec_command", {"cmd": "ls"})
        first = {"model": "m", "input": [], "stream": True}
        kind, text = _post(f"{server.base_url}/responses", first)
        second = {"input": [{"type": "custom_tool_call_output", "call_id": "c", "output": "no"}]}
        _, text2 = _post(f"{server.base_url}/responses", second)
        _, text3 = _post(f"{server.base_url}/responses", {"input": []})

    assert kind == "text/event-stream"
    names = [name for name, _ in _sse(text)]
    assert names == ["response.created", "response.output_item.done", "response.completed"]
    item = _sse(text)[1][1]["item"]
    assert item["type"] == "custom_tool_call"
    assert item["name"] == "apply_patch"
    assert item["input"] == "*** Begin Patch\n*** End Patch\n"
    function_call = _sse(text2)[1][1]["item"]
    assert function_call["type"] == "function_call"
    assert json.loads(function_call["arguments"]) == {"cmd": "ls"}
    message = _sse(text3)[1][1]["item"]
    assert message["content"] == [{"type": "output_text", "text": FALLBACK_TEXT}]
    assert server.model_requests[0] == first
    assert function_outputs(server.model_requests[1]) == ["no"]


def test_gemini_server_streams_function_calls_and_answers_side_calls() -> None:
    with GeminiServer() as server:
        server.enqueue_tool_call("write_file", {"file_path": "/x", "content": "y"})
        base = f"{server.origin}/v1beta/models/gemini-2.5-flash"
        kind, text = _post(f"{base}:streamGenerateContent?alt=sse", {"contents": []})
        reply = {
            "contents": [
                {"role": "user", "parts": [{"functionResponse": {"response": {"error": "no"}}}]}
            ]
        }
        _, text2 = _post(f"{base}:streamGenerateContent?alt=sse", reply)
        _, side = _post(
            f"{base}:generateContent",
            {"generationConfig": {"responseMimeType": "application/json"}},
        )

    assert kind == "text/event-stream"
    [(_, chunk)] = _sse(text)
    [part] = chunk["candidates"][0]["content"]["parts"]
    assert part["functionCall"]["name"] == "write_file"
    assert part["functionCall"]["args"] == {"file_path": "/x", "content": "y"}
    assert _sse(text2)[0][1]["candidates"][0]["content"]["parts"] == [{"text": FALLBACK_TEXT}]
    assert json.loads(side)["candidates"][0]["content"]["parts"] == [{"text": "{}"}]
    assert len(server.model_requests) == 2  # the side call is not part of the script
    assert function_responses(server.model_requests[1]) == [{"error": "no"}]


def test_the_recording_hook_saves_stdin_and_answers_as_told(tmp_path: Path) -> None:
    recorder = HookRecorder(tmp_path / "hook")
    recorder.answer("PreToolUse", stdout={"decision": "block", "reason": "r"}, exit=2, stderr="e")
    payload = {"hook_event_name": "PreToolUse", "tool_name": "apply_patch"}
    proc = subprocess.run(
        recorder.command, shell=True, input=json.dumps(payload), capture_output=True, text=True
    )
    other = subprocess.run(
        recorder.command, shell=True, input="not json", capture_output=True, text=True
    )

    assert (proc.returncode, json.loads(proc.stdout), proc.stderr) == (
        2,
        {"decision": "block", "reason": "r"},
        "e",
    )
    assert (other.returncode, other.stdout, other.stderr) == (0, "", "")
    assert recorder.calls() == [payload, {"unparsed": "not json"}]
    assert recorder.calls("PreToolUse") == [payload]


def test_codex_trust_state_keys_each_handler_by_file_event_and_position(tmp_path: Path) -> None:
    recorder = HookRecorder(tmp_path / "hook")
    hooks = recording_hooks(recorder, ["PreToolUse", "PostToolUse"], "apply_patch", timeout=30)
    path = tmp_path / "hooks.json"
    state = codex_trust_state(path, hooks)
    group = hooks["hooks"]["PreToolUse"][0]
    handler = group["hooks"][0]
    assert f'[hooks.state."{path}:pre_tool_use:0:0"]' in state
    assert f'[hooks.state."{path}:post_tool_use:0:0"]' in state
    assert f'trusted_hash = "{codex_hook_hash("pre_tool_use", group, handler)}"' in state
    # The defaults are part of the identity: an explicit 600 s equals no timeout, 30 s does not.
    default = {"type": "command", "command": "x"}
    explicit = {**default, "timeout": 600}
    assert codex_hook_hash("pre_tool_use", {}, default) == codex_hook_hash(
        "pre_tool_use", {}, explicit
    )
    assert codex_hook_hash("pre_tool_use", {}, default) != codex_hook_hash(
        "pre_tool_use", {}, {**default, "timeout": 30}
    )


def test_find_agent_is_none_when_the_agents_dir_has_no_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDLINE_AGENTS_DIR", str(tmp_path))
    assert find_agent("codex") is None
    binary = tmp_path / "node_modules" / ".bin" / "codex"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    assert find_agent("codex") is None  # not executable
    binary.chmod(0o755)
    assert find_agent("codex") == binary
