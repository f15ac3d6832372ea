"""Dense files with many matches of varied layout: the exact rewritten text, byte for byte.

These pin what the fast paths of the rewrite must keep (a match on one line is scanned
rather than tokenized; positions come from one pass over the tree): comments and
trailing commas inside the brackets, empty captures, parentheses that precedence
needs, comments after a block header, CRLF line breaks. No timing is asserted; the
speed is measured by bench/ast_edit_many_matches.py.
"""

from __future__ import annotations

import pytest

from .helpers import run

UNITS = 150

# (source, expected) for unit ``i`` of ``print($$$A)`` -> ``log($$$A)``.
PRINT_UNITS = [
    ("print(a{i})\n", "log(a{i})\n"),
    (
        "print(  # why {i}\n    a{i},\n    b,\n)\n",
        "log(  # why {i}\n    a{i},\n    b,\n)\n",
    ),
    ("x{i} = [print(p{i}, q) , print()]\n", "x{i} = [log(p{i}, q) , log()]\n"),
    (
        "if c{i}:  # note {i}\n    print(z{i} if z else w)\n",
        "if c{i}:  # note {i}\n    log(z{i} if z else w)\n",
    ),
    (
        "f{i}(print(*args{i}, **kw), k=print(1,2 ,))\n",
        "f{i}(log(*args{i}, **kw), k=log(1,2 ,))\n",
    ),
    ("s{i} = print(\"a, (b\", 'c)' )  # ) ,\n", "s{i} = log(\"a, (b\", 'c)' )  # ) ,\n"),
    (
        "def g{i}(v):\n    return print(\n        v,  # keep\n    )\n",
        "def g{i}(v):\n    return log(\n        v,  # keep\n    )\n",
    ),
]

# ``len($X) == 0`` -> ``not $X``: captures that need parentheses in their new place.
LEN_UNITS = [
    ("if len(a{i}) == 0:\n    pass\n", "if not a{i}:\n    pass\n"),
    ("y{i} = len(a or b{i}) == 0\n", "y{i} = not (a or b{i})\n"),
    ("z{i} = [len(q{i}) == 0, len(r) == 0]\n", "z{i} = [not q{i}, not r]\n"),
    ("w{i} = len(x{i} if t else u) == 0\n", "w{i} = not (x{i} if t else u)\n"),
    ("v{i} = len(\n    items{i}\n) == 0\n", "v{i} = not items{i}\n"),
]


def _dense(units: list[tuple[str, str]], count: int) -> tuple[str, str]:
    source: list[str] = []
    expected: list[str] = []
    for i in range(count):
        old, new = units[i % len(units)]
        source.append(old.format(i=i))
        expected.append(new.format(i=i))
    return "".join(source), "".join(expected)


def _check(text: str, want: str, op: tuple[str, str], count: int) -> None:
    result = run(text, op)
    assert result.error is None, result.error
    assert result.skipped == ()
    assert result.new_text == want
    assert len(result.matches) == count
    compile(want, "dense", "exec", dont_inherit=True)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_dense_print_rewrite_is_exact(newline: str) -> None:
    text, want = _dense(PRINT_UNITS, UNITS)
    text, want = text.replace("\n", newline), want.replace("\n", newline)
    _check(text, want, ("print($$$A)", "log($$$A)"), text.count("print("))


def test_dense_rewrite_with_precedence_is_exact() -> None:
    text, want = _dense(LEN_UNITS, UNITS)
    _check(text, want, ("len($X) == 0", "not $X"), text.count("len("))


def test_dense_statement_rewrite_keeps_header_comments() -> None:
    unit = "for k{i} in range(len(s{i})):  # note {i}\n    use(s{i}[k{i}])\n    more()\n"
    new = "for k{i}, _ in enumerate(s{i}):  # note {i}\n    use(s{i}[k{i}])\n    more()\n"
    text, want = _dense([(unit, new)], UNITS)
    _check(
        text,
        want,
        ("for $I in range(len($S)): $$$B", "for $I, _ in enumerate($S): $$$B"),
        UNITS,
    )
