"""The "small project" mode of bench/ast_edit_vs_ast_grep.py (issue 27).

    uv run python bench/ast_edit_vs_ast_grep.py --small [--runs 5]

End to end through the installed commands, the way a user runs them: ``redline ast-edit
--pattern P .`` and ``ast-grep run --lang python --pattern P .`` in the corpus folder,
side by side in one run (for every run, every shape: ast-grep, then redline), after one
warm-up run of each (which also writes any bytecode not compiled yet). Every folder is a
git repository (`git init`), as a user's project is. Two corpora:

- ten standard-library packages (about 3.1 MB), copied to a temporary folder;
- a generated 200-file project (seeded, so every run generates the same files).

Printed per corpus: its size, per shape the medians and their ratio (redline over
ast-grep) with the match counts of both, the median and worst ratio, and the load
average before and after. Then the fixed cost: an empty folder and a folder of one small
file, each as a ratio to a bare ``python -c 'import ast, json, pathlib'`` timed in the
same loop. Ratios, not seconds, are the figures to compare: the machine may be shared.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

STDLIB_PACKAGES = (
    "asyncio",
    "concurrent",
    "email",
    "http",
    "importlib",
    "json",
    "logging",
    "multiprocessing",
    "unittest",
    "xml",
)
SHAPES = (
    "print($$$A)",
    "self.$A.$B($$$C)",
    "$A == None",
    "$A[$B]",
    "$A + $B",
    "isinstance($X, $T)",
)
# Issue 44's six shapes, timed as a user or an agent runs them (``--json``); the first
# two are rewrites (shown, not written: ``--rewrite`` / ``-r``).
ISSUE44_SHAPES: tuple[tuple[str, str | None], ...] = (
    ("print($$$A)", "logger.info($$$A)"),
    ("$A == None", "$A is None"),
    ("self.$A.$B($$$C)", None),
    ("$A[$B]", None),
    ("[$E for $X in $Y]", None),
    ("isinstance($X, $T)", None),
)
# redline with the CPUs counted as free whatever the load (the choice a quiet machine
# makes): the command's own entry point, with tools/ast_edit/cpus.py told so.
FORCED_FREE = (
    "import sys; from redline.tools.ast_edit import cpus; "
    "cpus.load_average = lambda: 0.0; from redline.cli import main; sys.exit(main())"
)
GENERATED_FILES = 200
BARE = "import ast, json, pathlib"
SMALL_FILE = '''"""A small module."""

import os


def main(argv):
    if argv == None:
        argv = []
    for arg in argv:
        print("argument", arg)
    return len(argv) + 1


if __name__ == "__main__":
    main(os.sys.argv[1:])
'''


def copy_packages(target: Path) -> tuple[int, int]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = size = 0
    for package in STDLIB_PACKAGES:
        for dirpath, dirnames, filenames in os.walk(stdlib / package):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                src = Path(dirpath) / name
                dst = target / src.relative_to(stdlib)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                files += 1
                size += dst.stat().st_size
    return files, size


_WORDS = [
    *("account", "order", "item", "user", "session", "cache", "record", "event"),
    *("queue", "report", "entry", "price", "total", "count", "name", "value"),
    *("index", "buffer", "result", "config", "handler", "request", "response"),
]


def _function(rng: random.Random, method: bool) -> list[str]:
    name = f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}_{rng.randrange(100)}"
    a, b = rng.sample(_WORDS, 2)
    params = ("self, " if method else "") + f"{a}, {b}=None"
    pad = "        " if method else "    "
    body = [f"{pad[:-4]}def {name}({params}):", f'{pad}"""Handle the {a} and the {b}."""']
    for _ in range(rng.randrange(4, 12)):
        kind = rng.randrange(10)
        c = rng.choice(_WORDS)
        if kind == 0:
            body.append(f'{pad}print("{c}:", {a})')
        elif kind == 1:
            body += [f"{pad}if {b} == None:", f"{pad}    {b} = {{}}"]
        elif kind == 2:
            body.append(f"{pad}{c} = {a}[{rng.randrange(5)}] + {b}.get({c!r}, 0)")
        elif kind == 3 and method:
            body.append(f"{pad}self.{c}.{rng.choice(_WORDS)}({a}, {b})")
        elif kind == 4:
            body += [f"{pad}if not isinstance({a}, (list, tuple)):", f"{pad}    {a} = [{a}]"]
        elif kind == 5:
            body.append(f"{pad}{c} = [x * 2 for x in {a} if x]")
        elif kind == 6:
            body += [f"{pad}for key in sorted({b} or ()):", f"{pad}    {a}.append(key)"]
        elif kind == 7:
            body.append(f"{pad}{c} = {{k: v for k, v in zip({a}, range(len({a})))}}")
        elif kind == 8:
            body += [
                f"{pad}try:",
                f"{pad}    {c} = int({b})",
                f"{pad}except (TypeError, ValueError):",
            ]
            body.append(f"{pad}    {c} = 0")
        else:
            body.append(f"{pad}logger.debug('%s %s', {a!r}, len({a}))")
    body.append(f"{pad}return {a}")
    return body


def generate_project(target: Path, count: int = GENERATED_FILES, seed: int = 27) -> tuple[int, int]:
    """``count`` modules in a few packages, each a few classes and functions long."""
    rng = random.Random(seed)
    size = 0
    for index in range(count):
        package = target / "project" / f"pkg{index % 8}"
        package.mkdir(parents=True, exist_ok=True)
        lines = [
            f'"""Module {index} of the generated project."""',
            "",
            "from __future__ import annotations",
            "",
            "import logging",
            "",
            "logger = logging.getLogger(__name__)",
            "",
        ]
        for _ in range(rng.randrange(1, 4)):
            cls = f"{rng.choice(_WORDS).title()}{rng.choice(_WORDS).title()}{rng.randrange(99)}"
            lines += ["", f"class {cls}:", f'    """A {cls}."""', ""]
            lines += ["    def __init__(self, store):", "        self.store = store", ""]
            for _ in range(rng.randrange(2, 6)):
                lines += [*_function(rng, True), ""]
        for _ in range(rng.randrange(1, 5)):
            lines += ["", *_function(rng, False), ""]
        path = package / f"module_{index}.py"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        size += path.stat().st_size
    return count, size


# Bytecode allowed: the warm-up run writes what `uv sync --compile-bytecode` would have
# compiled (a session may set PYTHONDONTWRITEBYTECODE, which makes every run compile).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(argv: list[str], cwd: Path) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=_ENV, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()}")
    return elapsed, proc.stdout


def git_init(folder: Path) -> None:
    """Make ``folder`` a project of its own, as a user's is: redline takes the nearest
    folder up holding `.git` (or `.redline`) as the workspace, and lists files with git."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _count_matches(sg: str, redline: str, corpus: Path, shape: str) -> tuple[int, int]:
    _, out = _run([sg, "run", "--lang", "python", "--pattern", shape, "--json=stream", "."], corpus)
    sg_count = sum(1 for line in out.splitlines() if line.strip())
    _, out = _run([redline, "ast-edit", "--pattern", shape, "--json", "."], corpus)
    return sg_count, int(json.loads(out)["total_matches"])


