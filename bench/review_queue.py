"""The workspace review queue: push cost, cross-process visibility, listing and deciding.

Prints these figures (targets from issues 12 and 29):

* push with fsync (record + contents + id counter, all durable): median under 10 ms;
* push -> visible in another process that watches the queue: median under 200 ms;
* ``redline pending list`` (and ``--json``) over 1,000 queued actions: under 300 ms;
* at ``--scale`` actions (10,000 by default), in two queues -- every action on a different
  file (nothing conflicts), and every action on the same line of one file (every apply
  conflicts with all the others) -- ``redline pending list`` (under 500 ms), ``redline
  pending apply`` of the top action, and ``y`` in the dashboard (a headless App: the key
  press until the action is resolved and the stack shows the next one; under 200 ms).

Usage: ``uv run python bench/review_queue.py [--pushes N] [--actions N] [--runs N]
[--scale N] [--only scale]``. Everything happens in a temporary folder with its own
``REDLINE_CONFIG_DIR`` and state folder. The big queues are filled by a helper process
whose pushes skip fsync (filling 10,000 durably would take minutes and is not what is
measured); every measured step runs with the normal, durable code.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WATCHER = """
import sys, time
from pathlib import Path
from redline.workspace.queue import WorkspaceQueue

queue = WorkspaceQueue(Path(sys.argv[1]))
seen = set()

def changed():
    now = time.time()
    for record in queue.list():
        if record.id not in seen:
            seen.add(record.id)
            print(record.id, now, flush=True)

watcher = queue.watch(changed)
print("ready", flush=True)
sys.stdin.readline()
watcher.stop()
"""


def _draft(root: Path, index: int):  # type: ignore[no-untyped-def]
    from redline.workspace.preview import FileModify, Preview, sha256_bytes
    from redline.workspace.queue import ActionDraft, Source

    old = (root / "a.py").read_text()
    new = old.replace("x = 1", f"x = {index}")
    return ActionDraft(
        label=f"Edit a.py #{index}",
        source=Source.current("exec", "bench", "s1"),
        source_tool_name="edit",
        preview=Preview([FileModify("a.py", sha256_bytes(old.encode()), old, new)]),
    )


def _workspace(base: Path, name: str) -> Path:
    root = base / name
    root.mkdir()
    (root / "a.py").write_text("".join(f"line {n}\n" for n in range(200)) + "x = 1\n")
    return root


def bench_push(base: Path, pushes: int) -> list[float]:
    from redline.workspace.queue import WorkspaceQueue

    root = _workspace(base, "push")
    queue = WorkspaceQueue(root)
    times = []
    for index in range(pushes):
        draft = _draft(root, index)
        started = time.perf_counter()
        queue.push(draft)
        times.append((time.perf_counter() - started) * 1000)
    return times


def bench_visible(base: Path, pushes: int) -> list[float]:
    from redline.workspace.queue import WorkspaceQueue

    root = _workspace(base, "visible")
    queue = WorkspaceQueue(root)
    queue.list()
    child = subprocess.Popen(
        [sys.executable, "-c", WATCHER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.3)  # let the watcher settle before the first push (a benchmark, not a test)
    started: dict[str, float] = {}
    latencies = []
    for index in range(pushes):
        begin = time.time()
        record = queue.push(_draft(root, index))
        started[record.id] = begin
        while True:
            line = child.stdout.readline().split()
            if line and line[0] in started:
                latencies.append((float(line[1]) - started[line[0]]) * 1000)
                if line[0] == record.id:
                    break
        time.sleep(0.05)
    child.stdin.write("stop\n")
    child.stdin.flush()
    child.wait(30)
    return latencies


def _cpu_ms() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def bench_list(base: Path, actions: int, runs: int) -> dict[str, list[float]]:
    from redline.workspace.queue import WorkspaceQueue

    root = _workspace(base, "list")
    queue = WorkspaceQueue(root)
    for index in range(actions):
        queue.push(_draft(root, index))
    results: dict[str, list[float]] = {}
    for label, extra in (("list", []), ("list --json", ["--json"])):
        argv = [sys.executable, "-m", "redline", "pending", "-C", str(root), "list", *extra]
        # As installed: bytecode cached (the first run writes it and is not counted).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run(argv, capture_output=True, check=True, env=env)
        times, cpu = [], []
        for _ in range(runs):
            begin, begin_cpu = time.perf_counter(), _cpu_ms()
            done = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
            times.append((time.perf_counter() - begin) * 1000)
            cpu.append(_cpu_ms() - begin_cpu)
        assert f"pa-{actions}" in done.stdout
        results[label] = times
        results[f"{label} [CPU time]"] = cpu
    return results


FILL = """
import os, sys
from pathlib import Path

