"""A scripted Anthropic Messages API server on 127.0.0.1, for driving the real Claude Code.

Claude Code (``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT``) posts to ``/v1/messages`` with
``stream: true``. Every request that offers tools (the agent's own turns) takes the next
scripted turn: a list of blocks, ``{"text": "..."}`` or ``{"tool_use": NAME, "input": {...}}``;
once the script is used up, the answer is the text ``done.`` with ``end_turn``. Side requests
without tools (titles, quota probes) are answered with a short text and never use the script.

Every request body is kept in :attr:`ScriptedAnthropic.requests`, so a test can assert what
reached the model (a hook's deny reason arrives as a ``tool_result`` of the next request).

Run as a script to serve a JSON script file: ``python anthropic_server.py SCRIPT.json``
(prints the port, records requests to ``SCRIPT.json.requests.jsonl``).
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Block = dict[str, Any]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream_message(blocks: list[Block], model: str, number: int) -> bytes:
    """The SSE events of one assistant message made of ``blocks``."""
    message_id = f"msg_scripted_{number}"
    out = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
        )
    ]
    stop_reason = "end_turn"
    for index, block in enumerate(blocks):
        if "tool_use" in block:
            stop_reason = "tool_use"
            tool_id = block.get("id") or f"toolu_scripted_{number}_{index}"
            out.append(
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": block["tool_use"],
                            "input": {},
                        },
                    },
                )
            )
            out.append(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(block.get("input", {})),
                        },
                    },
                )
            )
        else:
            out.append(
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            out.append(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": str(block.get("text", ""))},
                    },
                )
            )
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def plain_message(text: str, model: str, number: int) -> dict[str, Any]:
    return {
        "id": f"msg_scripted_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


class ScriptedAnthropic:
    """The server; use as a context manager. ``turns`` is the agent's script."""

    def __init__(self, turns: list[list[Block]], record: Path | None = None) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self.record = record
        self._lock = threading.Lock()
        self._count = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ScriptedAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def agent_requests(self) -> list[dict[str, Any]]:
        """The requests that offered tools (the agent's turns), in order."""
        with self._lock:
            return [r for r in self.requests if r.get("tools")]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every ``tool_result`` block the agent sent back, in order (no duplicates)."""
        seen: dict[str, dict[str, Any]] = {}
        for request in self.agent_requests():
            for message in request.get("messages", []):
                content = message.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        seen.setdefault(str(block.get("tool_use_id")), block)
        return list(seen.values())

    def _answer(self, body: dict[str, Any]) -> tuple[list[Block], int]:
        with self._lock:
            self.requests.append(body)
            self._count += 1
            number = self._count
            if self.record is not None:
                with self.record.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(body) + "\n")
            if body.get("tools") and self.turns:
                return self.turns.pop(0), number
        if body.get("tools"):
            return [{"text": "done."}], number
        return [{"text": "ok"}], number

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_HEAD(self) -> None:
                self._send(200, b"", "text/plain")

            def do_GET(self) -> None:
                self._send(200, b"{}", "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?", 1)[0]
                if path.endswith("/count_tokens"):
                    self._send(200, b'{"input_tokens": 10}', "application/json")
                    return
                if not path.endswith("/v1/messages"):
                    self._send(404, b'{"type":"error"}', "application/json")
                    return
                blocks, number = server._answer(body)
                model = str(body.get("model", "claude-scripted"))
                if body.get("stream"):
                    self._send(200, stream_message(blocks, model, number), "text/event-stream")
                else:
                    text = "".join(str(b.get("text", "")) for b in blocks) or "ok"
                    data = json.dumps(plain_message(text, model, number)).encode()
                    self._send(200, data, "application/json")

        return Handler


def main() -> None:
    script = Path(sys.argv[1])
    turns = json.loads(script.read_text(encoding="utf-8"))
    with ScriptedAnthropic(turns, record=Path(str(script) + ".requests.jsonl")) as server:
        print(server.port, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