def compare_corpus(
    name: str, corpus: Path, files: int, size: int, sg: str, redline: str, runs: int
) -> list[float]:
    print(f"\n== {name}: {files} files, {size / 1e6:.2f} MB; load average before {_load()}")
    print(
        f"{'pattern':24} {'ast-grep':>9} {'redline':>9} {'ratio':>7} {'pair ratios':>14} {'matches sg/redline':>19}"
    )
    commands = {
        shape: (
            [sg, "run", "--lang", "python", "--pattern", shape, "."],
            [redline, "ast-edit", "--pattern", shape, "."],
        )
        for shape in SHAPES
    }
    for sg_argv, ae_argv in commands.values():  # warm-up
        _run(sg_argv, corpus)
        _run(ae_argv, corpus)
    times: dict[str, tuple[list[float], list[float]]] = {shape: ([], []) for shape in SHAPES}
    for _ in range(runs):
        for shape, (sg_argv, ae_argv) in commands.items():
            times[shape][0].append(_run(sg_argv, corpus)[0])
            times[shape][1].append(_run(ae_argv, corpus)[0])
    ratios: list[float] = []
    for shape in SHAPES:
        sg_times, ae_times = times[shape]
        ratio = statistics.median(ae_times) / statistics.median(sg_times)
        pairs = [a / s for s, a in zip(sg_times, ae_times, strict=True)]
        ratios.append(ratio)
        sg_count, ae_count = _count_matches(sg, redline, corpus, shape)
        print(
            f"{shape:24} {statistics.median(sg_times):8.3f}s {statistics.median(ae_times):8.3f}s "
            f"{ratio:6.2f}x {min(pairs):6.2f}-{max(pairs):<6.2f} {sg_count:>9}/{ae_count:<9}"
        )
    print(
        f"{name}: median {statistics.median(ratios):.2f}x ast-grep (target <= 1.5x), worst "
        f"{max(ratios):.2f}x (target <= 3x); load average after {_load()}"
    )
    return ratios


