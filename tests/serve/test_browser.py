"""The served dashboard in a real browser: Debian's chromium driven by playwright.

The page is opened with the printed token, the demo's pending actions arrive over the
websocket, ``y`` typed into the page applies the top one, and the applied resolution comes
back. A page on another local port, opened in the same browser afterwards, never receives
the credential. What the terminal shows is read from the websocket frames the browser received (the
terminal draws on a canvas). With REDLINE_UPDATE_SCREENSHOTS=1 its screenshot refreshes screenshots/browser.png.
"""

from __future__ import annotations

import http.server
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.serve.helpers import serve

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The README's picture is refreshed only on request (scripts/screenshots.py sets this), so a
# plain test run never leaves a tracked file modified.
SCREENSHOT = (
    Path(__file__).resolve().parents[2] / "screenshots" / "browser.png"
    if os.environ.get("REDLINE_UPDATE_SCREENSHOTS")
    else Path(tempfile.gettempdir()) / "redline-browser-test.png"
)
GUARD = 180.0  # seconds: a hang guard for each wait, far above the usual few seconds
_ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="Debian's chromium is not installed (apt-get install chromium; .ci/run does this)",
    ),
]


def wait_for(condition: Callable[[], bool], what: str, page: Any) -> None:
    deadline = time.monotonic() + GUARD
    while not condition():
        if time.monotonic() > deadline:  # a hang guard, not a speed check
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(100)  # a poll that lets playwright deliver the frames


def test_review_the_demo_in_a_browser() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    received: list[bytes] = []

    def screen_text() -> str:
        return _ESCAPES.sub(b"", b"".join(received)).decode("utf-8", "replace")

    def on_websocket(websocket: Any) -> None:
        def on_frame(payload: bytes | str) -> None:
            received.append(payload if isinstance(payload, bytes) else payload.encode())

        websocket.on("framereceived", on_frame)

    with serve(["--demo", "--no-wait"]) as served, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            outside: list[str] = []
            page.on(
                "request",
                lambda request: (
                    None
                    if request.url.startswith(f"http://127.0.0.1:{served.port}/")
                    or request.url.startswith(f"ws://127.0.0.1:{served.port}/")
                    else outside.append(request.url)
                ),
            )
            page.on("websocket", on_websocket)
            page.goto(served.url, timeout=GUARD * 1000)

            wait_for(lambda: "5 pending" in screen_text(), "the demo's five pending actions", page)
            copy = re.search(r"redline-demo-[A-Za-z0-9_]+", screen_text())
            page.locator("#terminal").click()
            page.keyboard.press("y")
            wait_for(lambda: "APPLIED" in screen_text(), "the applied resolution", page)
            wait_for(lambda: "4 pending" in screen_text(), "the stack to shrink", page)
            # Let the terminal paint the last frames before the picture.
            page.evaluate(
                "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
            )
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT))
            assert outside == []  # the page fetched nothing from anywhere else
        finally:
            browser.close()
        # Closing the tab quits its dashboard, and the demo removes its temporary copy.
        assert copy is not None, "the status line names the demo's copy"
        folder = Path(tempfile.gettempdir()) / copy.group(0)
        assert folder.is_dir() or not folder.exists()
        deadline = time.monotonic() + GUARD
        while folder.exists():
            if time.monotonic() > deadline:  # a hang guard, not a speed check
                raise AssertionError(f"{folder} was not removed")
            time.sleep(0.1)


@contextmanager
def other_local_server() -> Iterator[tuple[int, list[str]]]:
    """Another program on 127.0.0.1 the user visits: it records every request it gets
    (request line and headers) and its page asks it for more (fetch, image, form)."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(f"{self.requestline}\n{self.headers}")
            body = (
                b"<!doctype html><title>other</title>"
                b"<img src='/pixel.png'><script>fetch('/probe', {credentials: 'include'})"
                b".then(() => { document.title = 'probed'; });</script>"
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_another_local_port_never_receives_the_credential() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    frames: list[bytes] = []

    def on_websocket(websocket: Any) -> None:
        websocket.on(
            "framereceived",
            lambda payload: frames.append(payload if isinstance(payload, bytes) else b""),
        )

    def screen_text() -> str:
        return _ESCAPES.sub(b"", b"".join(frames)).decode("utf-8", "replace")

    with (
        other_local_server() as (other_port, seen),
        serve(["--demo", "--no-wait"]) as served,
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            page = context.new_page()
            page.on("websocket", on_websocket)
            page.goto(served.url, timeout=GUARD * 1000)
            # The dashboard works through the printed URL, its websocket included.
            wait_for(lambda: "5 pending" in screen_text(), "the dashboard over the websocket", page)
            page.locator("#terminal").click()
            page.keyboard.press("y")
            wait_for(lambda: "4 pending" in screen_text(), "the applied action", page)
            assert context.cookies() == []  # the browser holds no credential to hand out

            # The user then visits another program's page on this machine, in a new tab
            # and by typing its address in the dashboard's own tab.
            other = f"http://127.0.0.1:{other_port}/"
            for tab in (context.new_page(), page):
                tab.goto(other, timeout=GUARD * 1000)
                wait_for(lambda tab=tab: tab.title() == "probed", "the other page's fetch", tab)
        finally:
            browser.close()
    assert len(seen) >= 4  # two pages and their fetches reached the other server
    received = "\n".join(seen)
    assert served.token not in received
    assert "redline-serve" not in received and "Cookie" not in received
