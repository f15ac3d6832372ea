"""ast_edit against ast-grep on one corpus: cold and warm preview, memory, first result.

Run from the repository root:  uv run python bench/ast_edit_vs_ast_grep.py [--corpus PATH]
[--workers N]. Installs nothing: ast-grep comes from the dev dependency ast-grep-cli.
The corpus (default: this Python's standard library, .py files only) is copied into a
temporary folder once and both tools work on that same copy, previewing
``print($$$A)`` -> ``logger.info($$$A)`` (neither writes).

``--small`` is the "small project" mode (bench/ast_edit_small.py): end to end through the
installed commands, ``redline ast-edit --pattern P DIR`` beside ``ast-grep run --pattern P
DIR``, on ten standard-library packages (about 3.1 MB) and on a generated 200-file
project, plus the fixed cost (an empty folder, one small file) as a ratio to a bare
``python -c 'import ast, json, pathlib'``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

# bench/ holds scripts whose names may shadow standard modules:
# never import from the script's own folder.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

PATTERN = "print($$$A)"
REWRITE = "logger.info($$$A)"
SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__"}


def copy_corpus(source: Path, target: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if not name.endswith(".py"):
                continue
            src = Path(dirpath) / name
            dst = target / src.relative_to(source)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            files += 1
            size += dst.stat().st_size
    return files, size


def find_ast_grep() -> str:
    here = Path(sys.executable).parent / "ast-grep"
    found = str(here) if here.exists() else shutil.which("ast-grep")
    if not found:
        raise SystemExit("ast-grep not found: run `uv sync` (dev dependency ast-grep-cli)")
    return found


def run_ast_grep(binary: str, corpus: Path) -> tuple[float, int, int]:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            binary,
            "run",
            "--lang",
            "python",
            "--pattern",
            PATTERN,
            "--rewrite",
            REWRITE,
            "--json=stream",
            str(corpus),
        ],
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"ast-grep failed: {proc.stderr.decode(errors='replace')}")
    matches = 0
    files: set[str] = set()
    for line in proc.stdout.splitlines():
        if line.strip():
            matches += 1
            files.add(json.loads(line)["file"])
    return elapsed, matches, len(files)


def _memory_kb(pid: int) -> int:
    """The process's proportional set size (PSS): its own pages, plus its share of pages
    it shares with others. Pool workers forked from a preloaded forkserver share most of
    their memory with it, so summing their RSS would count that memory three times;
    summing PSS counts it once. Falls back to RSS where the kernel gives no PSS."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> set[int]:
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            parents.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


