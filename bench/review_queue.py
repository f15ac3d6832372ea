"""The workspace review queue: push cost, cross-process visibility, `redline pending list`.

Prints three figures (targets from issue 12):

* push with fsync (record + contents + id counter, all durable): median under 10 ms;
* push -> visible in another process that watches the queue: median under 200 ms;
* ``redline pending list`` (and ``--json``) over 1,000 queued actions: under 300 ms.

Usage: ``uv run python bench/review_queue.py [--pushes N] [--actions N] [--runs N]``. Everything
happens in a temporary folder with its own ``REDLINE_CONFIG_DIR``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def _row(label: str, times: list[float], target: float) -> None:
    median = statistics.median(times)
    verdict = "ok" if median < target else "SLOW"
    print(
        f"{label:<54} {min(times):>8.1f} {median:>10.1f} {max(times):>8.1f}   "
        f"< {target:.0f} ms {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pushes", type=int, default=100)
    parser.add_argument("--actions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(
        f"load average: {', '.join(f'{n:.1f}' for n in os.getloadavg())} on {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["REDLINE_CONFIG_DIR"] = str(base / "config")
        os.environ["XDG_STATE_HOME"] = str(base / "state")  # the state key, not the real one
        print(f"{'figure':<54} {'best ms':>8} {'median ms':>10} {'worst ms':>8}   target")
        _row("push with fsync", bench_push(base, args.pushes), 10)
        _row("push -> visible in another process", bench_visible(base, 30), 200)
        for label, times in bench_list(base, args.actions, args.runs).items():
            _row(f"redline pending {label} ({args.actions} actions)", times, 300)


if __name__ == "__main__":
    main()
