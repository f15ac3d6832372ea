"""``redline --all`` at scale (issue 45): the inbox over 50 workspaces holding 10,000
pending actions in all, beside the dashboard of one workspace holding 200.

Usage: ``uv run python bench/inbox_scale.py [--workspaces 50] [--each 200] [--runs 5]``.

In a temporary folder, ``--workspaces`` workspaces are filled with ``--each`` actions
each (every action on a file of its own, queued by another process) and remembered in one
state folder; one more workspace with ``--each`` actions is remembered in a state folder
of its own. Then every round times, one after the other (so the machine's load is shared
alike), a fresh ``python`` process that opens, headless:

* the dashboard of the one workspace (as ``bench/queue_scale.py`` does), until the top
  action's diff is painted;
* ``redline --all``'s app over every known workspace, until the top action's diff is
  painted (the newest action of all 10,000); the process then checks that all of them
  are listed.

Each is timed by this process from the child's start to its report. The ratio of the
medians is the figure (target: at most 1.5x). The load average is printed before and
after: on a shared machine the absolute times say little, the ratio within one run more.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.queue_scale import FIRST_FRAME
from bench.review_queue import FILL

FIRST_FRAME_ALL = """
import asyncio, sys, time
sys.path.insert(0, sys.argv[1])
from bench.dashboard import SIZE
from redline.review.all_source import AllWorkspacesSource
from redline.tui.all_app import AllWorkspacesApp

async def main() -> None:
    app = AllWorkspacesApp(AllWorkspacesSource())
    async with app.run_test(size=SIZE) as pilot:
        diff = app.inbox.preview.diff_view
        while diff.first_paint_at is None or app.inbox.preview.action is None:
            await asyncio.sleep(0.001)
        shown = app.inbox.preview.action.id
        print(f"frame {shown}", flush=True)
        # Over many workspaces the first frame is each one's top: then the whole listing.
        total = int(sys.argv[2])
        while len(app.inbox.stack.rows) < total:
            await asyncio.sleep(0.01)
        print(f"rows {len(app.inbox.stack.rows)}", flush=True)

asyncio.run(main())
"""


def _env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_STATE_HOME"] = str(state)
    return env


def _fill(root: Path, count: int, state: Path) -> Path:
    (root / "src").mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-c", FILL, "different", str(root), str(count)],
        check=True,
        env=_env(state),
    )
    return root


def _frame(script: list[str], state: Path, count: int) -> float:
    """Wall ms from starting a dashboard process to its first frame (top diff painted)."""
    begin = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", *script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(state),
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    wall = (time.perf_counter() - begin) * 1000
    out, err = child.communicate()
    # "frame ID" then "rows ROWS" once the whole listing is shown (one workspace's long
    # queue, bench/queue_scale.py; every workspace's, its first frame from their tops).
    parts = line.split() + out.split()[1:2]
    if len(parts) != 3 or parts[0] != "frame" or int(parts[2]) != count or parts[1] == "-":
        raise SystemExit(f"no first frame with {count} rows: {line + out!r} {err[-3000:]}")
    return wall


def _load() -> str:
    return ", ".join(f"{n:.2f}" for n in os.getloadavg())


def _line(label: str, times: list[float]) -> float:
    median = statistics.median(times)
    print(f"{label:<58} {min(times):>8.1f} {median:>9.1f} {max(times):>8.1f}")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspaces", type=int, default=50)
    parser.add_argument("--each", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    repo = str(Path(__file__).resolve().parent.parent)
    total = args.workspaces * args.each
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["REDLINE_CONFIG_DIR"] = str(base / "config")
        every, alone = base / "state-all", base / "state-one"
        begin = time.perf_counter()
        with ThreadPoolExecutor(max_workers=4) as pool:
            roots = list(
                pool.map(
                    lambda n: _fill(base / f"ws{n:02d}", args.each, every),
                    range(args.workspaces),
                )
            )
        one = _fill(base / "one", args.each, alone)
        print(f"filled {len(roots)} + 1 workspaces in {time.perf_counter() - begin:.0f} s")
        from redline.workspace.queue import index

        time.sleep(index.SETTLE_NS / 1e9)  # records older than the clock's tick (see index)
        # Warm-up: bytecode, every listing index and file-hash memo written, ids cached.
        for state, argv in ((every, ["workspaces", "list"]), (every, ["pending", "list", "--all"])):
            subprocess.run(
                [sys.executable, "-m", "redline", *argv],
                check=False,
                capture_output=True,
                env=_env(state),
            )
        subprocess.run(
            [sys.executable, "-m", "redline", "pending", "-C", str(one), "list"],
            check=True,
            capture_output=True,
            env=_env(alone),
        )
        single = [FIRST_FRAME, str(one), repo]
        allof = [FIRST_FRAME_ALL, repo, str(total)]
        _frame(single, alone, args.each)
        _frame(allof, every, total)
        print(f"load average at start: {_load()} on {os.cpu_count()} cores")
        figures: dict[str, list[float]] = {"one": [], "all": []}
        for _ in range(args.runs):
            figures["one"].append(_frame(single, alone, args.each))
            figures["all"].append(_frame(allof, every, total))
        print(f"load average at end: {_load()}")
        print(f"{'first frame, top diff painted (ms)':<58} {'best':>8} {'median':>9} {'worst':>8}")
        o = _line(f"one workspace's dashboard, {args.each:,} pending", figures["one"])
        a = _line(f"redline --all, {args.workspaces} workspaces, {total:,} pending", figures["all"])
        print(f"redline --all / one workspace: {a / o:.2f}x   (target <= 1.5x)")


if __name__ == "__main__":
    main()
