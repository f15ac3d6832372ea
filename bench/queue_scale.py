"""A long queue, side by side with a short one (issue 44): the dashboard's first frame,
``redline pending list`` and ``y``.

Usage: ``uv run python bench/queue_scale.py [--scale 10000] [--reference 100] [--runs 5]
[--only frame,list,y]`` (``--only y``: only the ``y`` rows: to the frame, through Pilot,
unsettled).

Three queues are filled (0, ``--reference`` and ``--scale`` actions, each action on a file
of its own, queued by another process) in a temporary folder; then every round times, one
after the other, so the machine's load is shared alike:

* the dashboard's first frame: a fresh ``python`` process (as a person starts it) that opens
  the dashboard headless on the queue and reports when the top action's diff has been
  painted (with 0 pending: when the empty stack has been drawn) -- timed by this process
  from the start of the child to that report; the child then waits for the whole list (a
  long queue's rest is listed after the first frame) and says how many rows it shows,
  which must be all of them;
* ``redline pending list``: a whole process, on 0 and on ``--scale`` actions;
* ``y`` in a headless dashboard on ``--reference`` and on ``--scale`` actions, pressed once
  the app has settled after its start-up: the key (handed to the app as a terminal's input
  thread does) until the frame that shows the next action's diff has been composed -- the
  target row; then through Textual's ``Pilot.press`` (the press until the action has left
  the stack and the pilot found the app idle: its idle waits sample the process's CPU in
  20 ms steps, twice), and "unsettled", pressed as soon as the rows show (as this bench did
  before: the start-up's tail is then timed with the press).

Ratios are taken within the same run. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.review_queue import _dashboard_y, _fill, _timed_cli

FIRST_FRAME = """
import asyncio, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from bench.dashboard import SIZE, BenchSession, NoWatcher
from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.workspace.queue import WorkspaceQueue

async def main() -> None:
    root = Path(sys.argv[1])
    queue = WorkspaceQueue(root)
    session = BenchSession()
    session.cwd = root
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue
    app = RedlineApp(session, watcher_factory=NoWatcher)
    async with app.run_test(size=SIZE) as pilot:
        diff = app.preview.diff_view
        while True:
            if app.stack.top_id is None and app.stack.rows == [] and app.inbox.ready:
                await pilot.pause()  # the empty stack drawn
                break
            if diff.first_paint_at is not None and app.preview.action is not None:
                break
            await asyncio.sleep(0.001)
        shown = app.preview.action.id if app.preview.action is not None else "-"
        print(f"frame {shown}", flush=True)
        # A long queue's first frame shows its top; the rest follows (checked, not timed).
        while app.inbox.reading:
            await asyncio.sleep(0.01)
        await pilot.pause()
        print(f"rows {len(app.stack.rows)}", flush=True)
    queue.close()

asyncio.run(main())
"""


def first_frame(root: Path, count: int) -> float:
    """Wall ms from starting a dashboard process to its first frame (top diff painted)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    repo = str(Path(__file__).resolve().parent.parent)
    begin = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", FIRST_FRAME, str(root), repo],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    wall = (time.perf_counter() - begin) * 1000
    rest, err = child.communicate()
    parts = line.split()
    if not parts or parts[0] != "frame" or rest.split() != ["rows", str(count)]:
        raise SystemExit(f"the dashboard did not show its first frame: {line!r} {err[-2000:]}")
    if count and parts[1] == "-":
        raise SystemExit("the first frame showed no action")
    return wall


def _load() -> str:
    return ", ".join(f"{n:.1f}" for n in os.getloadavg())


