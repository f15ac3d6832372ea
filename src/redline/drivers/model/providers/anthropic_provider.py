"""Anthropic Messages API behind the provider contract (optional ``anthropic`` extra).

Everything except the network call is plain functions over dicts, so conversions are
testable without the package. Extended thinking is off unless ``thinking_budget`` is set, and
never sent on a turn that forces a tool (the API refuses that combination).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redline.drivers.model.providers.base import (
    ForceTool,
    Message,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderError,
    TextSink,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Usage,
)
from redline.drivers.model.providers.openai_provider import (
    LOCAL_PLACEHOLDER_KEY,
    is_official_endpoint,
    parse_arguments,
    translate_sdk_error,
)
from redline.jsontypes import JsonObject, JsonValue
from redline.redaction import redact_url

MISSING_EXTRA = "the anthropic provider needs the optional extra: pip install 'redline[anthropic]'"
OFFICIAL_BASE_URL = "https://api.anthropic.com"
OFFICIAL_HOST = "api.anthropic.com"
DEFAULT_MAX_TOKENS = 8192

# Thinking blocks of one assistant turn, keyed by that turn's first tool-call id.
ThinkingStore = Mapping[str, list[JsonObject]]


def anthropic_tools(tools: Sequence[ToolSpec]) -> list[JsonValue]:
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
        for tool in tools
    ]


def anthropic_tool_choice(choice: ToolChoice) -> JsonObject:
    if isinstance(choice, ForceTool):
        return {"type": "tool", "name": choice.name}
    choices: dict[str, JsonObject] = {
        "auto": {"type": "auto"},
        "required": {"type": "any"},
        "none": {"type": "none"},
    }
    return choices[choice]


def forces_tool(choice: ToolChoice) -> bool:
    return isinstance(choice, ForceTool) or choice == "required"


def _blocks(message: Message, thinking: ThinkingStore) -> list[JsonValue]:
    if message.role == "tool":
        result: JsonObject = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id or "",
            "content": message.content,
        }
        if message.is_error:
            result["is_error"] = True
        return [result]
    blocks: list[JsonValue] = []
    if message.role == "assistant" and message.tool_calls:
        blocks.extend(thinking.get(message.tool_calls[0].id, ()))
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def anthropic_messages(
    messages: Sequence[Message], thinking: ThinkingStore | None = None
) -> tuple[str, list[JsonValue]]:
    """``(system, messages)`` in the Messages API shape.

    System messages become the top-level system text; tool results become user-role
    ``tool_result`` blocks. Consecutive same-role messages are merged, because every tool
    result of a turn must sit in the one user message that follows it, ahead of any text
    (such as a system reminder) added after them.
    """
    store = thinking or {}
    system: list[str] = []
    turns: list[tuple[str, list[JsonValue]]] = []
    for message in messages:
        if message.role == "system":
            if message.content:
                system.append(message.content)
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message, store)
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    return "\n\n".join(system), [{"role": role, "content": blocks} for role, blocks in turns]


def thinking_allowed(request: ModelRequest, thinking: ThinkingStore) -> bool:
    """Whether a thinking param may be sent for this request.

    Never on forced turns. Mid tool loop the API also wants the last assistant turn to start
    with its thinking block, which a forced (thinking-less) turn does not have.
    """
    if forces_tool(request.tool_choice):
        return False
    for message in reversed(request.messages):
        if message.role == "assistant":
            return not message.tool_calls or message.tool_calls[0].id in thinking
    return True


def build_params(
    model: str,
    request: ModelRequest,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    thinking_budget: int | None = None,
    thinking: ThinkingStore | None = None,
) -> JsonObject:
    store = thinking or {}
    system, messages = anthropic_messages(request.messages, store)
    params: JsonObject = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = anthropic_tools(request.tools)
        params["tool_choice"] = anthropic_tool_choice(request.tool_choice)
    if thinking_budget and thinking_allowed(request, store):
        params["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
    return params


@dataclass
class _Block:
    """One content block of the streamed turn, filled in as its events arrive."""

    type: str
    text: str = ""
    id: str = ""
    name: str = ""
    input: JsonValue = None
    input_json: str = ""  # the tool input's streamed JSON text
    thinking: str = ""
    signature: str = ""
    data: str = ""


class StreamAccumulator:
    """Folds raw Messages API stream events (objects with a ``type`` attribute) into a turn."""

    def __init__(self, on_text: TextSink) -> None:
        self._on_text = on_text
        self._blocks: dict[int, _Block] = {}
        self._input_tokens = 0
        self._output_tokens = 0
        self._stop_reason = ""

    # ``event`` and the client below are the optional ``anthropic`` SDK's objects: the
    # extra is not installed for type checking (pyproject's mypy override), so they are Any.
    def feed(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "message_start":
            usage = getattr(event.message, "usage", None)
            self._input_tokens = int(getattr(usage, "input_tokens", 0) or 0)
            self._output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
        elif kind == "content_block_start":
            block = event.content_block
            self._blocks[event.index] = _Block(
                type=block.type,
                text=getattr(block, "text", "") or "",
                id=getattr(block, "id", ""),
                name=getattr(block, "name", ""),
                input=getattr(block, "input", None),
                thinking=getattr(block, "thinking", "") or "",
                signature=getattr(block, "signature", "") or "",
                data=getattr(block, "data", ""),
            )
            if block.type == "text" and self._blocks[event.index].text:
                self._on_text(self._blocks[event.index].text)
        elif kind == "content_block_delta":
            current = self._blocks.get(event.index)
            delta = event.delta
            if current is None:
                return
            if delta.type == "text_delta":
                current.text += delta.text
                self._on_text(delta.text)
            elif delta.type == "input_json_delta":
                current.input_json += delta.partial_json
            elif delta.type == "thinking_delta":
                current.thinking += delta.thinking
            elif delta.type == "signature_delta":
                current.signature += delta.signature
        elif kind == "message_delta":
            self._stop_reason = getattr(event.delta, "stop_reason", None) or self._stop_reason
            usage = getattr(event, "usage", None)
            if usage is not None and getattr(usage, "output_tokens", None) is not None:
                self._output_tokens = int(usage.output_tokens)

    def thinking_blocks(self) -> list[JsonObject]:
        blocks: list[JsonObject] = []
        for _, block in sorted(self._blocks.items()):
            if block.type == "thinking":
                blocks.append(
                    {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
                )
            elif block.type == "redacted_thinking":
                blocks.append({"type": "redacted_thinking", "data": block.data})
        return blocks

    def response(self) -> ModelResponse:
        ordered = [block for _, block in sorted(self._blocks.items())]
        calls: list[ToolCall] = []
        for block in ordered:
            if block.type != "tool_use":
                continue
            raw = block.input_json or (json.dumps(block.input) if block.input else "")
            calls.append(
                ToolCall(
                    id=block.id,
                    name=block.name,
                    arguments=parse_arguments(raw),
                    raw_arguments=raw,
                )
            )
        return ModelResponse(
            text="".join(block.text for block in ordered if block.type == "text"),
            tool_calls=tuple(calls),
            usage=Usage(input_tokens=self._input_tokens, output_tokens=self._output_tokens),
            stop_reason=self._stop_reason,
        )


class AnthropicProvider(Provider):
    can_force_tool = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking_budget: int | None = None,
    ) -> None:
        if importlib.util.find_spec("anthropic") is None:
            raise ProviderError(MISSING_EXTRA)
        if not model:
            raise ProviderError("anthropic: no model name given (use e.g. --model anthropic:MODEL)")
        if thinking_budget is not None and not 1024 <= thinking_budget < max_tokens:
            raise ProviderError(
                f"anthropic: thinking budget {thinking_budget} must be at least 1024 and below "
                f"max_tokens ({max_tokens})"
            )
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        official = is_official_endpoint(base_url, OFFICIAL_HOST)
        if api_key is None:
            if official:
                raise ProviderError("anthropic: ANTHROPIC_API_KEY is not set")
            api_key = LOCAL_PLACEHOLDER_KEY
        self.model = model
        self.base_url = (base_url or OFFICIAL_BASE_URL).rstrip("/")
        # What people see: never the credentials a base URL may carry.
        self.display_url = redact_url(self.base_url)
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget
        self.label = f"anthropic:{model}" if official else f"anthropic:{model} @ {self.display_url}"
        self._api_key = api_key
        self._client: Any = None
        self._thinking: dict[str, list[JsonObject]] = {}

    def __repr__(self) -> str:
        return f"AnthropicProvider({self.label!r})"

    def _get_client(self) -> Any:
        if self._client is None:
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(
                api_key=self._api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        return self._client

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        import anthropic

        params = build_params(
            self.model,
            request,
            max_tokens=self.max_tokens,
            thinking_budget=self.thinking_budget,
            thinking=self._thinking,
        )
        accumulator = StreamAccumulator(on_text)
        try:
            stream = await self._get_client().messages.create(**params, stream=True)
            # The context manager closes the HTTP response even when the runtime cancels us.
            async with stream:
                async for event in stream:
                    accumulator.feed(event)
        except anthropic.AnthropicError as exc:
            raise translate_sdk_error(
                anthropic,
                exc,
                label=self.label,
                url=self.display_url,
                model=self.model,
                timeout=self.timeout,
                max_retries=self.max_retries,
                key_env="ANTHROPIC_API_KEY",
                request=request,
            ) from exc
        response = accumulator.response()
        blocks = accumulator.thinking_blocks()
        if blocks and response.tool_calls:
            self._thinking[response.tool_calls[0].id] = blocks
        return response

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
