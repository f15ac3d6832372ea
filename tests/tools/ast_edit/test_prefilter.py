"""The structural prefilter (node kind, operator, names) never changes a match set."""

from __future__ import annotations

import ast

import pytest

from redline.tools.ast_edit import analyze_cst as analyze_module
from redline.tools.ast_edit.ops import CompiledOp

from .helpers import matched

CODE = """\
import a.b
from a.b import c
x = f(key=1) + f(*args) + f(a)
y = self.a.b(1, k=2) + self.a.b + other.a.b()
z = [i for i in j] + [i for i in j if i]
if v == None or v != None or None == v:
    print(x, sep='')
w = q[1] + q[1,] + q[a:b] + list[int]
u = not True and -1 and a @ b and a - b and a // b
async def g():
    await h(x)
    yield from k
    return (yield m)
"""

PATTERNS = [
    "f($A)",
    "f($$$A)",
    "self.$A.$B($$$C)",
    "$A.b",
    "$A.b($$$C)",
    "$A == None",
    "None == $A",
    "[$E for $X in $Y]",
    "$A[$B]",
    "$A + $B",
    "$A - $B",
    "-$A",
    "not $A",
    "$A and $B",
    "print($$$A)",
    "h($X)",
    "yield from $A",
    "yield $A",
    "await $A",
    "True",
]


def _no_prefilter(
    tree: ast.Module, starts: list[int], ops: list[CompiledOp]
) -> dict[str, list[int]]:
    every = starts[:-1] or [0]
    return {analyze_module._kind_key(op): every for op in ops}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_prefilter_keeps_every_match(pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with_filter = matched(CODE, pattern)
    monkeypatch.setattr(analyze_module, "_kind_offsets", _no_prefilter)
    assert matched(CODE, pattern) == with_filter


def test_the_prefilter_finds_what_it_should() -> None:
    assert matched(CODE, "$A == None") == ["v == None"]
    assert matched(CODE, "self.$A.$B($$$C)") == ["self.a.b(1, k=2)"]
    assert matched(CODE, "f($A)") == ["f(key=1)", "f(*args)", "f(a)"]


def test_line_starts_agree_with_pythons_line_breaks() -> None:
    """The fast way for text without "\\r" gives what the regex over every break gives."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from redline.tools.ast_edit.locate import line_starts

    def by_regex(text: str) -> list[int]:
        starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]
        return starts if starts[-1] == len(text) else [*starts, len(text)]

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="ab\n\r é", max_size=40))
    def check(text: str) -> None:
        assert line_starts(text) == by_regex(text)

    check()


# A keyword right after a number is still a keyword (`1if` parses, with a warning).
GLUED = "x = 1if y else 2\n"


def test_a_keyword_glued_to_a_number_still_matches() -> None:
    from redline.tools.ast_edit.ast_match import bytes_may_match
    from redline.tools.ast_edit.locate import bytes_have_words, word_regex

    assert matched("x = 1if y else 2\n", "$A if $B else $C") == ["1if y else 2"]
    assert matched("x = 1if y else 2\n", "$A if $B else 2") == ["1if y else 2"]
    assert bytes_may_match(b"x = 1if y else 2\n", "$A if $B else $C")
    assert bytes_have_words(b"x = 1.5jif y else 2\n", ["if", "else"])
    assert word_regex("if").search("0xFFif y")
    # Letters that cannot end a number still make one word: no false "if" in "elif"/"gif".
    assert not word_regex("if").search("elif gif _if")
    assert not bytes_have_words(b"elif gif _if", ["if"])
    # A name is never glued to a number (`1abc` does not parse): the edge stays strict.
    assert not word_regex("abc").search("1abc")


def test_parsing_a_users_file_prints_no_warning() -> None:
    import ast
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        assert matched(GLUED + "s = '\\d'\n", "$A if $B else $C") == ["1if y else 2"]
        quiet = [str(w.message) for w in caught]
        ast.parse("x = 1if y else 2\n", filename="<control>")  # the warning that was hidden
    assert quiet == []
    assert any(issubclass(w.category, SyntaxWarning) for w in caught)
