"""A scripted, OpenAI-compatible chat-completions server for tests.

``FakeOpenAI`` listens on 127.0.0.1 (ephemeral port) in a background thread, records every
request and answers each ``POST .../chat/completions`` with the next scripted response from
a FIFO queue. Point the real ``openai`` client at ``fake.base_url`` (it ends in ``/v1``).

Scripting (each call queues exactly one HTTP response):

- ``enqueue_text(text, chunks=None)``: a streamed reply whose text arrives as several
  ``chat.completion.chunk`` deltas (word by word unless ``chunks`` gives the split).
- ``enqueue_tool_calls([(id, name, args_dict), ...], text="")``: optional text deltas, then
  the tool calls as streamed fragments (id and name first, the JSON arguments split over
  several chunks), ``finish_reason="tool_calls"``.
- ``enqueue_chunks([chunk_dict, ...])``: raw chunk payloads (``id``/``object``/``model``
  are filled in), e.g. for malformed tool arguments.
- ``enqueue_error(status, message, *, type=..., code=None)``: an HTTP error with the usual
  ``{"error": {"message", "type", "param", "code"}}`` body and ``retry-after-ms: 1`` so the
  SDK's own retry (for 408/409/429/5xx) happens without its default backoff.
- ``enqueue_stall(text="")``: streams ``text``, then keeps the stream open and silent (so
  client read timeouts fire) until the client disconnects (recorded in ``fake.disconnects`` and signalled through
  ``fake.client_gone``) or the server stops; for abort/cancellation tests.

Streamed replies end with a usage chunk (``choices: []``) when the request asked for
``stream_options.include_usage``, then ``data: [DONE]``. A non-streaming request gets the same
script folded into one ``chat.completion`` object. When the queue is empty the server
answers 500 with ``x-should-retry: false`` and a message saying so, so a test that scripted
too few turns fails loudly instead of hanging.

Recorded: ``fake.requests`` (parsed JSON bodies, in order), ``fake.request_headers``
(lower-cased header dicts), ``fake.paths``. ``fake.usage`` sets the usage numbers reported.
"""

from __future__ import annotations

import json
import select
import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_NAME = "fake-model"


@dataclass
class _Scripted:
    kind: str  # "chunks" | "error" | "stall"
    chunks: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error_body: dict[str, Any] = field(default_factory=dict)


def _split(text: str, parts: int) -> list[str]:
    if not text:
        return [""]
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _words(text: str) -> list[str]:
    pieces: list[str] = []
    for i, word in enumerate(text.split(" ")):
        pieces.append(word if i == 0 else " " + word)
    return [p for p in pieces if p]


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


class FakeOpenAI:
    """See the module docstring; use as a context manager or call ``start``/``stop``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        self.disconnects = 0
        self.client_gone = threading.Event()
        self._queue: deque[_Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting -------------------------------------------------------------------------

    def enqueue_text(self, text: str, chunks: list[str] | None = None) -> None:
        pieces = chunks if chunks is not None else _words(text)
        body = [_delta({"role": "assistant", "content": ""})]
        body += [_delta({"content": piece}) for piece in pieces]
        body.append(_delta({}, "stop"))
        self._push(_Scripted("chunks", body))

    def enqueue_tool_calls(
        self, calls: list[tuple[str, str, dict[str, Any]]], text: str = ""
    ) -> None:
        body = [_delta({"role": "assistant", "content": None})]
        body += [_delta({"content": piece}) for piece in _words(text)]
        for index, (call_id, name, args) in enumerate(calls):
            head = {"index": index, "id": call_id, "type": "function"}
            body.append(
                _delta({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
            )
            for fragment in _split(json.dumps(args), 3):
                body.append(
                    _delta({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
                )
        body.append(_delta({}, "tool_calls"))
        self._push(_Scripted("chunks", body))

    def enqueue_chunks(self, chunks: list[dict[str, Any]]) -> None:
        self._push(_Scripted("chunks", list(chunks)))

    def enqueue_error(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
    ) -> None:
        body = {"error": {"message": message, "type": type, "param": param, "code": code}}
        self._push(_Scripted("error", status=status, error_body=body))

    def enqueue_stall(self, text: str = "") -> None:
        body = [_delta({"role": "assistant", "content": ""})]
        body += [_delta({"content": piece}) for piece in _words(text)]
        self._push(_Scripted("stall", body))

    @property
    def pending(self) -> int:
        """Scripted responses not yet consumed."""
        with self._lock:
            return len(self._queue)

    def _push(self, item: _Scripted) -> None:
        with self._lock:
            self._queue.append(item)

    def _next(self) -> _Scripted | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    # -- HTTP ------------------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "x"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with fake._lock:
                    fake.requests.append(body)
                    fake.request_headers.append({k.lower(): v for k, v in self.headers.items()})
                    fake.paths.append(self.path)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "x"}})
                    return
                item = fake._next()
                if item is None:
                    self._json(
                        500,
                        {"error": {"message": "fake_openai: no scripted response left"}},
                        {"x-should-retry": "false"},
                    )
                elif item.kind == "error":
                    self._json(item.status, item.error_body, {"retry-after-ms": "1"})
                elif body.get("stream"):
                    self._stream(item, body)
                else:
                    self._json(200, _fold(item.chunks, fake.usage))

            def _json(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _event(self, payload: dict[str, Any] | str) -> None:
                data = payload if isinstance(payload, str) else json.dumps(payload)
                self.wfile.write(f"data: {data}\n\n".encode())
                self.wfile.flush()

            def _stream(self, item: _Scripted, request: dict[str, Any]) -> None:
                self.close_connection = True
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for chunk in item.chunks:
                        self._event(_chunk(chunk))
                    if item.kind == "stall":
                        self._hold_open()
                        return
                    if (request.get("stream_options") or {}).get("include_usage"):
                        self._event(_chunk({"choices": [], "usage": fake.usage}))
                    self._event("[DONE]")
                except (BrokenPipeError, ConnectionResetError):
                    fake._record_disconnect()

            def _hold_open(self) -> None:
                # Silent, so client read timeouts fire; a readable socket with nothing to
                # read means the client closed its end.
                sock = self.connection
                while not fake._stopping.is_set():
                    readable, _, _ = select.select([sock], [], [], 0.02)
                    if not readable:
                        continue
                    try:
                        data = sock.recv(1, socket.MSG_PEEK)
                    except OSError:
                        data = b""
                    if not data:
                        fake._record_disconnect()
                        return

        return Handler

    def _record_disconnect(self) -> None:
        with self._lock:
            self.disconnects += 1
        self.client_gone.set()


def _chunk(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL_NAME,
        **payload,
    }


def _fold(chunks: list[dict[str, Any]], usage: dict[str, int]) -> dict[str, Any]:
    """The non-streaming form of a scripted stream."""
    text = ""
    finish = "stop"
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk.get("choices", []):
            delta = choice.get("delta", {})
            text += delta.get("content") or ""
            finish = choice.get("finish_reason") or finish
            for part in delta.get("tool_calls") or []:
                call = calls.setdefault(
                    part.get("index", 0),
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = part.get("id") or call["id"]
                function = part.get("function") or {}
                call["function"]["name"] += function.get("name") or ""
                call["function"]["arguments"] += function.get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_NAME,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }
