"""Dashboard speed, headless: diff first paint, stack scrolling, activity throughput.

Run with ``uv run python bench/dashboard.py``. Prints figures; the targets are in the
dashboard issue (first paint < 100 ms, scroll step < 50 ms, >= 5,000 events/s).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events

from redline.review.events import Event, EventStream, MessageDelta, RunStatus, ToolStart
from redline.review.resolve import ResolveOutcome
from redline.review.result import ToolResult
from redline.review.session import Capabilities, Decision
from redline.review.store import PendingAction, PendingActionStore
from redline.tui.app import RedlineApp
from redline.workspace.preview import FileModify, Preview, sha256_bytes

SIZE = (160, 50)
LINES = 5_000
STACK = 1_000
EVENTS = 50_000


class BenchSession:
    """Just enough session for the app: a store, an event stream, no agent."""

    model_label = "bench"
    scripted = True
    resolver = "human"
    untrusted_plugin_dir = None
    cwd = Path("/bench")

    capabilities = Capabilities()
    rules = None

    def __init__(self) -> None:
        self.store = PendingActionStore(clock=lambda: 0.0)
        self.events = EventStream("bench")
        self.plugin_errors: list[Any] = []
        self.queue: Any = None

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome:
        if self.queue is not None and self.store.get(action_id) is None:
            from redline.review.decide import decide_queued

            return asyncio.run(decide_queued(self.queue, action_id, decision.verb, decision.reason))
        return ResolveOutcome("invalid", "bench")

    def can_undo(self) -> bool:
        return False

    def apply_rules(self) -> list[str]:
        return []

    def waiting_only_on_review(self) -> bool | None:
        return None

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return self.events.subscribe(listener)

    def start_prompt(self, text: str) -> concurrent.futures.Future[RunStatus]:
        return self.start_resume()

    def start_resume(self) -> concurrent.futures.Future[RunStatus]:
        done: concurrent.futures.Future[RunStatus] = concurrent.futures.Future()
        done.set_result("done")
        return done

    def resolve(
        self, action: str, reason: str, action_id: str | None = None, by: str = "human"
    ) -> ResolveOutcome:
        return ResolveOutcome("invalid", "bench")

    def undo(self) -> ToolResult:
        return ToolResult.error("bench")

    def abort(self) -> None:
        pass

    def repreview(self, action_id: str) -> ToolResult:
        return ToolResult.error("bench")

    def check_staleness(self, paths: set[str] | None = None) -> None:
        pass

    def trust_workspace(self) -> None:
        pass


class NoWatcher:
    def __init__(self, *_args: object) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def action(label: str, old: str, new: str, path: str = "src/module.py") -> PendingAction:
    preview = Preview([FileModify(path, sha256_bytes(old.encode()), old, new)])
    return PendingAction(label, lambda reason: "ok", source_tool_name="ast_edit", preview=preview)


def big_action() -> PendingAction:
    # A rename used on every other line: 2,500 hunks' worth of changes in a 5,000-line file.
    old = "".join(f"def handler_{i}(request):  # line {i}\n" for i in range(LINES))
    new = "".join(
        f"def handler_{i}(req):  # line {i}\n"
        if i % 2
        else f"def handler_{i}(request):  # line {i}\n"
        for i in range(LINES)
    )
    return action("Rename request -> req", old, new, "src/big.py")


async def first_paint() -> list[float]:
    session = BenchSession()
    session.store.push(big_action())
    session.store.push(action("small edit", "a = 1\n", "a = 2\n"))
    app = RedlineApp(session, watcher_factory=NoWatcher)  # type: ignore[arg-type]
    timings = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        diff = app.preview.diff_view
        for _ in range(5):
            for key in ("j", "k"):
                start = time.perf_counter()
                await pilot.press(key)
                while diff.first_paint_at is None or diff.shown_at is None or diff.shown_at < start:
                    await asyncio.sleep(0)
                if key == "j":
                    timings.append((diff.first_paint_at - start) * 1000)
    return timings


async def scroll_steps() -> list[float]:
    """Key press to the stack's first repaint, per step (the pilot's own waiting excluded)."""
    from redline.tui.widgets.pending_stack import PendingStack

    painted: list[float] = []
    original = PendingStack.render_line

    def timed(self: PendingStack, y: int) -> Any:
        painted.append(time.perf_counter())
        return original(self, y)

    PendingStack.render_line = timed  # type: ignore[method-assign]
    session = BenchSession()
    for index in range(STACK):
        session.store.push(
            action(f"Edit {index}", f"x = {index}\n", f"x = {index + 1}\n", f"src/m{index}.py")
        )
    app = RedlineApp(session, watcher_factory=NoWatcher)  # type: ignore[arg-type]
    steps = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            for _ in range(STACK - 1):
                painted.clear()
                start = time.perf_counter()
                await pilot.press("j")
                while not painted:
                    await asyncio.sleep(0)
                steps.append((painted[0] - start) * 1000)
            assert app.stack.cursor == STACK - 1
    finally:
        PendingStack.render_line = original  # type: ignore[method-assign]
    return steps


async def throughput(rate: int | None) -> tuple[float, float, float, int]:
    """Flood the log from a producer thread (paced at ``rate`` events/s, or unpaced) while
    pressing j/k; returns delivered events/s and key latency (median, worst)."""
    session = BenchSession()
    app = RedlineApp(session, watcher_factory=NoWatcher)  # type: ignore[arg-type]
    key_latencies: list[float] = []
    total = EVENTS if rate is None else rate * 3
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        session.store.push(action("keeps the stack busy", "a\n", "b\n"))
        session.store.push(action("second", "a\n", "c\n"))
        await pilot.pause()

        def produce() -> None:
            began = time.perf_counter()
            for index in range(total):
                if rate is not None and index % 100 == 0:
                    delay = began + index / rate - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                if index % 5 == 0:
                    session.events.emit(
                        ToolStart(
                            tool_call_id=f"c{index}", name="read", args={"path": f"f{index}.py"}
                        )
                    )
                else:
                    session.events.emit(MessageDelta(text=f"token {index} "))

        start = time.perf_counter()
        producer = threading.Thread(target=produce)
        producer.start()
        stack = app.stack
        while producer.is_alive():
            # Post the key as the terminal driver would and time it until the cursor moved.
            before = stack.cursor
            key = "j" if before == 0 else "k"
            pressed = time.perf_counter()
            app.post_message(events.Key(key, key))
            while stack.cursor == before:
                await asyncio.sleep(0)
            key_latencies.append((time.perf_counter() - pressed) * 1000)
            await asyncio.sleep(0.02)
        producer.join()
        needle = f"f{total - 5}.py"
        while needle not in app.activity.plain[-4000:]:
            await asyncio.sleep(0.001)
        elapsed = time.perf_counter() - start
    return total / elapsed, statistics.median(key_latencies), max(key_latencies), len(key_latencies)


def main() -> None:
    paints = asyncio.run(first_paint())
    print(
        f"diff first paint, {LINES}-line file: median {statistics.median(paints):.1f} ms, worst {max(paints):.1f} ms (target < 100 ms)"
    )
    steps = asyncio.run(scroll_steps())
    print(
        f"stack of {STACK}: slowest scroll step {max(steps):.1f} ms, median {statistics.median(steps):.1f} ms (target < 50 ms)"
    )
    worst = sorted(range(len(steps)), key=lambda i: -steps[i])[:3]
    print("  slowest steps (index: ms): " + ", ".join(f"{i}: {steps[i]:.1f}" for i in worst))
    for rate in (10_000, None):
        delivered, key_median, key_worst, presses = asyncio.run(throughput(rate))
        offered = f"offered {rate:,}/s" if rate else "unpaced burst"
        print(
            f"activity log ({offered}): {delivered:,.0f} events/s delivered (target >= 5,000/s); "
            f"{presses} key presses meanwhile: median {key_median:.1f} ms, worst {key_worst:.1f} ms"
        )


if __name__ == "__main__":
    main()
