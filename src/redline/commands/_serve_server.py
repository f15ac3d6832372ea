"""The web server behind ``redline serve``: textual-serve behind redline's guard.

textual-serve's ``Server`` starts one dashboard process per browser websocket (the command
line it is given, run through the shell) and relays the terminal stream. Here it gets:

- every route under the secret prefix ``/TOKEN/`` (the page, its static files, the
  websocket), and a middleware that runs ``ServeGuard`` on every request and answers a
  refusal with 403 and the reason. No cookie is set: a cookie would be sent to every port
  of the host. textual-serve's download route is left out: its page script builds download
  URLs at the origin's root, outside the prefix, and the dashboard delivers no files;
- headers on every response: a Content-Security-Policy that lets the page load and connect
  only to this server and forbids framing it, no Referer (the URL holds the token), no caching;
- an index page whose websocket URL uses the Host the browser asked for (so ``localhost``
  and ``127.0.0.1`` both work), without the remote web font, with an empty icon (so the
  browser does not ask for ``/favicon.ico``, outside the prefix);
- its own runner, so ``--port 0`` picks a free port and the printed URL names it.

Imported only by ``commands/serve.py`` when the command runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.server import Server

from redline.serve_guard import ServeGuard, loggable_path

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_REMOTE_STYLESHEET = re.compile(r"<link\b[^>]*https?://[^>]*>\s*", re.IGNORECASE)
_EMPTY_ICON = '<link rel="icon" href="data:," />'

log = logging.getLogger("redline.serve")


class GuardedServer(Server):
    """textual-serve's server with every request checked by ``guard``."""

    def __init__(self, command: str, *, host: str, port: int, title: str) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.guard: ServeGuard | None = None  # set once the port is bound
        self._connections: set[asyncio.Task[Any]] = set()
        self._static_files: dict[str, Path] = {}

    async def _make_app(self) -> web.Application:
        """Every route under ``/{key}``, the secret prefix the middleware checks."""
        app = web.Application(middlewares=[self._guard_middleware])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        root = Path(self.statics_path)
        self._static_files = {
            path.relative_to(root).as_posix(): path for path in root.rglob("*") if path.is_file()
        }
        app.add_routes(
            [
                web.get("/{key}", self.handle_index),
                web.get("/{key}/", self.handle_index, name="index"),
                web.get("/{key}/ws", self.handle_websocket, name="websocket"),
                web.get("/{key}/static/{name:.+}", self.handle_static, name="static"),
            ]
        )
        app.on_response_prepare.append(self._add_headers)
        app.on_shutdown.append(self._quit_dashboards)
        return app

    async def _quit_dashboards(self, app: web.Application) -> None:
        """On stop, end every websocket now: textual-serve then tells its dashboard to quit
        (instead of aiohttp waiting out its shutdown timeout first)."""
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.wait(list(self._connections), timeout=30.0)

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints a banner naming the command here; serve() prints the URL."""

    @web.middleware
    async def _guard_middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        guard = self.guard
        if guard is None:
            return web.Response(status=403, text="redline serve: not ready yet\n")
        # The token is the route's {key} when a route matched (what the handlers will see),
        # else the path's first segment.
        key = request.match_info.get("key")
        verdict = guard.check(
            host=request.headers.get("Host"),
            origin=request.headers.get("Origin"),
            path=request.path if key is None else f"/{key}",
        )
        if not verdict.ok:
            log.warning(
                "refused %s %s: %s", request.method, loggable_path(request.path), verdict.reason
            )
            return web.Response(status=403, text=f"redline serve: {verdict.reason}\n")
        task = asyncio.current_task()
        route = request.match_info.route
        is_websocket = route is not None and route.name == "websocket"
        if is_websocket and task is not None:
            self._connections.add(task)
        try:
            return await handler(request)
        finally:
            if task is not None:
                self._connections.discard(task)

    @staticmethod
    async def _add_headers(request: web.Request, response: web.StreamResponse) -> None:
        if isinstance(response, web.WebSocketResponse):
            return
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)

    async def handle_index(self, request: web.Request) -> web.Response:
        """The page, pointing its websocket at the host the browser used (already checked)."""
        assert self.guard is not None  # the middleware let the request through
        prefix = self.guard.prefix
        font_size = request.query.get("fontsize", "16")
        context: dict[str, Any] = {
            "font_size": int(font_size) if font_size.isdigit() else 16,
            "app_websocket_url": f"ws://{request.host}{prefix}ws",
            "config": {"static": {"url": f"{prefix}static/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        if response.text is not None:
            text = _REMOTE_STYLESHEET.sub("", response.text)
            response.text = text.replace("<head>", f"<head>\n    {_EMPTY_ICON}", 1)
        return response

    async def handle_static(self, request: web.Request) -> web.StreamResponse:
        """One of textual-serve's own static files (a fixed list: no path is ever joined)."""
        path = self._static_files.get(request.match_info["name"])
        if path is None:
            raise web.HTTPNotFound(text="redline serve: no such file\n")
        return web.FileResponse(path)


async def serve(
    server: GuardedServer,
    *,
    token: str,
    on_ready: Callable[[ServeGuard], None],
    stop: asyncio.Event | None = None,
    allow_hosts: tuple[str, ...] = (),
) -> None:
    """Bind, call ``on_ready`` with the guard (the real port known), serve until ``stop``
    is set or SIGINT/SIGTERM arrives, then close every dashboard and the listener.
    ``allow_hosts`` are the ``--allow-host`` values (already checked)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop.set)
    app = await server._make_app()
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=10.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, server.host, server.port)
        await site.start()
        port = _bound_port(runner, server.port)
        server.guard = ServeGuard(server.host, port, token, extra_hosts=allow_hosts)
        server.port = port
        on_ready(server.guard)
        await stop.wait()
    finally:
        await runner.cleanup()


def _bound_port(runner: web.AppRunner, asked: int) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return asked


def configure_logging() -> None:
    """Warnings (refused requests, dashboards that failed to start) to stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("redline serve: %(message)s"))
    for name in ("redline.serve", "textual-serve"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False
