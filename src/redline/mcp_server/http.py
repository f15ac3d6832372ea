"""Streamable HTTP for ``redline mcp --http PORT``: 127.0.0.1 only, token, Host and Origin.

Any web page in the person's browser can send requests to 127.0.0.1, so every request must
carry the random token printed at start (``?token=`` in the URL or ``Authorization: Bearer``),
name this server in ``Host`` (DNS rebinding), and, when it has an ``Origin``, come from this
server's own origin. Anything else gets 403 and never reaches MCP.
"""

from __future__ import annotations

import hmac
import secrets
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HOST = "127.0.0.1"
PATH = "/mcp"


def new_token() -> str:
    return secrets.token_urlsafe(32)


class Guard:
    """ASGI middleware: 403 unless token, Host and Origin are right."""

    def __init__(self, app: ASGIApp, token: str, port: int) -> None:
        self.app = app
        self.token = token.encode("utf-8")
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://127.0.0.1:{port}", f"http://localhost:{port}"}

    def refusal(self, scope: Scope) -> str | None:
        headers: dict[str, str] = {}
        for key, value in scope.get("headers", []):
            name = key.decode("latin-1").lower()
            headers[name] = value.decode("latin-1") if name not in headers else "\x00duplicate"
        if headers.get("host", "").lower() not in self.hosts:
            return "wrong Host header"
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return "foreign Origin"
        given = ""
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            given = auth[7:].strip()
        else:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            values = query.get("token", [])
            given = values[0] if len(values) == 1 else ""
        if not given or not hmac.compare_digest(given.encode("utf-8"), self.token):
            return "missing or wrong token"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            why = self.refusal(scope)
            if why is not None:
                body = f"Forbidden: {why}.\n".encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 403,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0 picks a free port); OSError if taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    return sock


async def serve_http(
    root: Path, sock: socket.socket, token: str, announce: Callable[[str], None]
) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from redline.mcp_server.proposals import Proposals
    from redline.mcp_server.server import build_server, quiet_logging

    port = int(sock.getsockname()[1])
    proposals = Proposals(root)
    try:
        server = build_server(root, proposals)
        quiet_logging()
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
            allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"],
        )
        app = server.streamable_http_app(streamable_http_path=PATH, transport_security=security)
        guarded = Guard(app, token, port)
        config = uvicorn.Config(guarded, log_level="warning", access_log=False, lifespan="on")
        runner = uvicorn.Server(config)
        announce(f"http://{HOST}:{port}{PATH}?token={token}")
        await runner.serve(sockets=[sock])
    finally:
        proposals.close()
