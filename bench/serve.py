"""How fast `redline serve` is ready and a browser tab gets its first screen.

Starts `redline serve --port 0` on an empty workspace several times and prints, for each
run, the time until the URL is printed and the time from opening the websocket (as the
page does) to the first screen of the tab's own dashboard process.
Usage: ``uv run python bench/serve.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time

import aiohttp


async def first_screen(port: int, token: str) -> float:
    origin = f"http://127.0.0.1:{port}"
    headers = {"Origin": origin}
    async with aiohttp.ClientSession() as client:
        started = time.perf_counter()
        socket = await client.ws_connect(
            f"{origin}/{token}/ws?width=120&height=40", headers=headers
        )
        received = 0
        while received < 2000:  # the first full screen is several kilobytes
            message = await asyncio.wait_for(socket.receive(), 120)
            if message.type == aiohttp.WSMsgType.BINARY:
                received += len(message.data)
        elapsed = time.perf_counter() - started
        await socket.close()
        return elapsed


def one_run(workspace: str) -> tuple[float, float]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "redline", "serve", "-C", workspace, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = ""
        for line in process.stdout:
            if found := re.search(r"http://127\.0\.0\.1:(\d+)/([A-Za-z0-9_-]{40,})/", line):
                url = found.group(0)
                break
        ready = time.perf_counter() - started
        assert url, "no URL printed"
        port, token = int(found.group(1)), found.group(2)
        return ready, asyncio.run(first_screen(port, token))
    finally:
        process.terminate()
        process.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workspace:
        results = [one_run(workspace) for _ in range(args.runs)]
    ready = [r[0] * 1000 for r in results]
    screen = [r[1] * 1000 for r in results]
    print(f"URL printed:   median {statistics.median(ready):.0f} ms, worst {max(ready):.0f} ms")
    print(f"first screen:  median {statistics.median(screen):.0f} ms, worst {max(screen):.0f} ms")


if __name__ == "__main__":
    main()
