"""The default test suite under a 2-job CPU load against a reference job (issue 44).

The target: under a load of two busy processes, ``uv run pytest`` (the default run,
``-n auto``: one xdist worker per usable core) slows down no more than a reference job of
as many CPU-bound processes as the suite has xdist workers does under the same load.

Order of the runs (each timed as a whole, wall clock), so that each suite run has a
reference run right before and after it under the same conditions:

1. the reference job, quiet: N processes each spinning a fixed number of loop turns;
2. the suite, quiet (``python -m pytest`` in the project, the default options);
3. the reference job, quiet, again;
4. then under the load (two ``while True: pass`` processes started first): the reference
   job, the suite, the reference job again.

The reference's ratio is the mean of its two loaded runs over the mean of its two quiet
ones; a change of the machine's other load during a suite run shows as a gap between the
two reference runs around it.

Prints each time, the two slow-down ratios (loaded / quiet) and the load average (1 minute)
before and after every run. The suite runs twice here: about 10 minutes on 2 cores.
``--no-suite`` times only the reference job (a few seconds), ``--pytest-args`` passes
other arguments to pytest (e.g. ``--pytest-args "tests/checks"`` for a short trial).

Usage: ``uv run python bench/suite_load.py [--turns N] [--no-suite] [--pytest-args ARGS]``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPIN = "import sys\nn = int(sys.argv[1])\nwhile n:\n    n -= 1\n"
BUSY = "while True:\n    pass\n"


def usable_cpus() -> int:
    """The cores pytest-xdist's ``-n auto`` counts (one worker each)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS
        return max(1, os.cpu_count() or 1)


def load1() -> float:
    return os.getloadavg()[0]


@contextmanager
def cpu_load(jobs: int) -> Iterator[None]:
    """``jobs`` busy-loop processes for the length of the block (ended by their own pids)."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(jobs)]
    try:
        time.sleep(1.0)  # let them reach the scheduler before anything is timed
        yield
    finally:
        for process in busy:
            process.send_signal(signal.SIGTERM)
        for process in busy:
            process.wait()


def reference(workers: int, turns: int) -> float:
    """Seconds for ``workers`` CPU-bound processes of ``turns`` loop turns each, together."""
    started = time.perf_counter()
    spinning = [subprocess.Popen([sys.executable, "-c", SPIN, str(turns)]) for _ in range(workers)]
    for process in spinning:
        if process.wait() != 0:
            raise SystemExit(f"the reference process exited {process.returncode}")
    return time.perf_counter() - started


def suite(pytest_args: list[str]) -> tuple[float, str]:
    """Seconds for the suite and pytest's last line (its counts) with its CPU time."""
    import resource

    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1] if lines else f"(no output; exit {done.returncode})"
    failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
    if failed:
        summary += "".join(f"\n    {line}" for line in failed)
        # The whole output, to read the failures' tracebacks (a race found under load).
        kept = Path(tempfile.gettempdir()) / f"suite-load-{os.getpid()}-{int(started)}.txt"
        kept.write_text(done.stdout + done.stderr, encoding="utf-8")
        summary += f"\n    (pytest's output: {kept})"
    if done.returncode not in (0, 1):
        summary += f" [exit {done.returncode}]"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary += f" (CPU user {after.ru_utime - cpu.ru_utime:.0f} s, sys {after.ru_stime - cpu.ru_stime:.0f} s)"
    return took, summary


def timed(label: str, run: object) -> float:
    before = load1()
    result = run()  # type: ignore[operator]
    took, note = result if isinstance(result, tuple) else (result, "")
    print(f"{label:<28} {took:>8.1f} s   load {before:.2f} -> {load1():.2f}   {note}", flush=True)
    return float(took)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--turns",
        type=int,
        default=80_000_000,
        help="loop turns per reference process (default: about 10 s each on this machine, quiet)",
    )
    parser.add_argument("--load-jobs", type=int, default=2, help="busy processes for the load")
    parser.add_argument(
        "--workers", type=int, default=0, help="reference processes (default: xdist's -n auto)"
    )
    parser.add_argument("--no-suite", action="store_true", help="time only the reference job")
    parser.add_argument("--pytest-args", default="", help="arguments for pytest (default: none)")
    args = parser.parse_args()
    workers = args.workers or usable_cpus()
    pytest_args = shlex.split(args.pytest_args)
    print(
        f"cores {usable_cpus()}, reference: {workers} processes x {args.turns:,} turns, "
        f"load: {args.load_jobs} busy processes"
    )

    def ref(label: str) -> float:
        return timed(label, lambda: reference(workers, args.turns))

    ref_quiet = [ref("reference, quiet")]
    if not args.no_suite:
        suite_quiet = timed("suite, quiet", lambda: suite(pytest_args))
        ref_quiet.append(ref("reference, quiet (again)"))
    with cpu_load(args.load_jobs):
        ref_loaded = [ref("reference, loaded")]
        if not args.no_suite:
            suite_loaded = timed("suite, loaded", lambda: suite(pytest_args))
            ref_loaded.append(ref("reference, loaded (again)"))
    ref_ratio = (sum(ref_loaded) / len(ref_loaded)) / (sum(ref_quiet) / len(ref_quiet))
    print(f"reference slow-down under load: {ref_ratio:.2f}x")
    if not args.no_suite:
        suite_ratio = suite_loaded / suite_quiet
        verdict = "met" if suite_ratio <= ref_ratio else "missed"
        print(
            f"suite slow-down under load:     {suite_ratio:.2f}x  (target <= {ref_ratio:.2f}x: {verdict})"
        )
        minutes, seconds = divmod(round(suite_quiet), 60)
        print(f"suite quiet: {minutes} m {seconds:02d} s (target <= 3 m)")


if __name__ == "__main__":
    main()
