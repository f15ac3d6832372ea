"""OpenAI Chat Completions (and compatible local servers) behind the provider contract.

``openai`` is imported only when a request is made, so importing redline and building the
provider stay cheap (``--help`` and the scripted demo never pay for the SDK).
"""

from __future__ import annotations

import json
import os
import uuid
from typing import TYPE_CHECKING, cast
from urllib.parse import urlparse

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
    ToolChoiceRejected,
    ToolSpec,
    Usage,
)
from redline.jsontypes import JsonObject
from redline.redaction import redact_url, redact_urls

if TYPE_CHECKING:
    from types import ModuleType

    from openai import AsyncOpenAI, AsyncStream
    from openai.types.chat import ChatCompletionChunk

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
OFFICIAL_HOST = "api.openai.com"
# Local servers (Ollama, vLLM, llama.cpp, LM Studio) ignore the key, but the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "redline-local-no-key"


def is_official_endpoint(base_url: str | None, host: str = OFFICIAL_HOST) -> bool:
    if not base_url:
        return True
    return (urlparse(base_url).hostname or "").lower() == host


def parse_arguments(raw: str) -> JsonObject:
    """Tool-call argument text as a dict; ``{}`` when it is not a JSON object.

    The runtime compares ``raw_arguments`` against this to report malformed calls, so
    nothing is raised here.
    """
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def to_chat_messages(messages: tuple[Message, ...] | list[Message]) -> list[JsonObject]:
    out: list[JsonObject] = []
    for message in messages:
        if message.role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id or "",
                    "content": message.content,
                }
            )
        elif message.role == "assistant" and message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    # The API wants null rather than "" next to tool calls.
                    "content": message.content or None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(call.arguments, ensure_ascii=False),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def to_chat_tools(tools: tuple[ToolSpec, ...] | list[ToolSpec]) -> list[JsonObject]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def to_chat_tool_choice(choice: ToolChoice) -> str | JsonObject:
    if isinstance(choice, ForceTool):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


class ToolCallAssembler:
    """Joins streamed tool-call fragments, keyed by their ``index``.

    Some local servers omit ``index`` or the id, or repeat the name in every fragment;
    those cases fall back to "a new id starts a new call" and a generated id.
    """

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, str]] = {}
        self._last: int | None = None

    def add(
        self, index: int | None, call_id: str | None, name: str | None, args: str | None
    ) -> None:
        if index is None:
            fresh = self._last is None or (
                call_id is not None and call_id != self._calls[self._last]["id"]
            )
            index = (max(self._calls) + 1 if self._calls else 0) if fresh else self._last
        assert index is not None
        call = self._calls.setdefault(index, {"id": "", "name": "", "args": ""})
        self._last = index
        if call_id and not call["id"]:
            call["id"] = call_id
        if name and name != call["name"]:
            call["name"] += name
        if args:
            call["args"] += args

    def finish(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(
                # Ids pair calls with results across the whole conversation, so never reuse one.
                id=call["id"] or f"call_{uuid.uuid4().hex[:16]}",
                name=call["name"],
                arguments=parse_arguments(call["args"]),
                raw_arguments=call["args"],
            )
            for index, call in sorted(self._calls.items())
        )


def _mentions_tool_choice(text: str) -> bool:
    lowered = text.lower()
    return "tool_choice" in lowered or "tool choice" in lowered