os.fsync = lambda fd: None  # filling only: the measured steps run durably in other processes
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

mode, root, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
body = "".join(f"line {n}\\n" for n in range(200)) + "x = 1\\n"
queue = WorkspaceQueue(root)
source = Source.current("exec", "bench", "filler")
for index in range(count):
    name = "a.py" if mode == "same" else f"src/f{index}.py"
    if mode != "same" or index == 0:
        (root / name).write_text(body)
    new = body.replace("x = 1", f"x = {index + 2}")
    preview = Preview([FileModify(name, sha256_bytes(body.encode()), body, new)])
    queue.push(ActionDraft(f"Edit {name} #{index}", source, "edit", preview))
queue.close()
"""


def _fill(base: Path, mode: str, count: int) -> Path:
    root = base / f"scale-{mode}-{count}"
    (root / "src").mkdir(parents=True)
    subprocess.run([sys.executable, "-c", FILL, mode, str(root), str(count)], check=True)
    return root


def _timed_cli(root: Path, *argv: str) -> tuple[float, float, str]:
    """(wall ms, CPU ms, stdout) of one ``redline pending -C ROOT ...`` process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "redline", "pending", "-C", str(root), *argv]
    begin, begin_cpu = time.perf_counter(), _cpu_ms()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall, cpu = (time.perf_counter() - begin) * 1000, _cpu_ms() - begin_cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr}")
    return wall, cpu, done.stdout


