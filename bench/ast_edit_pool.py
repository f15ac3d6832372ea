"""Where a process pool starts to pay for ast_edit (issue 27): in-process against workers.

    uv run python bench/ast_edit_pool.py [--runs 5] [--workers 2]

For growing slices of the standard library (whole files, in path order) and a search
every file must be parsed for (``$A + $B``; ``--pattern`` to change), each run is a fresh
interpreter that imports redline and searches the slice once with ``workers=1``
(in-process) and once with ``--workers`` (a cold pool: forkserver, workers), interleaved.
Printed per slice: files, bytes, the medians and their ratio, and the load average. The
break-even is the smallest slice from which the pool is faster in every larger one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

SIZES = "100000,400000,800000,1600000,3200000,6400000,12800000"
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
_SEARCH = """
import sys
from pathlib import Path
from redline.tools.ast_edit import engine, search
engine.POOL_MIN_FILES = engine.POOL_MIN_BYTES = 0  # the pool whenever workers > 1
report = search(Path(sys.argv[1]), [(sys.argv[3], None)], workers=int(sys.argv[2]), cache=None)
print(report.total_matches)
"""


def stdlib_files() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(stdlib):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        found.extend(Path(dirpath) / n for n in sorted(filenames) if n.endswith(".py"))
    return found


def make_slice(files: list[Path], size: int, target: Path) -> tuple[int, int]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    target.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(target)], check=True)
    total = count = 0
    for src in files:
        if total >= size:
            break
        dst = target / src.relative_to(stdlib)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        total += dst.stat().st_size
        count += 1
    return count, total


def timed(folder: Path, workers: int, pattern: str) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _SEARCH, str(folder), str(workers), pattern],
        env=_ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - start, proc.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pattern", default="$A + $B")
    parser.add_argument("--sizes", default=SIZES, help="comma-separated slice sizes in bytes")
    args = parser.parse_args()
    files = stdlib_files()
    print(f"pattern {args.pattern!r}; {args.runs} runs; cores {os.cpu_count()}")
    print(f"{'files':>6} {'bytes':>10} {'in-process':>11} {'pool':>8} {'pool/in':>8}  load")
    rows: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory(prefix="ast-edit-pool-") as tmp:
        for size in (int(x) for x in args.sizes.split(",")):
            folder = Path(tmp) / str(size)
            count, total = make_slice(files, size, folder)
            timed(folder, 1, args.pattern)  # warm-up (and bytecode)
            alone: list[float] = []
            pooled: list[float] = []
            for _ in range(args.runs):
                seconds, matches = timed(folder, 1, args.pattern)
                alone.append(seconds)
                seconds, again = timed(folder, args.workers, args.pattern)
                pooled.append(seconds)
                assert matches == again, (matches, again)
            ratio = statistics.median(pooled) / statistics.median(alone)
            rows.append((total, ratio))
            load = "/".join(f"{x:.1f}" for x in os.getloadavg())
            print(
                f"{count:6} {total:10,} {statistics.median(alone):10.3f}s "
                f"{statistics.median(pooled):7.3f}s {ratio:8.2f}  {load}",
                flush=True,
            )
    even = next(
        (total for i, (total, _) in enumerate(rows) if all(r < 1 for _, r in rows[i:])), None
    )
    print(f"break-even: {'none in these sizes' if even is None else f'{even:,} bytes'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