class OpenAIProvider(Provider):
    can_force_tool = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        if not model:
            raise ProviderError("openai: no model name given (use e.g. --model openai:gpt-4o-mini)")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        official = is_official_endpoint(base_url)
        if api_key is None:
            if official:
                raise ProviderError(
                    "openai: OPENAI_API_KEY is not set; the official OpenAI endpoint needs an "
                    "API key (or pass --base-url for a local server such as Ollama)"
                )
            api_key = LOCAL_PLACEHOLDER_KEY
        self.model = model
        self.base_url = (base_url or OFFICIAL_BASE_URL).rstrip("/")
        # What people see: never the credentials a base URL may carry.
        self.display_url = redact_url(self.base_url)
        self.timeout = timeout
        self.max_retries = max_retries
        self.label = f"openai:{model}" if official else f"openai:{model} @ {self.display_url}"
        self._api_key = api_key
        self._client: AsyncOpenAI | None = None
        # Flipped off if a server refuses ``stream_options`` (older local servers).
        self._stream_usage = True

    def __repr__(self) -> str:
        # Never show the key, not even in debug output.
        return f"OpenAIProvider({self.label!r})"

    def _get_client(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        return self._client

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        import openai

        try:
            return await self._stream(request, on_text)
        except openai.BadRequestError as exc:
            if self._stream_usage and "stream_options" in _server_message(exc):
                self._stream_usage = False
                try:
                    return await self._stream(request, on_text)
                except openai.OpenAIError as retry_exc:
                    raise self._translate(retry_exc, request) from retry_exc
            raise self._translate(exc, request) from exc
        except openai.OpenAIError as exc:
            raise self._translate(exc, request) from exc

    async def _stream(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        from openai import omit

        offer_tools = bool(request.tools)
        created = await self._get_client().chat.completions.create(
            model=self.model,
            messages=to_chat_messages(request.messages),  # type: ignore[arg-type]
            tools=to_chat_tools(request.tools) if offer_tools else omit,  # type: ignore[arg-type]
            # "auto" is the server's default; leaving it out keeps forced turns easy to spot.
            tool_choice=to_chat_tool_choice(request.tool_choice)  # type: ignore[arg-type]
            if offer_tools and request.tool_choice != "auto"
            else omit,
            stream=True,
            stream_options={"include_usage": True} if self._stream_usage else omit,
        )
        stream = cast("AsyncStream[ChatCompletionChunk]", created)
        text_parts: list[str] = []
        calls = ToolCallAssembler()
        usage: Usage | None = None
        finish_reason = ""
        # The context manager closes the HTTP response even when the runtime cancels us.
        async with stream:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = Usage(
                        input_tokens=chunk.usage.prompt_tokens or 0,
                        output_tokens=chunk.usage.completion_tokens or 0,
                    )
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text_parts.append(delta.content)
                        on_text(delta.content)
                    for part in (delta.tool_calls if delta is not None else None) or ():
                        function = part.function
                        calls.add(
                            part.index,
                            part.id,
                            function.name if function else None,
                            function.arguments if function else None,
                        )
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        return ModelResponse(
            text="".join(text_parts),
            tool_calls=calls.finish(),
            usage=usage,
            stop_reason=finish_reason,
        )

    def _translate(self, exc: Exception, request: ModelRequest) -> ProviderError:
        import openai

        return translate_sdk_error(
            openai,
            exc,
            label=self.label,
            url=self.display_url,
            model=self.model,
            timeout=self.timeout,
            max_retries=self.max_retries,
            key_env="OPENAI_API_KEY",
            request=request,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()


def translate_sdk_error(
    sdk: ModuleType,
    exc: Exception,
    *,
    label: str,
    url: str,
    model: str,
    timeout: float,
    max_retries: int,
    key_env: str,
    request: ModelRequest,
) -> ProviderError:
    """One clear ProviderError for an exception of a Stainless-generated SDK.

    ``sdk`` is the imported ``openai`` or ``anthropic`` module; both define the same
    exception classes, so one mapping serves both providers. Any URL credentials in the
    message (the SDK's own text may quote the URL) are redacted.
    """
    error = _translate_sdk_error(
        sdk,
        exc,
        label=label,
        url=redact_url(url),
        model=model,
        timeout=timeout,
        max_retries=max_retries,
        key_env=key_env,
        request=request,
    )
    return type(error)(redact_urls(str(error)))


def _translate_sdk_error(
    sdk: ModuleType,
    exc: Exception,
    *,
    label: str,
    url: str,
    model: str,
    timeout: float,
    max_retries: int,
    key_env: str,
    request: ModelRequest,
) -> ProviderError:
    """One clear ProviderError for an exception of a Stainless-generated SDK.

    ``sdk`` is the imported ``openai`` or ``anthropic`` module; both define the same
    exception classes, so one mapping serves both providers.
    """
    where = f"{label}: "
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(f"{where}timed out after {timeout:g} s waiting for {url}")
    if isinstance(exc, sdk.APIConnectionError):
        cause = str(exc.__cause__ or "") or "connection failed"
        return ProviderError(
            f"{where}cannot reach the model server at {url} ({cause}); is it running?"
        )
    if isinstance(exc, sdk.APIStatusError):
        status = int(getattr(exc, "status_code", 0))
        detail = _server_message(exc)
        if isinstance(exc, sdk.AuthenticationError):
            return ProviderError(
                f"{where}the server at {url} rejected the API key (HTTP 401: {detail}); "
                f"check {key_env}"
            )
        if isinstance(exc, sdk.PermissionDeniedError):
            return ProviderError(f"{where}access denied by {url} (HTTP 403: {detail})")
        if isinstance(exc, sdk.NotFoundError):
            return ProviderError(f"{where}unknown model {model!r} at {url} (HTTP 404: {detail})")
        if (
            isinstance(exc, sdk.BadRequestError)
            and request.tools
            and request.tool_choice != "auto"
            and _mentions_tool_choice(detail)
        ):
            return ToolChoiceRejected(f"{where}the server refused the tool_choice: {detail}")
        if isinstance(exc, sdk.RateLimitError):
            return ProviderError(
                f"{where}rate limited by {url} after {max_retries} retries (HTTP 429: {detail})"
            )
        if status >= 500:
            return ProviderError(
                f"{where}server error from {url} after {max_retries} retries "
                f"(HTTP {status}: {detail})"
            )
        return ProviderError(f"{where}request rejected by {url} (HTTP {status}: {detail})")
    return ProviderError(f"{where}{exc}")


def _server_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message")
        if isinstance(message, str):
            return message
    elif isinstance(body, str):
        return body
    return str(getattr(exc, "message", "") or "")
