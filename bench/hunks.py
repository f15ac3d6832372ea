"""Hunk review at scale: splitting, selecting, partial apply and rebase, all in memory.

Run from the repository root:  uv run python bench/hunks.py [--repeat N]

Two shapes: the issue's ``ast_edit`` (349 one-line replacements in 15 files of 2,000 lines;
take 340, leave 9) and one 5,000-line file with every other line changed (2,500 hunks).
Prints the best of N runs for each step in milliseconds. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from redline.workspace.hunks import hunk_units, parse_selection, split_for_apply
from redline.workspace.preview import FileModify, Preview, encode_text, sha256_bytes
from redline.workspace.rebase import rebase_preview


def best(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def modify(path: str, old: list[str], new: list[str]) -> FileModify:
    text = "".join(old)
    return FileModify(path, sha256_bytes(encode_text(text, "utf-8")), text, "".join(new))


def ast_edit_shape() -> Preview:
    changes = []
    for index in range(15):
        old = [f"value_{index}_{n} = compute({n})\n" for n in range(2000)]
        new = list(old)
        count = 24 if index < 4 else 23  # 4*24 + 11*23 = 349
        for k in range(count):
            at = 40 + k * 80
            new[at] = old[at].replace("compute", "calculate")
        changes.append(modify(f"src/pkg/module_{index}.py", old, new))
    return Preview(changes)


def dense_shape() -> Preview:
    old = [f"line {n}\n" for n in range(5000)]
    new = [line.upper() if n % 2 else line for n, line in enumerate(old)]
    return Preview([modify("big.txt", old, new)])


def report(name: str, preview: Preview, keep: int, repeat: int) -> None:
    units = hunk_units(preview)
    values = [unit.address for unit in units[:keep]]
    chosen = parse_selection(preview, values)
    split = split_for_apply(preview, chosen)
    # Another action on the same files that touches only lines the split left alone.
    other_changes = []
    for change in preview.changes:
        assert isinstance(change, FileModify)
        lines = change.old_text.splitlines(keepends=True)
        lines[0] = "# header\n"
        other_changes.append(modify(change.path, change.old_text.splitlines(True), lines))
    other = Preview(other_changes)
    print(f"{name}: {len(units)} hunks in {len(preview.changes)} files, taking {keep}")
    print(f"  hunk_units        {best(repeat, lambda: hunk_units(preview)):8.1f} ms")
    print(f"  parse_selection   {best(repeat, lambda: parse_selection(preview, values)):8.1f} ms")
    print(f"  split_for_apply   {best(repeat, lambda: split_for_apply(preview, chosen)):8.1f} ms")
    print(f"  remaining_units   {best(repeat, lambda: split.remaining_units):8.1f} ms")
    print(
        f"  rebase (disjoint) {best(repeat, lambda: rebase_preview(other, split.selected)):8.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    report("ast_edit shape", ast_edit_shape(), 340, args.repeat)
    report("dense file", dense_shape(), 1250, args.repeat)


if __name__ == "__main__":
    main()
