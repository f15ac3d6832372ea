"""ast_edit against ast-grep over a suite of pattern shapes and corpora.

Run from the repository root:

    uv run python bench/ast_edit_suite.py [--corpus NAME=PATH ...] [--files N] [--runs 3]

Default corpora: this Python's standard library, the installed site-packages and (if
installed) SQLAlchemy's package tree. ``--files N`` takes an evenly spread subset of N
files of each corpus (for quick iteration). Each corpus is copied once to a temporary
folder; for every pattern (a search, and the rewrite next to it) both tools run on the
same copy, interleaved (ast-grep, ast_edit cold, ast_edit warm, repeated ``--runs``
times); the medians and ratios are printed per pattern and corpus, with ast_edit's peak
memory (process and workers). Cold means a fresh result cache and fresh worker pool;
warm re-runs in the same process with the cache filled. The forkserver that starts the
workers (once per process, preloading redline) is started before the first timing,
and its start-up is printed on its own. For rewrites touching a fifth of the corpus
or more, the floor printed beside them is libcst's own parse of the touched files on
as many worker processes (one run). Installs nothing: ast-grep comes from the dev dependency
ast-grep-cli.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from types import ModuleType

# bench/ holds scripts whose names may shadow standard modules:
# never import from the script's own folder.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


def _sibling(name: str) -> ModuleType:
    path = Path(__file__).resolve().parent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_vs = _sibling("ast_edit_vs_ast_grep")
MemorySampler = _vs.MemorySampler
find_ast_grep = _vs.find_ast_grep

SUITE: list[tuple[str, str]] = [
    ("print($$$A)", "logger.info($$$A)"),
    ("self.$A.$B($$$C)", "self.$A.$B($$$C)  # noqa"),
    ("$A == None", "$A is None"),
    ("[$E for $X in $Y]", "list($E for $X in $Y)"),
    ("$A[$B]", "get($A, $B)"),
    ("$A + $B", "add($A, $B)"),
    ("lambda $$$A: $B", "(lambda $$$A: ($B))"),
    ("assert $A, $M", "check($A, $M)"),
    ("for $I in range(len($S)): $$$B", "for $I, _ in enumerate($S): $$$B"),
    ("isinstance($X, $T)", "is_a($X, $T)"),
    ("$A.append($B)", "$A += [$B]"),
    ("len($X) == 0", "not $X"),
    ("raise $E from $C", "raise $E"),
    ("with open($P) as $F: $$$B", "with open($P, encoding='utf-8') as $F: $$$B"),
]
SKIP_DIRS = {"__pycache__", "site-packages", "dist-packages"}


def copy_corpus(
    source: Path, target: Path, limit: int | None, skip_nested: bool
) -> tuple[int, int]:
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if not (skip_nested and d in SKIP_DIRS))
        files.extend(Path(dirpath) / n for n in sorted(filenames) if n.endswith(".py"))
    if limit is not None and len(files) > limit:
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    size = 0
    for src in files:
        dst = target / src.relative_to(source)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        size += dst.stat().st_size
    return len(files), size


def ast_grep(binary: str, corpus: Path, pat: str, out: str | None) -> tuple[float, int]:
    args = [binary, "run", "--lang", "python", "--pattern", pat]
    if out is not None:
        args += ["--rewrite", out]
    args += ["--json=stream", str(corpus)]
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"ast-grep failed on {pat!r}: {proc.stderr.decode(errors='replace')}")
    return elapsed, sum(1 for line in proc.stdout.splitlines() if line.strip())


def ast_edit(
    corpus: Path, pat: str, out: str | None, cache: object
) -> tuple[float, int, int, list[str]]:
    """Seconds, matches, the bytes of the files holding a match, and those files."""
    from redline.tools.ast_edit import compile_ops, iter_search, list_files

    start = time.perf_counter()
    ops = compile_ops([(pat, out)])
    files = list_files(corpus)
    matches = 0
    touched: list[str] = []
    for result in iter_search(corpus, ops, files, rewrite=out is not None, cache=cache):  # type: ignore[arg-type]
        matches += len(result.matches)
        if result.matches:
            touched.append(result.path)
    elapsed = time.perf_counter() - start
    paths = [str(corpus / rel) for rel in touched]
    return elapsed, matches, sum(Path(p).stat().st_size for p in paths), paths


def _libcst_parse(path: str) -> None:
    import libcst

    # A file libcst cannot parse costs what the attempt costs.
    with contextlib.suppress(Exception):
        libcst.parse_module(Path(path).read_text(encoding="utf-8"))


def libcst_floor(paths: list[str]) -> float:
    """Seconds for libcst to parse ``paths`` on as many worker processes as ast_edit uses."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from redline.tools.ast_edit.engine import default_workers

    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(default_workers(), mp_context=context) as pool:
        list(pool.map(int, ["1"] * default_workers()))  # started before the clock
        start = time.perf_counter()
        list(pool.map(_libcst_parse, paths, chunksize=4))
        return time.perf_counter() - start


