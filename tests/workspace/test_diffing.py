from __future__ import annotations

import difflib
import random

from redline.workspace.diffing import opcodes
from redline.workspace.preview import FileModify, Preview


def check_script(a: list[str], b: list[str]) -> None:
    codes = opcodes(a, b)
    i = j = 0
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j), "opcodes must be contiguous"
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))


def test_opcodes_are_a_valid_edit_script_on_random_inputs() -> None:
    rng = random.Random(7)
    for _ in range(400):
        a = [rng.choice("abcde") + "\n" for _ in range(rng.randint(0, 30))]
        b = [rng.choice("abcde") + "\n" for _ in range(rng.randint(0, 30))]
        check_script(a, b)


def test_unified_diff_matches_difflib_on_ordinary_edits() -> None:
    old = [f"line {n}\n" for n in range(40)]
    new = list(old)
    new[5] = "changed 5\n"
    del new[20]
    new.insert(30, "inserted\n")
    change = FileModify("f.py", "0", "".join(old), "".join(new))
    expected = "".join(difflib.unified_diff(old, new, "a/f.py", "b/f.py"))
    assert Preview([change]).file_diff(change) == expected


def test_many_small_changes_in_a_big_file_stay_fast_and_counted() -> None:
    old = [f"value_{n} = compute({n})\n" for n in range(5000)]
    new = [line.replace("compute", "calc") if n % 2 else line for n, line in enumerate(old)]
    change = FileModify("big.py", "0", "".join(old), "".join(new))
    stats = Preview([change]).file_stats(change)
    assert (stats.added, stats.removed) == (2500, 2500)
