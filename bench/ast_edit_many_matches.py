"""ast_edit on one file with very many matches: the rewrite must stay linear.

Run from the repository root:  uv run python bench/ast_edit_many_matches.py [--matches N]
Target: 20,000 matches in one file rewrite in under 10 s (issue 10, defect 8). Each shape
is one file analysed in this process; the rewritten text is checked with ``compile()``
(a second libcst parse of such a file would itself take seconds).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# bench/ holds scripts whose names may shadow standard modules:
# never import from the script's own folder.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

SHAPES = {
    "top-level statements": lambda n: "".join(f"print(x{i})\n" for i in range(n)),
    "one function body": lambda n: "def f():\n" + "".join(f"    print(x{i})\n" for i in range(n)),
    "one long line": lambda n: "x = [" + ", ".join(f"print(x{i})" for i in range(n)) + "]\n",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20_000)
    args = parser.parse_args()
    from redline.tools.ast_edit import compile_ops
    from redline.tools.ast_edit.analyze import analyze

    ops = compile_ops([("print($$$A)", "log($$$A)")])
    worst = 0.0
    for name, make in SHAPES.items():
        text = make(args.matches)
        wall, cpu = time.perf_counter(), time.process_time()
        result = analyze(text, ops, True)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert result.error is None, result.error
        assert result.new_text is not None and len(result.matches) == args.matches
        compile(result.new_text, name, "exec", dont_inherit=True)
        worst = max(worst, wall)
        print(
            f"{name:22} {len(result.matches):>7,} matches, {len(text) / 1e6:5.2f} MB: "
            f"{wall:6.2f} s wall, {cpu:6.2f} s CPU"
        )
    print(f"slowest: {worst:.2f} s (target < 10 s for 20,000 matches)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
