"""The pattern language: each metavariable kind, names, and what must be absent."""

from __future__ import annotations

import pytest

from redline.tools.ast_edit import PatternError, compile_ops

from .helpers import matched, rewritten, run


def test_single_metavariable_matches_exactly_one_node() -> None:
    assert matched("f(a)\nf(a, b)\nf()\n", "f($A)") == ["f(a)"]
    assert rewritten("x = f(a + b)\n", "f($A)", "g($A)") == "x = g(a + b)\n"


def test_multi_metavariable_matches_zero_or_more_arguments() -> None:
    text = "print()\nprint(a)\nprint(a, b, *c, sep='', **kw)\n"
    assert matched(text, "print($$$ARGS)") == [
        "print()",
        "print(a)",
        "print(a, b, *c, sep='', **kw)",
    ]
    assert rewritten(text, "print($$$ARGS)", "log($$$ARGS)") == (
        "log()\nlog(a)\nlog(a, b, *c, sep='', **kw)\n"
    )


def test_multi_metavariable_after_keyword_arguments_and_in_dicts() -> None:
    assert rewritten("f(x=1, *rest)\nf(x=1)\n", "f(x=1, $$$A)", "g($$$A)") == "g(*rest)\ng()\n"
    assert rewritten("d = {'a': 1, **more}\n", "{'a': $V, $$$R}", "dict($$$R, a=$V)") == (
        "d = dict(**more, a=1)\n"
    )


def test_multi_metavariable_in_elements_parameters_and_statements() -> None:
    assert matched("x = [1, 2, 3]\n", "[$FIRST, $$$REST]") == ["[1, 2, 3]"]
    assert rewritten("x = [1, 2, 3]\n", "[$FIRST, $$$REST]", "[$$$REST, $FIRST]") == (
        "x = [2, 3, 1]\n"
    )
    code = "def f(a, /, b, *args, c=1, **kw):\n    return a\n"
    assert matched(code, "def $F($$$P): $$$BODY") == [code.rstrip("\n")]
    assert rewritten(code, "def $F($$$P):\n    $$$BODY", "async def $F($$$P):\n    $$$BODY") == (
        "async " + code
    )


def test_anonymous_metavariables_match_without_capturing() -> None:
    assert matched("f(1, 2)\nf(1, 2, 3)\n", "f($_, $_)") == ["f(1, 2)"]
    assert matched("f()\nf(1, 2)\n", "f($$$)") == ["f()", "f(1, 2)"]
    # Two `$_` need not be equal, unlike a named metavariable used twice.
    assert matched("x = a + b\n", "$_ + $_") == ["a + b"]
    assert matched("x = a + b\n", "$A + $A") == []


def test_repeated_names_must_bind_equal_code_under_the_same_rules() -> None:
    text = "x = f(a,b) == f(a, b)\ny = f(a) == f(b)\nz = f( a ) == (f(a))\n"
    assert matched(text, "$A == $A") == ["f(a,b) == f(a, b)", "f( a ) == (f(a))"]
    assert matched("g(a, b, a, b)\ng(a, b, b, a)\n", "g($$$X, $$$X)") == ["g(a, b, a, b)"]


def test_a_part_the_pattern_leaves_out_must_be_absent() -> None:
    assert matched('assert a == b, "msg"\nassert c == d\n', "assert $X == $Y") == ["assert c == d"]
    assert matched("@dec\ndef f():\n    pass\ndef g():\n    pass\n", "def $F(): $$$B") == [
        "def g():\n    pass"
    ]
    assert matched("f(a, key=1)\n", "f($A)") == []
    assert matched("x[a,]\nx[a]\n", "x[$I]") == ["x[a]"]


def test_single_metavariable_as_a_list_item_takes_any_one_item() -> None:
    assert matched("f(key=1)\nf(*args)\n", "f($A)") == ["f(key=1)", "f(*args)"]
    assert rewritten("f(key=1)\n", "f($A)", "g(1, $A)") == "g(1, key=1)\n"


def test_statement_patterns_match_runs_of_statements() -> None:
    text = "def f():\n    a = 1\n    b = 2\n    c = 3\n"
    assert matched(text, "a = $X\nb = $Y") == ["a = 1\n    b = 2"]
    assert rewritten(text, "a = $X\nb = $Y", "a, b = $X, $Y") == (
        "def f():\n    a, b = 1, 2\n    c = 3\n"
    )
    # `a; b` on one line is the same run of statements.
    assert matched("a = 1; b = 2\n", "a = $X\nb = $Y") == ["a = 1; b = 2"]


def test_dollar_inside_string_literals_is_literal() -> None:
    assert matched("f('$A')\nf('x')\n", "f('$A')") == ["f('$A')"]


def test_names_must_be_upper_case() -> None:
    with pytest.raises(PatternError, match=r"\$lower is not a valid name"):
        compile_ops([("f($lower)", None)])
    with pytest.raises(PatternError, match="must start a metavariable"):
        compile_ops([("f($)", None)])


@pytest.mark.parametrize(
    ("pat", "out", "message"),
    [
        ("print($$$A", None, "is not valid Python once its metavariables are replaced"),
        ("f($A)", "g(", "is not valid Python once its metavariables are replaced"),
        ("f($A)", "g($B)", "uses $B, but the pattern does not bind it"),
        ("f($A)", "g($_)", "captures nothing"),
        ("f($$$A)", "g($A)", "uses $A, but the pattern binds $$$A"),
        ("f($A, $$$A)", None, "uses both $A and $$$A"),
        ("$$$A + 1", None, "can only stand for items of a list"),
        ("   ", None, "is empty"),
        ("# only a comment", None, "has no code"),
        ("$$$A", None, "can only stand for items of a list"),
    ],
)
def test_invalid_patterns_and_templates_are_rejected_clearly(
    pat: str, out: str | None, message: str
) -> None:
    with pytest.raises(PatternError) as caught:
        compile_ops([(pat, out)])
    assert message in str(caught.value)
    assert "operation 1" in str(caught.value)


def test_second_operation_is_named_in_its_error() -> None:
    with pytest.raises(PatternError, match="operation 2: rewrite"):
        compile_ops([("f($A)", "g($A)"), ("h($A)", "k($B)")])


def test_no_operations_is_an_error() -> None:
    with pytest.raises(PatternError, match="no operations"):
        compile_ops([])


def test_unparsable_text_is_an_error_result_not_an_exception() -> None:
    result = run("print('x')\nprint 'x'\n", ("print($$$A)", "log($$$A)"))
    assert result.error_kind == "parse"
    assert "does not parse" in (result.error or "")


def test_text_that_cannot_match_is_not_parsed() -> None:
    # No `print(` anywhere: the file cannot hold a match, so its syntax is never checked
    # (as for a file without the pattern's words).
    result = run("print 'x'\n", ("print($$$A)", "log($$$A)"))
    assert result.error is None and result.matches == ()
