"""The real AsyncOpenAI client against the scripted fake server."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from redline.drivers.model.providers.base import (
    ForceTool,
    Message,
    ModelRequest,
    ProviderError,
    ToolCall,
    ToolChoiceRejected,
    ToolSpec,
    Usage,
)
from redline.drivers.model.providers.openai_provider import (
    LOCAL_PLACEHOLDER_KEY,
    OpenAIProvider,
    ToolCallAssembler,
    to_chat_messages,
)

from .fake_openai import FakeOpenAI

READ_TOOL = ToolSpec(
    name="read",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
RESOLVE_TOOL = ToolSpec(
    name="resolve",
    description="Apply or discard the newest pending action.",
    parameters={"type": "object", "properties": {"action": {"enum": ["apply", "discard"]}}},
)
HELLO = (Message(role="user", content="hi"),)


def make(fake: FakeOpenAI, **kwargs: object) -> OpenAIProvider:
    options: dict[str, object] = {"timeout": 5.0, "max_retries": 0}
    options.update(kwargs)
    return OpenAIProvider("fake-model", base_url=fake.base_url, **options)  # type: ignore[arg-type]


async def test_streamed_text_arrives_in_order(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_text("The quick brown fox")
    provider = make(fake_openai)
    seen: list[str] = []
    try:
        response = await provider.complete(ModelRequest(messages=HELLO, tools=()), seen.append)
    finally:
        await provider.aclose()
    assert seen == ["The", " quick", " brown", " fox"]
    assert response.text == "The quick brown fox"
    assert response.tool_calls == ()
    assert response.usage == Usage(input_tokens=11, output_tokens=7)
    assert response.stop_reason == "stop"
    body = fake_openai.requests[0]
    assert body["model"] == "fake-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "tools" not in body
    assert "tool_choice" not in body


async def test_tool_calls_are_assembled_from_fragments(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_tool_calls(
        [
            ("call_a", "read", {"path": "src/app.py", "offset": 10}),
            ("call_b", "edit", {"path": "README.md", "old": 'a "quoted" line', "new": "é"}),
        ],
        text="Let me look.",
    )
    provider = make(fake_openai)
    seen: list[str] = []
    try:
        response = await provider.complete(
            ModelRequest(messages=HELLO, tools=(READ_TOOL,)), seen.append
        )
    finally:
        await provider.aclose()
    assert "".join(seen) == "Let me look."
    assert response.stop_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_a", "read", {"path": "src/app.py", "offset": 10}),
        ("call_b", "edit", {"path": "README.md", "old": 'a "quoted" line', "new": "é"}),
    ]
    assert response.tool_calls[0].raw_arguments == '{"path": "src/app.py", "offset": 10}'


async def test_malformed_arguments_keep_the_raw_text(fake_openai: FakeOpenAI) -> None:
    fragments = ['{"path": ', '"a.py"', ",,}"]
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_x",
                                "type": "function",
                                "function": {"name": "read", "arguments": ""},
                            }
                        ]
                    },
                    "finish_reason": None,
                }
            ]
        }
    ]
    for fragment in fragments:
        chunks.append(
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [{"index": 0, "function": {"arguments": fragment}}]
                        },
                        "finish_reason": None,
                    }
                ]
            }
        )
    fake_openai.enqueue_chunks(chunks)
    provider = make(fake_openai)
    try:
        response = await provider.complete(
            ModelRequest(messages=HELLO, tools=(READ_TOOL,)), lambda _t: None
        )
    finally:
        await provider.aclose()
    (call,) = response.tool_calls
    assert call == ToolCall(
        id="call_x", name="read", arguments={}, raw_arguments='{"path": "a.py",,}'
    )


async def test_tools_and_forced_tool_choice_shape(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_tool_calls([("call_r", "resolve", {"action": "apply"})])
    fake_openai.enqueue_text("ok")
    fake_openai.enqueue_text("ok")
    provider = make(fake_openai)
    try:
        await provider.complete(
            ModelRequest(
                messages=HELLO, tools=(READ_TOOL, RESOLVE_TOOL), tool_choice=ForceTool("resolve")
            ),
            lambda _t: None,
        )
        await provider.complete(
            ModelRequest(messages=HELLO, tools=(READ_TOOL,), tool_choice="required"),
            lambda _t: None,
        )
        await provider.complete(ModelRequest(messages=HELLO, tools=(READ_TOOL,)), lambda _t: None)
    finally:
        await provider.aclose()
    forced, required, auto = fake_openai.requests
    assert forced["tool_choice"] == {"type": "function", "function": {"name": "resolve"}}
    assert forced["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file.",
                "parameters": READ_TOOL.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "resolve",
                "description": RESOLVE_TOOL.description,
                "parameters": RESOLVE_TOOL.parameters,
            },
        },
    ]
    assert required["tool_choice"] == "required"
    assert "tool_choice" not in auto  # "auto" is the default and is left out
    assert "tools" in auto


async def test_conversation_messages_are_converted(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_text("done")
    messages = (
        Message(role="system", content="You are careful."),
        Message(role="user", content="fix it"),
        Message(
            role="assistant",
            content="",
            tool_calls=(
                ToolCall(id="call_1", name="read", arguments={"path": "a.py"}),
                ToolCall(id="call_2", name="read", arguments={}, raw_arguments="{bad"),
            ),
        ),
        Message(role="tool", content="print(1)", tool_call_id="call_1", name="read"),
        Message(role="tool", content="bad arguments", tool_call_id="call_2", is_error=True),
        Message(role="user", content="<system-reminder>This is a preview.</system-reminder>"),
        Message(role="assistant", content="All good."),
    )
    provider = make(fake_openai)
    try:
        await provider.complete(
            ModelRequest(messages=messages, tools=(READ_TOOL,)), lambda _t: None
        )
    finally:
        await provider.aclose()
    assert fake_openai.requests[0]["messages"] == [
        {"role": "system", "content": "You are careful."},
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "read", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "print(1)"},
        {"role": "tool", "tool_call_id": "call_2", "content": "bad arguments"},
        {"role": "user", "content": "<system-reminder>This is a preview.</system-reminder>"},
        {"role": "assistant", "content": "All good."},
    ]


async def test_server_error_is_retried_by_the_sdk(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_error(503, "overloaded", type="server_error")
    fake_openai.enqueue_error(500, "try again", type="server_error")
    fake_openai.enqueue_text("recovered")
    provider = make(fake_openai, max_retries=2)
    try:
        response = await provider.complete(ModelRequest(messages=HELLO, tools=()), lambda _t: None)
    finally:
        await provider.aclose()
    assert response.text == "recovered"
    assert len(fake_openai.requests) == 3
    assert fake_openai.requests[0] == fake_openai.requests[2]


async def test_server_error_after_retries_is_a_provider_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_error(502, "bad gateway", type="server_error")
    fake_openai.enqueue_error(502, "bad gateway", type="server_error")
    provider = make(fake_openai, max_retries=1)
    with pytest.raises(
        ProviderError, match=r"server error .*after 1 retries.*HTTP 502: bad gateway"
    ):
        await provider.complete(ModelRequest(messages=HELLO, tools=()), lambda _t: None)
    await provider.aclose()
    assert len(fake_openai.requests) == 2


async def test_rejected_forced_tool_choice_raises_tool_choice_rejected(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.enqueue_error(
        400, "tool_choice of type 'function' is not supported by this model", param="tool_choice"
    )
    provider = make(fake_openai, max_retries=2)
    request = ModelRequest(messages=HELLO, tools=(RESOLVE_TOOL,), tool_choice=ForceTool("resolve"))
    with pytest.raises(ToolChoiceRejected, match="tool_choice of type 'function' is not supported"):
        await provider.complete(request, lambda _t: None)
    await provider.aclose()
    assert len(fake_openai.requests) == 1  # a 400 is never retried
    assert fake_openai.requests[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "resolve"},
    }


async def test_unrelated_bad_request_is_a_plain_provider_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_error(400, "messages: too long")
    provider = make(fake_openai)
    request = ModelRequest(messages=HELLO, tools=(RESOLVE_TOOL,), tool_choice="required")
    with pytest.raises(ProviderError, match=r"HTTP 400: messages: too long") as info:
        await provider.complete(request, lambda _t: None)
    await provider.aclose()
    assert not isinstance(info.value, ToolChoiceRejected)


async def test_server_without_stream_options_is_retried_without_them(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.enqueue_error(400, "Unrecognized request argument supplied: stream_options")
    fake_openai.enqueue_text("fine")
    fake_openai.enqueue_text("again")
    provider = make(fake_openai)
    try:
        first = await provider.complete(ModelRequest(messages=HELLO, tools=()), lambda _t: None)
        await provider.complete(ModelRequest(messages=HELLO, tools=()), lambda _t: None)
    finally:
        await provider.aclose()
    assert first.text == "fine"
    assert first.usage is None
    assert "stream_options" in fake_openai.requests[0]
    assert "stream_options" not in fake_openai.requests[1]
    assert "stream_options" not in fake_openai.requests[2]


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (401, "Incorrect API key provided", r"rejected the API key \(HTTP 401: Incorrect API key"),
        (404, "The model `fake-model` does not exist", r"unknown model 'fake-model' at http://"),
        (403, "no access", r"access denied"),
    ],
)
async def test_status_errors_name_the_cause(
    fake_openai: FakeOpenAI, status: int, message: str, expected: str
) -> None:
    fake_openai.enqueue_error(status, message)
    provider = make(fake_openai)
    with pytest.raises(ProviderError, match=expected) as info:
        await provider.complete(ModelRequest(messages=HELLO, tools=()), lambda _t: None)
    await provider.aclose()
    assert str(info.value).startswith(f"openai:fake-model @ {fake_openai.base_url}: ")


async def test_unreachable_server_names_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    provider = OpenAIProvider("llama3", base_url=url, timeout=2.0, max_retries=0)
    with pytest.raises(ProviderError, match=rf"cannot reach the model server at {url}"):
        await provider.complete(ModelRequest(messages=HELLO, tools=()), lambda _t: None)
    await provider.aclose()


async def test_silent_server_times_out(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_stall("partial")
    provider = make(fake_openai, timeout=0.3)
    seen: list[str] = []
    with pytest.raises(ProviderError, match=r"timed out after 0.3 s waiting for http://127"):
        await provider.complete(ModelRequest(messages=HELLO, tools=()), seen.append)
    await provider.aclose()
    assert seen == ["partial"]


async def test_cancelling_closes_the_stream(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_stall("Working on it")
    provider = make(fake_openai, timeout=30.0)
    first_text = asyncio.Event()
    task = asyncio.create_task(
        provider.complete(ModelRequest(messages=HELLO, tools=()), lambda _t: first_text.set())
    )
    await asyncio.wait_for(first_text.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(fake_openai.client_gone.wait, 5)
    await provider.aclose()


def test_missing_key_against_the_official_endpoint_fails_before_any_network() -> None:
    with pytest.raises(ProviderError, match="OPENAI_API_KEY is not set"):
        OpenAIProvider("gpt-4o-mini")
    with pytest.raises(ProviderError, match="OPENAI_API_KEY is not set"):
        OpenAIProvider("gpt-4o-mini", base_url="https://api.openai.com/v1/")


def test_environment_and_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    official = OpenAIProvider("gpt-4o-mini")
    assert official.label == "openai:gpt-4o-mini"
    assert "sk-test-secret" not in repr(official)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1/")
    local = OpenAIProvider("qwen2.5-coder")
    assert local.label == "openai:qwen2.5-coder @ http://localhost:11434/v1"
    assert local.can_force_tool is True
    assert not local.scripted


async def test_local_server_gets_a_placeholder_key(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_text("hi")
    provider = make(fake_openai)
    try:
        await provider.complete(ModelRequest(messages=HELLO, tools=()), lambda _t: None)
    finally:
        await provider.aclose()
    assert fake_openai.request_headers[0]["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


def test_importing_redline_does_not_import_openai() -> None:
    import subprocess

    code = (
        "import sys, redline.drivers.model.providers.openai_provider as m;"
        "m.OpenAIProvider('x', base_url='http://127.0.0.1:9/v1');"
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_assembler_copes_with_servers_that_omit_index_and_ids() -> None:
    assembler = ToolCallAssembler()
    assembler.add(None, "a", "read", '{"path":')
    assembler.add(None, None, "read", ' "x"}')
    assembler.add(None, "b", "ls", "")
    assembler.add(None, None, None, None)
    calls = assembler.finish()
    assert calls == (
        ToolCall(id="a", name="read", arguments={"path": "x"}, raw_arguments='{"path": "x"}'),
        ToolCall(id="b", name="ls", arguments={}, raw_arguments=""),
    )


def test_assembler_generates_missing_ids_and_rejects_non_objects() -> None:
    assembler = ToolCallAssembler()
    assembler.add(0, None, "read", "[1, 2]")
    (call,) = assembler.finish()
    assert call.id.startswith("call_")
    assert len(call.id) > len("call_")
    assert call.arguments == {}
    assert call.raw_arguments == "[1, 2]"


def test_plain_assistant_text_keeps_empty_content() -> None:
    assert to_chat_messages([Message(role="assistant")]) == [{"role": "assistant", "content": ""}]
