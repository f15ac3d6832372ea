"""Scripted local model servers that the real Codex and Gemini CLI talk to in e2e tests.

Both listen on 127.0.0.1 (ephemeral port) in a background thread, record every request and
answer each model call with the next scripted turn from a FIFO queue. When the queue is
empty they answer with a short final text ("done."), so an agent that asks once more than
the script foresaw ends its turn instead of hanging.

- ``ResponsesServer`` speaks the OpenAI Responses API as Codex uses it (``POST
  .../responses`` with ``stream: true`` → server-sent events ``response.created``,
  ``response.output_item.done`` …, ``response.completed``). Point Codex at it with a custom
  model provider (``codex_config_toml(server)`` in ``tests/e2e/agents.py``).
- ``GeminiServer`` speaks the Gemini API as Gemini CLI uses it (``POST
  /v1beta/models/<model>:streamGenerateContent?alt=sse`` → ``data: <GenerateContentResponse>``
  events; ``:generateContent`` and ``:countTokens`` answered too). Point Gemini CLI at it with
  ``GOOGLE_GEMINI_BASE_URL`` and ``GEMINI_API_KEY=dummy``.

Scripting: ``enqueue_tool_call(name, arguments)`` (one tool call, then the turn ends and
the agent sends the tool's result in its next request), ``enqueue_text(text)``.
``server.model_requests`` are the parsed JSON bodies of the model calls, in order, and
``server.requests`` every request (method, path, body) for debugging.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FALLBACK_TEXT = "done."


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    body: Any


@dataclass(frozen=True)
class _Turn:
    kind: str  # "tool" | "text"
    name: str = ""
    arguments: Any = None
    text: str = ""


class _ScriptedServer:
    """The shared part: a thread, a FIFO of turns, the recorded requests."""

    def __init__(self) -> None:
        self._turns: deque[_Turn] = deque()
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self.model_requests: list[Any] = []
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> _ScriptedServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> _ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------------------------
    def enqueue_tool_call(self, name: str, arguments: Any) -> None:
        """One tool call (``arguments``: a dict, or for Codex's freeform ``apply_patch`` the
        patch text), then the model's turn ends."""
        with self._lock:
            self._turns.append(_Turn("tool", name=name, arguments=arguments))

    def enqueue_text(self, text: str) -> None:
        with self._lock:
            self._turns.append(_Turn("text", text=text))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._turns)

    def _next_turn(self, body: Any) -> _Turn:
        with self._lock:
            self.model_requests.append(body)
            return self._turns.popleft() if self._turns else _Turn("text", text=FALLBACK_TEXT)

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    # -- HTTP --------------------------------------------------------------------------------
    def _handle_get(self, path: str) -> tuple[int, dict[str, Any]]:
        return 404, {"error": {"message": f"no such path: {path}"}}

    def _handle_post(self, handler: BaseHTTPRequestHandler, path: str, body: Any) -> None:
        raise NotImplementedError

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with server._lock:
                    server.requests.append(Recorded("GET", self.path, None))
                status, payload = server._handle_get(self.path)
                send_json(self, status, payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with server._lock:
                    server.requests.append(Recorded("POST", self.path, body))
                server._handle_post(self, self.path, body)

        return Handler


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def send_sse(handler: BaseHTTPRequestHandler, events: list[tuple[str | None, Any]]) -> None:
    """Send ``events`` (``(event name or None, data)``) as one complete SSE body."""
    chunks = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        chunks.append(f"{head}data: {json.dumps(data)}\n\n")
    body = "".join(chunks).encode()
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


# -- OpenAI Responses API (Codex) --------------------------------------------------------------


class ResponsesServer(_ScriptedServer):
    """``base_url`` for Codex's provider config is ``server.base_url`` (ends in ``/v1``).

    A tool turn named ``apply_patch`` whose ``arguments`` is a string is sent as Codex's
    freeform ``custom_tool_call`` (the patch text as ``input``); any other tool turn as a
    ``function_call`` with JSON ``arguments``.
    """

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def _handle_get(self, path: str) -> tuple[int, dict[str, Any]]:
        if path.split("?")[0].endswith("/models"):
            return 200, {"object": "list", "data": [], "models": []}
        return super()._handle_get(path)

    def _handle_post(self, handler: BaseHTTPRequestHandler, path: str, body: Any) -> None:
        if not path.split("?")[0].endswith("/responses"):
            send_json(handler, 404, {"error": {"message": f"no such path: {path}"}})
            return
        turn = self._next_turn(body)
        response_id = self._next_id("resp")
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": {"id": response_id}})
        ]
        if turn.kind == "tool":
            call_id = self._next_id("call")
            if isinstance(turn.arguments, str):
                item: dict[str, Any] = {
                    "type": "custom_tool_call",
                    "name": turn.name,
                    "input": turn.arguments,
                    "call_id": call_id,
                }
            else:
                item = {
                    "type": "function_call",
                    "name": turn.name,
                    "arguments": json.dumps(turn.arguments),
                    "call_id": call_id,
                }
        else:
            item = {
                "type": "message",
                "role": "assistant",
                "id": self._next_id("msg"),
                "content": [{"type": "output_text", "text": turn.text}],
            }
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "item": item})
        )
        usage = {
            "input_tokens": 0,
            "input_tokens_details": None,
            "output_tokens": 0,
            "output_tokens_details": None,
            "total_tokens": 0,
        }
        events.append(
            (
                "response.completed",
                {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
            )
        )
        send_sse(handler, events)


def function_outputs(request: Any) -> list[str]:
    """The tool results (``function_call_output`` / ``custom_tool_call_output``) a Responses
    request sends back to the model, as text."""
    outputs: list[str] = []
    for item in request.get("input", []) if isinstance(request, dict) else []:
        if isinstance(item, dict) and item.get("type", "").endswith("call_output"):
            output = item.get("output")
            outputs.append(output if isinstance(output, str) else json.dumps(output))
    return outputs


# -- Gemini API (Gemini CLI) -------------------------------------------------------------------


class GeminiServer(_ScriptedServer):
    """``GOOGLE_GEMINI_BASE_URL`` for Gemini CLI is ``server.origin``."""

    def _handle_post(self, handler: BaseHTTPRequestHandler, path: str, body: Any) -> None:
        route = path.split("?")[0]
        if route.endswith(":countTokens"):
            send_json(handler, 200, {"totalTokens": 1})
            return
        if route.endswith(":streamGenerateContent"):
            turn = self._next_turn(body)
            send_sse(handler, [(None, self._response(turn))])
            return
        if route.endswith(":generateContent"):
            # Side calls (a JSON-schema helper such as the next-speaker check): not part of
            # the script; recorded in ``requests`` and answered with an empty JSON object.
            text = "{}" if _wants_json(body) else FALLBACK_TEXT
            send_json(handler, 200, self._response(_Turn("text", text=text)))
            return
        send_json(handler, 404, {"error": {"code": 404, "message": f"no such path: {path}"}})

    def _response(self, turn: _Turn) -> dict[str, Any]:
        if turn.kind == "tool":
            part: dict[str, Any] = {
                "functionCall": {
                    "name": turn.name,
                    "args": turn.arguments,
                    "id": self._next_id("call"),
                }
            }
        else:
            part = {"text": turn.text}
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 1,
                "candidatesTokenCount": 1,
                "totalTokenCount": 2,
            },
            "modelVersion": "gemini-2.5-flash",
        }


def _wants_json(body: Any) -> bool:
    config = body.get("generationConfig", {}) if isinstance(body, dict) else {}
    return config.get("responseMimeType") == "application/json"


def function_responses(request: Any) -> list[Any]:
    """The ``functionResponse.response`` objects a Gemini request sends back to the model."""
    found: list[Any] = []
    for content in request.get("contents", []) if isinstance(request, dict) else []:
        for part in content.get("parts", []) if isinstance(content, dict) else []:
            if isinstance(part, dict) and "functionResponse" in part:
                found.append(part["functionResponse"].get("response"))
    return found
