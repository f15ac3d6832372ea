"""Each websocket runs its own dashboard; stopping the server quits them all promptly; a
dashboard that cannot start says why in its page and in the server's log."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import time
from pathlib import Path

import aiohttp
from tests.serve.helpers import serve

from redline.resources import demo_plan_path

GUARD = 120.0  # seconds: hang guard


async def test_stopping_the_server_quits_every_dashboard(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    # The demo dashboards make their copies under TMPDIR and remove them when they quit.
    with serve(["--demo", "--no-wait"], env={"TMPDIR": str(temp)}) as served:
        origin = f"http://127.0.0.1:{served.port}"
        headers = {"Origin": origin}
        async with aiohttp.ClientSession() as client:
            sockets = [
                await client.ws_connect(
                    f"{origin}{served.prefix}ws?width=100&height=30", headers=headers
                )
                for _ in range(2)
            ]
            deadline = time.monotonic() + GUARD
            while len(list(temp.glob("redline-demo-*"))) < 2:
                if time.monotonic() > deadline:  # a hang guard, not a speed check
                    raise AssertionError("the dashboards did not start")
                for socket in sockets:  # read the screens, as a browser would
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(socket.receive(), 0.1)
            served.process.send_signal(signal.SIGTERM)
            for socket in sockets:
                while not socket.closed:
                    message = await asyncio.wait_for(socket.receive(), GUARD)
                    if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                        break
            assert served.process.wait(timeout=GUARD) == 0
        assert list(temp.glob("redline-demo-*")) == []


async def test_a_dashboard_that_cannot_start_says_why_in_the_page_and_the_log(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    plan = tmp_path / "plan.json"
    shutil.copy(demo_plan_path(), plan)
    env = {"REDLINE_CONFIG_DIR": str(tmp_path / "config")}
    with serve(["-C", str(workspace), "--model", f"scripted:{plan}"], env=env) as served:
        plan.unlink()  # checked when the server started, gone when the tab opens
        origin = f"http://127.0.0.1:{served.port}"
        received = b""
        async with aiohttp.ClientSession() as client:
            socket = await client.ws_connect(
                f"{origin}{served.prefix}ws?width=100&height=30", headers={"Origin": origin}
            )
            while b"reload this page" not in received:
                message = await asyncio.wait_for(socket.receive(), GUARD)
                assert message.type == aiohttp.WSMsgType.BINARY, message
                received += message.data
            screen = received.decode("utf-8", "replace")
            assert "this tab's dashboard could not start (exit status 2):" in screen
            assert f"redline: plan file {plan} does not exist" in screen
            assert not socket.closed  # the page keeps showing the reason
            await socket.close()
        log = await asyncio.to_thread(served.wait_printed, "could not start (exit status 2)")
        assert f"redline serve: dashboard: redline: plan file {plan} does not exist" in log
        assert "Traceback" not in log
