"""Many matches in one file: every one rewritten, the result valid Python.

The speed of this (linear in the matches; issue 10) is checked by
bench/ast_edit_many_matches.py, not here: these only pin the results.
"""

from __future__ import annotations

import pytest

from .helpers import run

COUNT = 600

SHAPES = {
    "top-level": lambda n: "".join(f"print(x{i})\n" for i in range(n)),
    "function": lambda n: "def f():\n" + "".join(f"    print(x{i})\n" for i in range(n)),
    "line": lambda n: "x = [" + ", ".join(f"print(x{i})" for i in range(n)) + "]\n",
    "mixed": lambda n: "".join(
        f"if c{i}:\n    print(a{i}, b)  # n{i}\nelse:\n    y = [print(z{i})]\n"
        for i in range(n // 2)
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_match_in_a_large_file_is_rewritten(shape: str) -> None:
    text = SHAPES[shape](COUNT)
    result = run(text, ("print($$$A)", "log($$$A)"))
    assert result.error is None, result.error
    assert result.new_text is not None
    assert len(result.matches) == COUNT
    compile(result.new_text, shape, "exec", dont_inherit=True)
    assert result.new_text == text.replace("print(", "log(")


def test_one_match_that_cannot_be_rewritten_is_left_and_reported() -> None:
    text = "".join(f"print(x{i})\n" for i in range(COUNT)) + "y = [print(q)]\n"
    result = run(text, ("print($A)", "x = $A"))
    assert result.error is None
    assert result.new_text is not None and len(result.matches) == COUNT
    assert result.new_text.endswith("x = x599\ny = [print(q)]\n")
    compile(result.new_text, "many", "exec", dont_inherit=True)
    assert len(result.skipped) == 1
    assert result.skipped[0].startswith(f"line {COUNT + 1}: left unchanged")
