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
- its own runner, so ``--port 0`` picks a free port and the printed URL names it;
- ``DashboardProcess``: each tab's dashboard with its stderr logged line by line as it
  comes, and shown in the page when the dashboard cannot start or fails (textual-serve
  would leave the page blank and print the text only once the tab closes).

Imported only by ``commands/serve.py`` when the command runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.app_service import AppService
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
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
STDERR_LINES = 40  # the last lines of a failed dashboard's stderr shown in its page
STDERR_LINE_BYTES = 4096  # a longer line is cut there
_STOPPED_ON_REQUEST = frozenset({-signal.SIGINT, -signal.SIGTERM, -signal.SIGHUP})
ENDING_GRACE = 5.0  # seconds a dashboard whose screen ended gets to exit and close stderr

log = logging.getLogger("redline.serve")


class DashboardProcess(AppService):
    """textual-serve's process runner for one tab, with the dashboard's stderr taken over.

    textual-serve keeps the stderr to itself until the tab closes, so a dashboard that
    cannot start (a bad option, a broken config) leaves a blank page. Here every stderr
    line goes to the server's log as it comes, and when the dashboard ends without having
    shown a screen, or with a failure status, the page shows its last lines.
    """

    def __init__(self, command: str, **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self.started = False  # the dashboard drew something
        self.ended = False  # its screen stream ended: keys and resizes go nowhere
        self._relay: asyncio.Task[None] | None = None

    async def _open_app_process(
        self, width: int = 80, height: int = 24
    ) -> asyncio.subprocess.Process:
        process = await super()._open_app_process(width, height)
        stderr, process.stderr = process.stderr, asyncio.StreamReader()
        process.stderr.feed_eof()  # textual-serve reads nothing; _relay_stderr has it all
        if stderr is not None:
            self._relay = asyncio.create_task(self._relay_stderr(stderr))
        return process

    async def _relay_stderr(self, stream: asyncio.StreamReader) -> None:
        pending = b""
        while chunk := await stream.read(STDERR_LINE_BYTES):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if len(pending) >= STDERR_LINE_BYTES:
                lines.append(pending)
                pending = b""
            for line in lines:
                self._note(line)
        if pending:
            self._note(pending)

    def _note(self, line: bytes) -> None:
        text = _CONTROL.sub("?", line.decode("utf-8", "replace").rstrip("\r"))
        text = text[:STDERR_LINE_BYTES]
        if text.strip():
            self.stderr_tail.append(text)
            log.warning("dashboard: %s", text)

    async def on_data(self, payload: bytes) -> None:
        self.started = True
        await super().on_data(payload)

    async def send_bytes(self, data: bytes) -> bool:
        return False if self.ended else await super().send_bytes(data)

    async def send_meta(self, data: dict[str, str | int | bool | None]) -> bool:
        return False if self.ended else await super().send_meta(data)

    async def run(self) -> None:
        """textual-serve's loop, then: if the dashboard failed, say so in the page."""
        try:
            await super().run()
        finally:
            self.ended = True
        process = self._process
        code: int | None = None
        if process is not None:
            with contextlib.suppress(TimeoutError):
                code = await asyncio.wait_for(process.wait(), ENDING_GRACE)
        if self._relay is not None:
            await asyncio.wait({self._relay}, timeout=ENDING_GRACE)
            self._relay.cancel()
        if self.started and (code in (0, None) or code in _STOPPED_ON_REQUEST):
            return  # it quit, or was stopped (Ctrl+C in the server's terminal reaches it too)
        what = "could not start" if not self.started else "stopped"
        status = f"exit status {code}" if code is not None else "still running"
        log.warning("a tab's dashboard %s (%s)", what, status)
        lines = list(self.stderr_tail) or ["(it printed no reason)"]
        text = "\r\n".join(
            [
                f"redline serve: this tab's dashboard {what} ({status}):",
                "",
                *lines,
                "",
                "The server's terminal shows the same. Fix the cause, then reload this page.",
            ]
        )
        # \x1bc resets the terminal: off the dashboard's screen, cursor home.
        with contextlib.suppress(Exception):
            await self.remote_write_bytes(b"\x1bc" + text.encode("utf-8") + b"\r\n")


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

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One tab: a websocket relaying the screen and keys of its own ``DashboardProcess``
        (textual-serve's handler, with redline's process runner)."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = _size(request.query.get("width"), 80)
        height = _size(request.query.get("height"), 24)
        await websocket.prepare(request)
        service = DashboardProcess(
            self.command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        try:
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # a broken message from the page: log it, end the tab
            log.warning("a tab's websocket failed: %s", error)
        finally:
            await service.stop()
        return websocket

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


def _size(text: str | None, default: int) -> int:
    """A terminal width or height from the websocket URL (1 to 1000), else ``default``."""
    if text is None or not text.isascii() or not text.isdigit():
        return default
    return min(max(int(text), 1), 1000)


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
