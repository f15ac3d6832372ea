"""The matching bugs and rewrite gaps found side by side with ast-grep (issue 18)."""

from __future__ import annotations

from .helpers import matched, rewritten, run


def test_an_assert_match_spans_its_message() -> None:
    text = 'assert a, "m"\nassert b\n'
    assert matched(text, "assert $A, $M") == ['assert a, "m"']
    assert rewritten(text, "assert $A, $M", "check($A, $M)") == 'check(a, "m")\nassert b\n'
    assert rewritten(text, "assert $A, $M", "if not $A:\n    raise E($M)") == (
        'if not a:\n    raise E("m")\nassert b\n'
    )


def test_a_metavariable_bound_as_a_parameter_equals_the_same_name() -> None:
    text = "f = lambda x: x\ng = lambda x: y\nh = lambda x=1: x\n"
    assert matched(text, "lambda $X: $X") == ["lambda x: x"]
    code = "def f(x): return x\ndef g(x): return y\n"
    assert matched(code, "def $F($X): return $X") == ["def f(x): return x"]


def test_yield_patterns_are_expressions() -> None:
    text = "def f():\n    x = yield from g\n    return (yield from h)\n    yield from k\n"
    assert matched(text, "yield from $A") == ["yield from g", "yield from h", "yield from k"]
    assert matched("def f():\n    x = yield g\n    yield\n", "yield $A") == ["yield g"]
    assert rewritten(text, "yield from $A", "yield from wrap($A)") == (
        "def f():\n    x = yield from wrap(g)\n    return (yield from wrap(h))\n"
        "    yield from wrap(k)\n"
    )


def test_import_patterns_match_relative_imports_and_star() -> None:
    text = "from . import x\nfrom ..a import b, c\nfrom e import *\nfrom d import e\n"
    assert matched(text, "from $M import $$$N") == text.rstrip("\n").split("\n")
    assert rewritten(text, "from $M import $$$N", "from $M import ($$$N)") == (
        "from . import (x)\nfrom ..a import (b, c)\nfrom e import *\nfrom d import (e)\n"
    )
    # A relative import has no plain module name: `from a import $$$N` is not `from .a`.
    assert matched(text, "from a import $$$N") == []
    assert matched(text, "from . import $$$N") == ["from . import x"]


def test_the_star_import_that_cannot_be_rewritten_is_reported() -> None:
    result = run(
        "from e import *\nfrom d import e\n", ("from $M import $$$N", "from $M import ($$$N)")
    )
    assert result.new_text == "from e import *\nfrom d import (e)\n"
    assert len(result.skipped) == 1 and result.skipped[0].startswith("line 1: left unchanged")


def test_a_rewrite_keeps_the_comment_after_a_block_header() -> None:
    pat = "for $I in range(len($S)): $$$B"
    text = "def g():\n    for i in range(len(s)):  # note\n        print(s[i])\n"
    assert rewritten(text, pat, "for $I, _ in enumerate($S): $$$B") == (
        "def g():\n    for i, _ in enumerate(s):  # note\n        print(s[i])\n"
    )
    text = "for i in range(len(s)):  # note\n    # more\n    print(s[i])\n    x = 1\n"
    assert rewritten(text, pat, "for $I, _ in enumerate($S):\n    $$$B") == (
        "for i, _ in enumerate(s):\n    # note\n    # more\n    print(s[i])\n    x = 1\n"
    )