def fixed_cost(tmp: Path, redline: str, runs: int) -> None:
    empty = tmp / "empty"
    one = tmp / "one-file"
    git_init(empty)
    git_init(one)
    (one / "small.py").write_text(SMALL_FILE, encoding="utf-8")
    bare = [sys.executable, "-c", BARE]
    search = [redline, "ast-edit", "--pattern", "print($$$A)", "."]
    print(f"\n== fixed cost; load average before {_load()}")
    _run(bare, tmp), _run(search, empty), _run(search, one)  # warm-up
    rows: dict[str, list[float]] = {"bare": [], "empty": [], "one": []}
    for _ in range(runs):
        rows["bare"].append(_run(bare, tmp)[0])
        rows["empty"].append(_run(search, empty)[0])
        rows["one"].append(_run(search, one)[0])
    base = statistics.median(rows["bare"])
    print(f"bare python -c '{BARE}': {base * 1000:.0f} ms (median of {runs})")
    for key, label, target in (
        ("empty", "empty folder", 5),
        ("one", f"one small file ({len(SMALL_FILE)} bytes)", 8),
    ):
        median = statistics.median(rows[key])
        print(
            f"redline ast-edit, {label}: {median * 1000:.0f} ms = {median / base:.1f}x bare "
            f"(target <= {target}x)"
        )
    print(f"load average after {_load()}")


def _bytecode() -> str:
    """Whether redline's and libcst's modules have compiled bytecode next to them."""
    import importlib.util

    found = []
    for name in ("redline.cli", "redline.tools.ast_edit.engine", "libcst._nodes.expression"):
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        cached = importlib.util.cache_from_source(origin) if origin else None
        found.append(f"{name} {'yes' if cached and Path(cached).exists() else 'NO'}")
    return ", ".join(found)


def run(runs: int, sg: str) -> int:
    redline = str(Path(sys.executable).parent / "redline")
    if not Path(redline).exists():
        raise SystemExit(f"{redline}: not installed (run `uv sync`)")
    version = subprocess.run([sg, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version}; {runs} timed runs after a warm-up; cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="ast-edit-small-") as name:
        tmp = Path(name)
        stdlib = tmp / "stdlib10"
        git_init(stdlib)
        files, size = copy_packages(stdlib)
        every = compare_corpus(
            f"ten stdlib packages ({', '.join(STDLIB_PACKAGES)})",
            stdlib,
            files,
            size,
            sg,
            redline,
            runs,
        )
        project = tmp / "generated"
        git_init(project)
        files, size = generate_project(project)
        every += compare_corpus("generated project", project, files, size, sg, redline, runs)
        print(f"bytecode after the warm-ups: {_bytecode()}")
        print(f"\nboth corpora: median {statistics.median(every):.2f}x, worst {max(every):.2f}x")
        fixed_cost(tmp, redline, runs * 3)
    return 0


def _from(src: Path, code: str) -> str:
    """``code`` run with the redline package of ``src`` first on the path."""
    return f"import sys; sys.path.insert(0, {str(src)!r}); " + code.removeprefix("import sys; ")


