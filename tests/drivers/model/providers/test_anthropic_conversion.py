"""Anthropic conversions and stream folding, without the optional package or any network."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace as NS
from typing import Any

import pytest

from redline.drivers.model.providers import anthropic_provider
from redline.drivers.model.providers.anthropic_provider import (
    MISSING_EXTRA,
    AnthropicProvider,
    StreamAccumulator,
    anthropic_messages,
    anthropic_tool_choice,
    anthropic_tools,
    build_params,
)
from redline.drivers.model.providers.base import (
    ForceTool,
    Message,
    ModelRequest,
    ProviderError,
    ToolCall,
    ToolSpec,
    Usage,
)

RESOLVE = ToolSpec(
    name="resolve",
    description="Apply or discard.",
    parameters={"type": "object", "properties": {"action": {"type": "string"}}},
)
READ_CALL = ToolCall(id="toolu_1", name="read", arguments={"path": "a.py"})
TOOL_LOOP = (
    Message(role="system", content="Be careful."),
    Message(role="user", content="fix it"),
    Message(role="assistant", content="Reading.", tool_calls=(READ_CALL,)),
    Message(role="tool", content="print(1)", tool_call_id="toolu_1"),
)


def test_tools_and_tool_choice_shapes() -> None:
    assert anthropic_tools([RESOLVE]) == [
        {"name": "resolve", "description": "Apply or discard.", "input_schema": RESOLVE.parameters}
    ]
    assert anthropic_tool_choice("auto") == {"type": "auto"}
    assert anthropic_tool_choice("required") == {"type": "any"}
    assert anthropic_tool_choice("none") == {"type": "none"}
    assert anthropic_tool_choice(ForceTool("resolve")) == {"type": "tool", "name": "resolve"}


def test_messages_merge_tool_results_and_reminders_into_one_user_turn() -> None:
    messages = (
        Message(role="system", content="Be careful."),
        Message(role="system", content="Stay inside the workspace."),
        Message(role="user", content="fix it"),
        Message(
            role="assistant",
            content="",
            tool_calls=(
                READ_CALL,
                ToolCall(id="toolu_2", name="edit", arguments={}, raw_arguments="{bad"),
            ),
        ),
        Message(role="tool", content="print(1)", tool_call_id="toolu_1", name="read"),
        Message(role="tool", content="bad arguments", tool_call_id="toolu_2", is_error=True),
        Message(role="user", content="<system-reminder>This is a preview.</system-reminder>"),
        Message(role="assistant", content="Done."),
        Message(role="user", content=""),
    )
    system, converted = anthropic_messages(messages)
    assert system == "Be careful.\n\nStay inside the workspace."
    assert converted == [
        {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "toolu_2", "name": "edit", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "print(1)"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "bad arguments",
                    "is_error": True,
                },
                {"type": "text", "text": "<system-reminder>This is a preview.</system-reminder>"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]


def test_params_without_tools_send_no_tool_fields() -> None:
    params = build_params(
        "claude-x", ModelRequest(messages=(Message(role="user", content="hi"),), tools=())
    )
    assert params == {
        "model": "claude-x",
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }


def test_forced_turns_never_send_thinking() -> None:
    forced = ModelRequest(messages=TOOL_LOOP, tools=(RESOLVE,), tool_choice=ForceTool("resolve"))
    required = ModelRequest(messages=TOOL_LOOP, tools=(RESOLVE,), tool_choice="required")
    store = {"toolu_1": [{"type": "thinking", "thinking": "hm", "signature": "sig"}]}
    for request in (forced, required):
        params = build_params("claude-x", request, thinking_budget=2048, thinking=store)
        assert "thinking" not in params
        assert params["tool_choice"] in ({"type": "tool", "name": "resolve"}, {"type": "any"})
        assert params["system"] == "Be careful."


def test_thinking_is_sent_on_free_turns_with_its_blocks_replayed() -> None:
    store = {"toolu_1": [{"type": "thinking", "thinking": "hm", "signature": "sig"}]}
    request = ModelRequest(messages=TOOL_LOOP, tools=(RESOLVE,))
    params = build_params("claude-x", request, thinking_budget=2048, thinking=store)
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert params["tool_choice"] == {"type": "auto"}
    assert params["messages"][1]["content"][0] == store["toolu_1"][0]
    assert params["messages"][1]["content"][1] == {"type": "text", "text": "Reading."}


def test_thinking_is_skipped_when_the_open_tool_loop_has_no_thinking_block() -> None:
    # The previous turn was forced, so it has no thinking block to replay.
    request = ModelRequest(messages=TOOL_LOOP, tools=(RESOLVE,))
    assert "thinking" not in build_params("claude-x", request, thinking_budget=2048, thinking={})
    fresh = ModelRequest(messages=(Message(role="user", content="hi"),), tools=(RESOLVE,))
    assert (
        build_params("claude-x", fresh, thinking_budget=2048)["thinking"]["budget_tokens"] == 2048
    )


def _events() -> list[Any]:
    return [
        NS(type="message_start", message=NS(usage=NS(input_tokens=20, output_tokens=1))),
        NS(
            type="content_block_start",
            index=0,
            content_block=NS(type="thinking", thinking="", signature=""),
        ),
        NS(
            type="content_block_delta", index=0, delta=NS(type="thinking_delta", thinking="Let me ")
        ),
        NS(type="content_block_delta", index=0, delta=NS(type="thinking_delta", thinking="think.")),
        NS(type="content_block_delta", index=0, delta=NS(type="signature_delta", signature="SIG")),
        NS(type="content_block_stop", index=0),
        NS(type="content_block_start", index=1, content_block=NS(type="text", text="")),
        NS(type="content_block_delta", index=1, delta=NS(type="text_delta", text="Apply")),
        NS(type="content_block_delta", index=1, delta=NS(type="text_delta", text="ing.")),
        NS(
            type="content_block_start",
            index=2,
            content_block=NS(type="tool_use", id="toolu_9", name="resolve", input={}),
        ),
        NS(
            type="content_block_delta",
            index=2,
            delta=NS(type="input_json_delta", partial_json='{"action"'),
        ),
        NS(
            type="content_block_delta",
            index=2,
            delta=NS(type="input_json_delta", partial_json=': "apply"}'),
        ),
        NS(
            type="content_block_start",
            index=3,
            content_block=NS(type="tool_use", id="toolu_10", name="read", input={}),
        ),
        NS(
            type="content_block_delta",
            index=3,
            delta=NS(type="input_json_delta", partial_json='{"pa'),
        ),
        NS(type="message_delta", delta=NS(stop_reason="tool_use"), usage=NS(output_tokens=42)),
        NS(type="message_stop"),
    ]


def test_stream_accumulator_folds_text_tools_thinking_and_usage() -> None:
    seen: list[str] = []
    accumulator = StreamAccumulator(seen.append)
    for event in _events():
        accumulator.feed(event)
    response = accumulator.response()
    assert seen == ["Apply", "ing."]
    assert response.text == "Applying."
    assert response.tool_calls == (
        ToolCall(
            id="toolu_9",
            name="resolve",
            arguments={"action": "apply"},
            raw_arguments='{"action": "apply"}',
        ),
        ToolCall(id="toolu_10", name="read", arguments={}, raw_arguments='{"pa'),
    )
    assert response.usage == Usage(input_tokens=20, output_tokens=42)
    assert response.stop_reason == "tool_use"
    assert accumulator.thinking_blocks() == [
        {"type": "thinking", "thinking": "Let me think.", "signature": "SIG"}
    ]


def test_missing_extra_is_a_clear_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anthropic_provider.importlib.util, "find_spec", lambda _name: None)
    with pytest.raises(ProviderError) as info:
        AnthropicProvider("claude-x")
    assert str(info.value) == MISSING_EXTRA
    assert MISSING_EXTRA == (
        "the anthropic provider needs the optional extra: pip install 'redline[anthropic]'"
    )


def test_missing_key_and_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anthropic_provider.importlib.util, "find_spec", lambda _name: object())
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicProvider("claude-x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    provider = AnthropicProvider("claude-x")
    assert provider.label == "anthropic:claude-x"
    assert "sk-ant-secret" not in repr(provider)
    proxied = AnthropicProvider("claude-x", base_url="http://127.0.0.1:4000/")
    assert proxied.label == "anthropic:claude-x @ http://127.0.0.1:4000"
    with pytest.raises(ProviderError, match="thinking budget 100"):
        AnthropicProvider("claude-x", thinking_budget=100)


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events
    )


ANTHROPIC_STREAM = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "On it"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_7", "name": "resolve", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '{"action": "apply"}'},
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 9},
    },
    {"type": "message_stop"},
]


async def test_real_client_against_a_fake_messages_server() -> None:
    """Runs only where the extra is installed (e.g. ``uv run --with anthropic pytest``)."""
    pytest.importorskip("anthropic")
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            payload = _sse(ANTHROPIC_STREAM)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        provider = AnthropicProvider(
            "claude-x",
            base_url=f"http://127.0.0.1:{server.server_address[1]}",
            api_key="test",
            max_retries=0,
            thinking_budget=2048,
        )
        seen: list[str] = []
        request = ModelRequest(
            messages=TOOL_LOOP, tools=(RESOLVE,), tool_choice=ForceTool("resolve")
        )
        response = await provider.complete(request, seen.append)
        await provider.aclose()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert seen == ["On it"]
    assert response.tool_calls == (
        ToolCall(
            id="toolu_7",
            name="resolve",
            arguments={"action": "apply"},
            raw_arguments='{"action": "apply"}',
        ),
    )
    assert response.usage == Usage(input_tokens=5, output_tokens=9)
    (body,) = bodies
    assert body["tool_choice"] == {"type": "tool", "name": "resolve"}
    assert "thinking" not in body
    assert body["stream"] is True
    assert body["system"] == "Be careful."
