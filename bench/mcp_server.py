"""`redline mcp` over stdio: server start, propose latency, and review-to-answer latency.

Run from the repository root:  uv run python bench/mcp_server.py [--rounds N]
Starts one `redline mcp` subprocess on a temporary workspace, drives it with the mcp
package's client, and resolves each proposal from this process (as `redline pending`
would) while an `await_review` call waits. Prints median and worst figures in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path


async def main(rounds: int) -> None:
    from mcp import Client, StdioServerParameters

    from redline.review.queued import resolve_queued
    from redline.workspace.queue import WorkspaceQueue

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for index in range(rounds):
            (root / f"f{index}.txt").write_text(f"line {index}\n")
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "redline.cli", "mcp", "-C", str(root)]
        )
        started = time.perf_counter()
        async with Client(params) as client:
            await client.list_tools()
            ready = time.perf_counter() - started
            proposes: list[float] = []
            answers: list[float] = []
            queue = WorkspaceQueue(root)
            for index in range(rounds):
                t0 = time.perf_counter()
                result = await client.call_tool(
                    "propose_edit",
                    {"path": f"f{index}.txt", "old": f"line {index}", "new": "changed"},
                )
                proposes.append(time.perf_counter() - t0)
                text = "\n".join(getattr(item, "text", "") for item in result.content)
                action_id = text.split()[1]
                waiting = asyncio.create_task(
                    client.call_tool("await_review", {"id": action_id, "timeout_s": 50})
                )
                await asyncio.sleep(0.3)  # let the wait start watching
                t1 = time.perf_counter()
                await resolve_queued(queue, action_id, "apply", "bench")
                await waiting
                answers.append(time.perf_counter() - t1)
            queue.close()

    def ms(values: list[float]) -> str:
        return (
            f"median {statistics.median(values) * 1000:.1f} ms, worst {max(values) * 1000:.1f} ms"
        )

    print(f"server start to tools listed: {ready * 1000:.0f} ms")
    print(f"propose_edit round trip ({rounds} calls): {ms(proposes)}")
    print(f"apply elsewhere -> await_review answers ({rounds} waits): {ms(answers)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    asyncio.run(main(parser.parse_args().rounds))