def issue44(runs: int, sg: str, baseline: Path | None = None) -> int:
    """The six shapes of issue 44 on the ten packages, ``--json`` both sides, ast-grep
    against redline as shipped (its own choice of in-process or workers for the load now)
    and redline choosing as on a quiet machine (workers when the job is worth it),
    interleaved in one run. ``baseline``: a folder holding another revision's ``redline``
    package, timed the same two ways in the same loop (its output compared too)."""
    redline = str(Path(sys.executable).parent / "redline")
    forced = [sys.executable, "-c", FORCED_FREE]
    entry = "import sys; from redline.cli import main; sys.exit(main())"
    others: list[tuple[str, list[str]]] = []
    if baseline is not None:
        others = [
            ("baseline", [sys.executable, "-c", _from(baseline.resolve(), entry)]),
            ("baseline quiet", [sys.executable, "-c", _from(baseline.resolve(), FORCED_FREE)]),
        ]
    with tempfile.TemporaryDirectory(prefix="ast-edit-issue44-") as name:
        corpus = Path(name) / "stdlib10"
        git_init(corpus)
        files, size = copy_packages(corpus)
        print(f"ten stdlib packages: {files} files, {size / 1e6:.2f} MB; cores {os.cpu_count()}")
        print(f"load average before {_load()}")
        commands = []
        for pattern, rewrite in ISSUE44_SHAPES:
            sg_argv = [sg, "run", "-l", "python", "-p", pattern, "--json=stream"]
            ae_args = ["ast-edit", "-C", str(corpus), "--pattern", pattern]
            if rewrite is not None:
                sg_argv += ["-r", rewrite]
                ae_args += ["--rewrite", rewrite]
            commands.append(
                (
                    pattern,
                    [*sg_argv, "."],
                    [redline, *ae_args, "--json"],
                    [*forced, *ae_args, "--json"],
                    *([*argv, *ae_args, "--json"] for _name, argv in others),
                )
            )
        outputs = {}
        for pattern, sg_argv, ae_argv, *rest in commands:  # warm-up, and the same output
            _run(sg_argv, corpus)
            shipped = _run(ae_argv, corpus)[1]
            outputs[pattern] = all(shipped == _run(argv, corpus)[1] for argv in rest)
        slots = 3 + len(others)
        times: dict[str, list[list[float]]] = {c[0]: [[] for _ in range(slots)] for c in commands}
        for _ in range(runs):
            for pattern, *argvs in commands:
                for slot, argv in enumerate(argvs):
                    times[pattern][slot].append(_run(argv, corpus)[0])
        print(
            f"{'pattern':22} {'ast-grep':>9} {'shipped':>9} {'ratio':>7} {'quiet choice':>12} {'ratio':>7} same"
        )
        shipped_ratios, free_ratios = [], []
        for pattern, *_argvs in commands:
            sg_t, ae_t, free_t = (statistics.median(t) for t in times[pattern][:3])
            shipped_ratios.append(ae_t / sg_t)
            free_ratios.append(free_t / sg_t)
            print(
                f"{pattern:22} {sg_t:8.3f}s {ae_t:8.3f}s {ae_t / sg_t:6.2f}x {free_t:11.3f}s "
                f"{free_t / sg_t:6.2f}x {'yes' if outputs[pattern] else 'NO'}"
            )
        rows = [("shipped", shipped_ratios), ("quiet choice", free_ratios)]
        for slot, (name, _argv) in enumerate(others, start=3):
            ratios = []
            for pattern, *_argvs in commands:
                sg_t = statistics.median(times[pattern][0])
                ratios.append(statistics.median(times[pattern][slot]) / sg_t)
            rows.append((name, ratios))
            shown = (f"{c[0]} {r:.2f}x" for c, r in zip(commands, ratios, strict=True))
            print(f"{name}: " + ", ".join(shown))
        for label, ratios in rows:
            print(
                f"{label}: median {statistics.median(ratios):.2f}x, worst {max(ratios):.2f}x "
                "(targets 1.5x / 3x)"
            )
        print(f"load average after {_load()}")
    return 0