def start_forkserver() -> float:
    """Start the worker pool's forkserver (once per process) and return how long it took.

    The timed searches run beside the memory sampler's thread, so their pools come from
    the forkserver (never fork, with a thread running); started here as the engine
    starts it for a search (redline's engine preloaded).
    """
    import multiprocessing
    from multiprocessing import forkserver

    from redline.tools.ast_edit import engine

    start = time.perf_counter()
    multiprocessing.get_context("forkserver").set_forkserver_preload([engine.__name__])
    forkserver.ensure_running()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument(
        "--extra",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a corpus added to the defaults (e.g. sqlalchemy=PATH when it is not installed)",
    )
    parser.add_argument("--files", type=int, default=None, help="subset of N files per corpus")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--patterns", type=int, default=len(SUITE), help="first N patterns")
    parser.add_argument(
        "--only", action="append", default=[], metavar="PATTERN", help="run these patterns only"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()
    corpora: list[tuple[str, Path, bool]] = []
    for spec in args.corpus:
        name, _, path = spec.partition("=")
        corpora.append((name, Path(path), False))
    if not corpora:
        corpora.append(("stdlib", Path(sysconfig.get_paths()["stdlib"]), True))
        corpora.append(("site-packages", Path(sysconfig.get_paths()["purelib"]), False))
        try:
            import sqlalchemy  # type: ignore[import-not-found]

            corpora.append(("sqlalchemy", Path(sqlalchemy.__file__).parent, False))
        except ImportError:
            if not args.extra:
                print("sqlalchemy not installed: its corpus is skipped (see --extra)")
        for spec in args.extra:
            name, _, path = spec.partition("=")
            corpora.append((name, Path(path), False))
    binary = find_ast_grep()
    from redline.tools.ast_edit import ResultCache, shutdown_pool

    rows: list[dict[str, object]] = []
    print(f"forkserver start-up (once per process): {start_forkserver():.2f} s")
    with tempfile.TemporaryDirectory(prefix="ast-edit-suite-") as tmp:
        for name, source, skip_nested in corpora:
            target = Path(tmp) / name
            count, size = copy_corpus(source, target, args.files, skip_nested)
            print(f"\n== {name}: {count} files, {size / 1e6:.1f} MB (from {source})")
            print(
                f"{'pattern':34} {'kind':7} {'ast-grep':>9} {'cold':>8} {'warm':>8} "
                f"{'cold/sg':>8} {'warm/sg':>8} {'matches sg/ae':>14} {'peak MB':>8} {'touched':>8}"
                f" {'floor':>7}"
            )
            chosen = [(p, o) for p, o in SUITE if p in args.only] if args.only else SUITE
            for pat, out in chosen[: args.patterns]:
                for kind, template in (("search", None), ("rewrite", out)):
                    sg: list[float] = []
                    cold: list[float] = []
                    warm: list[float] = []
                    sg_matches = ae_matches = touched = 0
                    peak = 0
                    touched_paths: list[str] = []
                    for _ in range(args.runs):
                        seconds, sg_matches = ast_grep(binary, target, pat, template)
                        sg.append(seconds)
                        shutdown_pool()
                        cache = ResultCache()
                        with MemorySampler() as sampler:
                            seconds, ae_matches, touched, touched_paths = ast_edit(
                                target, pat, template, cache
                            )
                            cold.append(seconds)
                            seconds, _, _, _ = ast_edit(target, pat, template, cache)
                            warm.append(seconds)
                        peak = max(peak, sampler.peak_kb // 1024)
                    row = {
                        "corpus": name,
                        "pattern": pat,
                        "kind": kind,
                        "ast_grep": statistics.median(sg),
                        "cold": statistics.median(cold),
                        "warm": statistics.median(warm),
                        "sg_matches": sg_matches,
                        "ae_matches": ae_matches,
                        "peak_mb": peak,
                        "touched": touched / size if size else 0.0,
                        "floor": None,
                    }
                    if template is not None and row["touched"] >= 0.2:  # type: ignore[operator]
                        # One run: a reference line, and the most expensive step here.
                        row["floor"] = libcst_floor(touched_paths)
                    rows.append(row)
                    floor = row["floor"]
                    print(
                        f"{pat:34} {kind:7} {row['ast_grep']:9.2f} {row['cold']:8.2f} "
                        f"{row['warm']:8.3f} {row['cold'] / row['ast_grep']:8.2f} "  # type: ignore[operator]
                        f"{row['warm'] / row['ast_grep']:8.3f} "  # type: ignore[operator]
                        f"{sg_matches:>6}/{ae_matches:<7} {peak:8} {row['touched']:8.0%}"
                        + (f" {floor:7.2f}" if isinstance(floor, float) else ""),
                        flush=True,
                    )
            ratios = [r["cold"] / r["ast_grep"] for r in rows if r["corpus"] == name]  # type: ignore[operator]
            # The target covers searches and rewrites touching under a fifth of the corpus;
            # larger rewrites are bound by libcst's parse of the files they touch.
            judged = [
                r["cold"] / r["ast_grep"]  # type: ignore[operator]
                for r in rows
                if r["corpus"] == name and (r["kind"] == "search" or r["touched"] < 0.2)  # type: ignore[operator]
            ]
            print(
                f"{name}: cold/ast-grep median {statistics.median(ratios):.2f}x, "
                f"worst {max(ratios):.2f}x; searches and rewrites touching < 20 %: "
                f"median {statistics.median(judged):.2f}x, worst {max(judged):.2f}x"
            )
    shutdown_pool()
    judged_all = [
        r["cold"] / r["ast_grep"]  # type: ignore[operator]
        for r in rows
        if r["kind"] == "search" or r["touched"] < 0.2  # type: ignore[operator]
    ]
    large = [r for r in rows if r["floor"] is not None]
    print(
        f"\nall corpora, searches and rewrites touching < 20 % ({len(judged_all)} rows): "
        f"median {statistics.median(judged_all):.2f}x ast-grep (target <= 1.5x), "
        f"worst {max(judged_all):.2f}x (target <= 3x), "
        f"{sum(1 for x in judged_all if x <= 3)} within 3x"
    )
    if large:
        over = [r["cold"] / r["floor"] for r in large]  # type: ignore[operator]
        print(
            f"rewrites touching >= 20 % ({len(large)} rows): cold / libcst floor median "
            f"{statistics.median(over):.2f}x, worst {max(over):.2f}x"
        )
    print(
        f"warm: worst {max(r['warm'] / r['ast_grep'] for r in rows):.3f}x ast-grep "  # type: ignore[operator]
        f"(target <= 0.5x); peak memory {max(int(r['peak_mb']) for r in rows)} MB "  # type: ignore[call-overload]
        "(target <= 600 MB)"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
