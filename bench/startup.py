"""How fast `redline --help` and `redline --version` start (target: under 300 ms).

Runs each command several times in fresh interpreters and prints the best and median
wall-clock times. Usage: ``uv run python bench/startup.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET_MS = 300.0


def measure(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    base = [sys.executable, "-m", "redline"]
    print(f"{'command':<22} {'best ms':>8} {'median ms':>10}   target < {TARGET_MS:.0f} ms")
    for label, extra in (("redline --help", ["--help"]), ("redline --version", ["--version"])):
        times = measure(base + extra, args.runs)
        best, median = min(times), statistics.median(times)
        verdict = "ok" if median < TARGET_MS else "SLOW"
        print(f"{label:<22} {best:>8.1f} {median:>10.1f}   {verdict}")
    python_only = measure([sys.executable, "-c", "pass"], args.runs)
    print(f"{'(bare python)':<22} {min(python_only):>8.1f} {statistics.median(python_only):>10.1f}")


if __name__ == "__main__":
    main()
