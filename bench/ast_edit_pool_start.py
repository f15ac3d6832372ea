"""What a cold ast_edit pool costs to start (issue 44), before any file is parsed.

    uv run python bench/ast_edit_pool_start.py [--runs 5] [--workers 2]

Each run is a fresh interpreter that has imported redline's ast_edit engine (as the
command has when it decides) and then starts ``--workers`` worker processes the way the
engine does, timing until every worker has answered a first task: forked from this
process; from a forkserver preloading the engine; from a forkserver preloading libcst's
half too (a rewrite's pool). Runs are interleaved; medians, and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
_START = """
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from redline.tools.ast_edit import engine

def pid(_x):
    time.sleep(0.05)  # every worker gets one of the first tasks
    return os.getpid()

if __name__ == "__main__":
    how, workers = sys.argv[1], int(sys.argv[2])
    if how == "fork":
        context = multiprocessing.get_context("fork")
    else:
        context = multiprocessing.get_context("forkserver")
        preload = [engine.__name__] + ([engine._CST_MODULE] if how == "forkserver+libcst" else [])
        context.set_forkserver_preload(preload)
    begin = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        pids = set(pool.map(pid, range(workers)))
        elapsed = time.perf_counter() - begin - 0.05
    print(f"{elapsed:.4f} {len(pids)}")
"""

HOWS = ("fork", "forkserver", "forkserver+libcst")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.workers} workers, {args.runs} runs, cores {os.cpu_count()}, load {load}")
    times: dict[str, list[float]] = {how: [] for how in HOWS}
    # A file, not -c: forkserver children import the task's function from __main__'s file.
    script = Path(tempfile.mkdtemp(prefix="pool-start-")) / "start.py"
    script.write_text(_START)
    for run in range(args.runs + 1):
        for how in HOWS:
            done = subprocess.run(
                [sys.executable, str(script), how, str(args.workers)],
                env=_ENV,
                capture_output=True,
                text=True,
                check=True,
            )
            seconds, _pids = done.stdout.split()
            if run:  # the first round is a warm-up (bytecode)
                times[how].append(float(seconds) * 1000)
    for how in HOWS:
        values = times[how]
        print(f"{how:<20} median {statistics.median(values):7.1f} ms   worst {max(values):7.1f} ms")
    print(f"load at end {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
