"""Each websocket runs its own dashboard; stopping the server quits them all promptly."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path

import aiohttp
from tests.serve.helpers import serve

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