async def _dashboard_y(
    root: Path, presses: int, *, settle: bool = True, frame: bool = False
) -> list[float]:
    """Press ``y`` on the top action ``presses`` times; ms until it left the stack (and
    Textual's pilot found the app idle). ``settle``: first let the app finish what its
    start-up does (else the press is timed with the start-up's tail).

    ``frame``: as a person sees it instead -- the key handed to the app as a terminal's
    does (the driver's ``process_message``), until the frame that shows the next action's
    diff has been composed (the diff's first line painted, then the screen's update handed
    to the terminal). ``Pilot.press`` waits on top of the work for the process to look
    idle, twice, in 20 ms samples of its CPU time (``textual._wait``): time no one sees.
    """
    from bench.dashboard import SIZE, BenchSession, NoWatcher
    from textual import events
    from textual._wait import wait_for_idle

    from redline.review.store import PendingActionStore
    from redline.tui.app import RedlineApp
    from redline.workspace.queue import WorkspaceQueue

    queue = WorkspaceQueue(root)
    session = BenchSession()
    session.cwd = root
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    app = RedlineApp(session, watcher_factory=NoWatcher)  # type: ignore[arg-type]
    times = []
    frames: list[float] = []  # when each screen update was handed to the terminal
    display = app._display

    def timed_display(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        frames.append(time.perf_counter())

    app._display = timed_display  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            # A long queue shows its top first and lists the rest on a thread: wait for it.
            while not app.stack.rows or app.inbox.reading:
                await pilot.pause(0.05)
            diff = app.preview.diff_view
            for _ in range(presses):
                if settle:
                    # As a person presses y having seen the frame: the start-up's own work
                    # (the first diff's highlighting, Pygments' first lookup, the footer)
                    # is over, so only what y makes the dashboard do is timed.
                    await wait_for_idle(0.05, 5.0)
                top = app.stack.top_id
                begin = time.perf_counter()
                if not frame:
                    await pilot.press("y")
                    while app.stack.top_id == top or app.inbox.busy:
                        await asyncio.sleep(0.001)
                    times.append((time.perf_counter() - begin) * 1000)
                else:
                    assert app._driver is not None
                    app._driver.process_message(events.Key("y", "y"))
                    while True:
                        shown = app.preview.action
                        painted = diff.first_paint_at
                        if (
                            shown is not None
                            and shown.id != top
                            and painted is not None
                            and painted >= begin
                            and frames
                            and frames[-1] >= painted
                        ):
                            break
                        await asyncio.sleep(0.0005)
                    end = next(at for at in frames if at >= painted)
                    times.append((end - begin) * 1000)
                    while app.inbox.busy:  # the decision's tail (its outcome handled)
                        await asyncio.sleep(0.001)
                if queue.resolution(str(top)) is None:
                    raise SystemExit(f"y did not resolve {top}")
    finally:
        queue.close()
    return times


def bench_scale(base: Path, count: int, runs: int, modes: tuple[str, ...]) -> None:
    """The issue 29 figures: listing and deciding with ``count`` actions queued."""
    from redline.workspace.queue import index

    whats = {"different": "each on its own file", "same": "all on one line"}
    warm = base / "warm-up"
    if not warm.exists():
        warm.mkdir()
        _timed_cli(warm, "list")  # bytecode written: not counted
    for mode in modes:
        root = _fill(base, mode, count)
        label = f"{count:,} actions {whats[mode]}"
        # A record is kept in the listing index once its file is a little older than the
        # clock's tick (see redline.workspace.queue.index): as in any queue not being
        # filled this very second. (A benchmark, not a test: it may wait.)
        time.sleep(index.SETTLE_NS / 1e9)
        cold = root / ".redline" / "queue" / index.INDEX
        cold.unlink(missing_ok=True)
        wall, cpu, out = _timed_cli(root, "list")  # reads every record, writes the index
        _row(f"pending list, {label}, no index yet", [wall], 500)
        _row(f"pending list, {label}, no index yet [CPU]", [cpu], 500)
        walls, cpus = [], []
        for _ in range(runs):
            wall, cpu, out = _timed_cli(root, "list")
            walls.append(wall)
            cpus.append(cpu)
        assert f"{count} pending" in out, out[-300:]
        _row(f"pending list, {label}", walls, 500)
        _row(f"pending list, {label} [CPU]", cpus, 500)
        # Each apply takes the current top; on one line, the first makes all others stale,
        # so that queue gets one apply (real work: N-1 durable rewrites) and no y.
        tries = runs if mode == "different" else 1
        walls, cpus = [], []
        for _ in range(tries):
            top = out.splitlines()[1].split()[0]
            wall, cpu, _out = _timed_cli(root, "apply", top)
            walls.append(wall)
            cpus.append(cpu)
            _w, _c, out = _timed_cli(root, "list")
        _row(f"pending apply TOP, {label}", walls, 200)
        _row(f"pending apply TOP, {label} [CPU]", cpus, 200)
        if mode == "same":
            continue  # everything left is stale: y would refuse
        times = asyncio.run(_dashboard_y(root, runs))
        _row(f"dashboard y, {label}", times, 200)


def _row(label: str, times: list[float], target: float) -> None:
    median = statistics.median(times)
    verdict = "ok" if median < target else "SLOW"
    print(
        f"{label:<66} {min(times):>8.1f} {median:>10.1f} {max(times):>8.1f}   "
        f"< {target:.0f} ms {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pushes", type=int, default=100)
    parser.add_argument("--actions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scale", type=int, default=10_000, help="0 skips the big queues")
    parser.add_argument("--reference", type=int, default=100, help="the short queue's length")
    parser.add_argument("--only", choices=["scale"], help="only the big-queue figures")
    args = parser.parse_args()
    print(
        f"load average: {', '.join(f'{n:.1f}' for n in os.getloadavg())} on {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["REDLINE_CONFIG_DIR"] = str(base / "config")
        os.environ["XDG_STATE_HOME"] = str(base / "state")  # the state key, not the real one
        print(f"{'figure':<66} {'best ms':>8} {'median ms':>10} {'worst ms':>8}   target")
        if args.only != "scale":
            _row("push with fsync", bench_push(base, args.pushes), 10)
            _row("push -> visible in another process", bench_visible(base, 30), 200)
            for label, times in bench_list(base, args.actions, args.runs).items():
                _row(f"redline pending {label} ({args.actions} actions)", times, 300)
        if args.scale:
            # A short queue first: what a decision costs whatever the queue's length.
            bench_scale(base, args.reference, args.runs, ("different",))
            bench_scale(base, args.scale, args.runs, ("different", "same"))


if __name__ == "__main__":
    main()
