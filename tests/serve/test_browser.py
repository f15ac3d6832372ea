"""The served dashboard in a real browser: Debian's chromium driven by playwright.

The page is opened with the printed token, the demo's pending actions arrive over the
websocket, ``y`` typed into the page applies the top one, and the applied resolution comes
back. What the terminal shows is read from the websocket frames the browser received (the
terminal draws on a canvas). With REDLINE_UPDATE_SCREENSHOTS=1 its screenshot refreshes screenshots/browser.png.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable
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