def _line(label: str, times: list[float]) -> float:
    median = statistics.median(times)
    print(f"{label:<52} {min(times):>8.1f} {median:>9.1f} {max(times):>8.1f}")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=10_000)
    parser.add_argument("--reference", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--only",
        default="frame,list,y",
        help="the rows to time, comma-separated: frame, list, y (default: all)",
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    if not only or only - {"frame", "list", "y"}:
        parser.error(f"--only: expected frame, list and/or y, got {args.only!r}")
    print(f"load average at start: {_load()} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["REDLINE_CONFIG_DIR"] = str(base / "config")
        os.environ["XDG_STATE_HOME"] = str(base / "state")
        empty = base / "empty"
        (empty / "src").mkdir(parents=True)
        short = _fill(base, "different", args.reference)
        big = _fill(base, "different", args.scale)
        from redline.workspace.queue import index

        time.sleep(index.SETTLE_NS / 1e9)  # records older than the clock's tick (see index)
        for root in (empty, short, big):  # warm-up: bytecode, the listing index written
            _timed_cli(root, "list")
        if "frame" in only:
            first_frame(empty, 0)
        figures: dict[str, list[float]] = {}
        for _ in range(args.runs):
            if "frame" in only:
                figures.setdefault("frame0", []).append(first_frame(empty, 0))
                figures.setdefault("frameN", []).append(first_frame(big, args.scale))
            if "list" in only:
                figures.setdefault("list0", []).append(_timed_cli(empty, "list")[0])
                figures.setdefault("listN", []).append(_timed_cli(big, "list")[0])
        # y: one press per round on each queue, interleaved (each press takes the top).
        ys: dict[str, list[float]] = {
            key: [] for key in ("shortF", "bigF", "short", "big", "short0", "big0")
        }
        for _ in range(args.runs if "y" in only else 0):
            # As a person sees it: the key to the frame showing the next action's diff.
            ys["shortF"] += asyncio.run(_dashboard_y(short, 1, frame=True))
            ys["bigF"] += asyncio.run(_dashboard_y(big, 1, frame=True))
            # Through Textual's Pilot: the press until the app looks idle again.
            ys["short"] += asyncio.run(_dashboard_y(short, 1))
            ys["big"] += asyncio.run(_dashboard_y(big, 1))
            # As before issue 44's y pass: pressed as soon as the rows show (the start-up's
            # tail -- the first diff's highlighting -- timed with it).
            ys["short0"] += asyncio.run(_dashboard_y(short, 1, settle=False))
            ys["big0"] += asyncio.run(_dashboard_y(big, 1, settle=False))
        print(f"load average at end: {_load()}")
        print(f"{'figure (ms)':<52} {'best':>8} {'median':>9} {'worst':>8}")
        n, r = f"{args.scale:,}", f"{args.reference:,}"
        if "frame" in only:
            f0 = _line("dashboard first frame, 0 pending", figures["frame0"])
            fn = _line(f"dashboard first frame (top diff), {n} pending", figures["frameN"])
        if "list" in only:
            l0 = _line("pending list, 0 pending", figures["list0"])
            ln = _line(f"pending list, {n} pending", figures["listN"])
        if "y" in only:
            yf0 = _line(f"dashboard y to the next diff's frame, {r} pending", ys["shortF"])
            yfn = _line(f"dashboard y to the next diff's frame, {n} pending", ys["bigF"])
            y0 = _line(f"dashboard y (Pilot), {r} pending", ys["short"])
            yn = _line(f"dashboard y (Pilot), {n} pending", ys["big"])
            u0 = _line(f"dashboard y unsettled, {r} pending", ys["short0"])
            un = _line(f"dashboard y unsettled, {n} pending", ys["big0"])
        if "frame" in only:
            print(f"first frame {n} / 0:  {fn / f0:.2f}x   (target <= 1.5x)")
        if "list" in only:
            print(
                f"pending list {n}: {ln:.0f} ms (target <= 500 ms); {n} / 0: {ln / l0:.2f}x (<= 3x)"
            )
        if "y" in only:
            print(f"y {n}: {yfn:.0f} ms (target <= 200 ms); {n} / {r}: {yfn / yf0:.2f}x (<= 1.3x)")
            print(f"y (Pilot) {n}: {yn:.0f} ms; {n} / {r}: {yn / y0:.2f}x")
            print(f"y unsettled {n}: {un:.0f} ms; {n} / {r}: {un / u0:.2f}x")


if __name__ == "__main__":
    main()