class MemorySampler:
    """Peak total memory (PSS, see _memory_kb) of this process and every descendant (pool
    workers included)."""

    def __init__(self, exclude: set[int] | None = None) -> None:
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            total = _memory_kb(me) + sum(_memory_kb(pid) for pid in _descendants(me))
            self.peak_kb = max(self.peak_kb, total)
            self._stop.wait(0.1)

    def __enter__(self) -> MemorySampler:
        if Path("/proc").is_dir():
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def run_ast_edit(corpus: Path, workers: int | None, cache: object) -> dict[str, float | int]:
    from redline.tools.ast_edit import compile_ops, iter_search, list_files

    start = time.perf_counter()
    ops = compile_ops([(PATTERN, REWRITE)])
    files = list_files(corpus)
    first_result = first_match = None
    matches = changed = errors = 0
    for result in iter_search(corpus, ops, files, workers=workers, cache=cache):  # type: ignore[arg-type]
        now = time.perf_counter() - start
        if first_result is None:
            first_result = now
        if result.matches and first_match is None:
            first_match = now
        matches += len(result.matches)
        changed += bool(result.matches)
        errors += result.error is not None
    return {
        "seconds": time.perf_counter() - start,
        "matches": matches,
        "files": changed,
        "errors": errors,
        "searched": len(files),
        "first_result": first_result or 0.0,
        "first_match": first_match or 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None, help="folder of .py files")
    parser.add_argument("--workers", type=int, default=None, help="ast_edit worker processes")
    parser.add_argument(
        "--small", action="store_true", help="the small-project mode (see bench/ast_edit_small.py)"
    )
    parser.add_argument(
        "--issue44",
        action="store_true",
        help="issue 44's six shapes (two rewrites) on the ten packages, --json, shipped and "
        "with a quiet machine's choice of workers (see bench/ast_edit_small.py)",
    )
    parser.add_argument(
        "--runs", type=int, default=5, help="--small/--issue44: timed runs per command"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="SRC",
        help="--issue44: also time the redline package found in SRC (another revision's "
        "src folder, e.g. from `git archive main src | tar -x -C DIR`), interleaved",
    )
    args = parser.parse_args()
    if args.baseline is not None and not (args.baseline / "redline" / "cli.py").is_file():
        raise SystemExit(f"--baseline {args.baseline}: no redline/cli.py in that folder")
    if args.small or args.issue44:
        extra = {"baseline": args.baseline} if args.issue44 else {}
        return _small_mode(args.runs, "issue44" if args.issue44 else "run", **extra)
    source = args.corpus or Path(sysconfig.get_paths()["stdlib"])
    if not source.is_dir():
        raise SystemExit(f"--corpus {source}: not a folder")
    binary = find_ast_grep()
    from redline.tools.ast_edit import ResultCache, shutdown_pool

    with tempfile.TemporaryDirectory(prefix="ast-edit-bench-") as tmp:
        corpus = Path(tmp) / "corpus"
        count, size = copy_corpus(source, corpus)
        print(f"corpus: {source} -> {count} .py files, {size / 1e6:.1f} MB (copied once)")
        print(f"operation: {PATTERN} -> {REWRITE}   cores: {os.cpu_count()}")

        grep_seconds, grep_matches, grep_files = run_ast_grep(binary, corpus)
        grep_peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
        print(
            f"\nast-grep ({version.strip()}): {grep_seconds:.2f} s, {grep_matches} matches "
            f"in {grep_files} files, peak {grep_peak_mb:.0f} MB"
        )

        cache = ResultCache()
        with MemorySampler() as sampler:
            cold = run_ast_edit(corpus, args.workers, cache)
            warm = run_ast_edit(corpus, args.workers, cache)
        shutdown_pool()
        self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        children_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

        for name, run in (("cold", cold), ("warm", warm)):
            print(
                f"ast_edit {name}: {run['seconds']:.2f} s, {run['matches']} matches in "
                f"{run['files']} files ({run['searched']} searched, {run['errors']} not parsed); "
                f"first result {run['first_result']:.2f} s, first match {run['first_match']:.2f} s; "
                f"{run['seconds'] / grep_seconds:.2f}x ast-grep"
            )
        print(
            f"ast_edit peak memory: {sampler.peak_kb / 1024:.0f} MB total PSS (process + workers, "
            f"sampled every 100 ms; target < 600 MB); getrusage max RSS self {self_mb:.0f} MB + "
            f"children {children_mb:.0f} MB = {self_mb + children_mb:.0f} MB (forkserver workers "
            "are not our direct children, so getrusage undercounts them)"
        )
        print(
            f"\nratio cold/ast-grep: {cold['seconds'] / grep_seconds:.2f}x (target <= 5x)   "
            f"warm/ast-grep: {warm['seconds'] / grep_seconds:.2f}x (target <= 1x)"
        )
    return 0


def _small_mode(runs: int, mode: str = "run", **extra: object) -> int:
    import importlib.util

    path = Path(__file__).resolve().parent / "ast_edit_small.py"
    spec = importlib.util.spec_from_file_location("ast_edit_small", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ast_edit_small"] = module
    spec.loader.exec_module(module)
    return int(getattr(module, mode)(runs, find_ast_grep(), **extra))


if __name__ == "__main__":
    raise SystemExit(main())
