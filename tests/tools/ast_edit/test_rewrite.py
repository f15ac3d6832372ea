"""Rewriting: original capture text, re-indentation, parentheses, untouched surroundings."""

from __future__ import annotations

from .helpers import matched, rewritten, run


def test_formatting_never_stops_a_match() -> None:
    text = (
        "print ( x )\n"
        "print(\n"
        "    a,  # first\n"
        "    # between\n"
        "    b,\n"
        ")\n"
        "print((y))\n"
        "if c: print(z)\n"
    )
    assert len(matched(text, "print($$$A)")) == 4
    assert matched("x = (a)+(b)\n", "$X + $Y") == ["(a)+(b)"]
    assert matched("f(a, b,)\n", "f(a, b)") == ["f(a, b,)"]
    assert matched("f(a, b)\n", "f(a, b,)") == ["f(a, b)"]
    # One-line suites and indented blocks are the same body.
    assert matched("if a: b()\n", "if $C:\n    $$$B") == ["if a: b()"]


def test_comments_and_layout_inside_captures_are_kept() -> None:
    text = "print(a,  # why a\n      b)\n"
    assert rewritten(text, "print($$$A)", "log($$$A)") == "log(a,  # why a\n      b)\n"
    text = "if x:\n    print(  # lead\n        a,\n        b,  # trail\n    )\n"
    assert rewritten(text, "print($$$A)", "logger.info($$$A)") == (
        "if x:\n    logger.info(  # lead\n        a,\n        b,  # trail\n    )\n"
    )


def test_code_outside_matches_is_byte_for_byte_untouched() -> None:
    text = (
        "# odd   formatting\r\n"
        "x  =  [1,2 ,3]   \r\n"
        "def f( a ):\r\n"
        "\treturn  print( a )  # tab-indented\r\n"
        "y = 'print(x)'  \r\n"
    )
    result = rewritten(text, "print($A)", "log($A)")
    assert result == text.replace("print( a )", "log(a)")
    assert "\r\n" in result and "\n" not in result.replace("\r\n", "")


def test_statement_moved_out_of_a_block_is_dedented() -> None:
    text = "def f():\n    with lock:\n        do(1)\n        if y:\n            do(2)\n    z = 1\n"
    assert rewritten(text, "with $L:\n    $$$B", "$$$B") == (
        "def f():\n    do(1)\n    if y:\n        do(2)\n    z = 1\n"
    )


def test_statements_moved_into_a_block_are_indented() -> None:
    text = "def f():\n    do(1)\n    x = [\n        1,\n        2,\n    ]\n"
    assert rewritten(text, "do(1)\nx = $V", "if ok:\n    do(1)\n    x = $V") == (
        "def f():\n    if ok:\n        do(1)\n        x = [\n            1,\n            2,\n"
        "        ]\n"
    )


def test_multiline_strings_are_never_reindented() -> None:
    text = 'def g():\n    x = f("""a\n  b""",\n          2)\n'
    assert rewritten(text, "x = f($$$A)", "if t:\n    x = f($$$A)") == (
        'def g():\n    if t:\n        x = f("""a\n  b""",\n              2)\n'
    )


def test_parentheses_are_added_where_precedence_requires() -> None:
    assert rewritten("y = foo(a + b)\n", "foo($X)", "$X * 3") == "y = (a + b) * 3\n"
    assert rewritten("y = foo(a * b)\n", "foo($X)", "$X + 3") == "y = a * b + 3\n"
    assert rewritten("y = a.foo() * 2\n", "$A.foo()", "$A + 1") == "y = (a + 1) * 2\n"
    assert rewritten("y = f(x)\n", "f($X)", "-$X ** 2") == "y = -x ** 2\n"
    assert rewritten("y = f(a if b else c)\n", "f($X)", "$X.real") == ("y = (a if b else c).real\n")
    assert rewritten("y = f(lambda: 1)\n", "f($X)", "g($X)") == "y = g(lambda: 1)\n"
    assert rewritten("f(x for x in y)\n", "f($X)", "g($X, 1)") == "g((x for x in y), 1)\n"
    assert rewritten("y = f(a, b)\n", "f($A, $B)", "$A - $B") == "y = a - b\n"
    assert rewritten("y = f(a - b, c)\n", "f($A, $B)", "$B - $A") == "y = c - (a - b)\n"
    # Parentheses already in the code stay and are not doubled.
    assert rewritten("y = (a.foo()) * 2\n", "$A.foo()", "$A + 1") == "y = (a + 1) * 2\n"


def test_nested_matches_rewrite_the_outermost_only() -> None:
    assert rewritten("f(f(f(1)))\n", "f($X)", "h($X)") == "h(f(f(1)))\n"
    result = run("f(f(1))\nf(2)\n", ("f($X)", "h($X)"))
    assert [m.text for m in result.matches] == ["f(f(1))", "f(2)"]


def test_operations_all_match_the_original_text() -> None:
    result = run("a\nb\n", ("a", "b"), ("b", "c"))
    assert result.new_text == "b\nc\n"
    assert [(m.op, m.text, m.replacement) for m in result.matches] == [
        (0, "a", "b"),
        (1, "b", "c"),
    ]


def test_overlapping_operations_leave_the_file_out_naming_both() -> None:
    result = run("f(g(1))\n", ("f($X)", "h($X)"), ("g($X)", "k($X)"))
    assert result.error_kind == "overlap"
    assert result.new_text is None
    assert "operation 1 ('f($X)')" in (result.error or "")
    assert "operation 2 ('g($X)')" in (result.error or "")
    assert "line 1" in (result.error or "")


def test_empty_list_capture_takes_its_comma_with_it() -> None:
    # f(a) rewrites to itself: no replacement at all.
    assert run("f(a)\n", ("f($A, $$$R)", "f($$$R, $A)")).matches == ()
    assert rewritten("f(a, b)\n", "f($A, $$$R)", "f($$$R, $A)") == "f(b, a)\n"
    assert rewritten("f(a)\n", "f($$$R)", "g(1, $$$R)") == "g(1, a)\n"
    assert rewritten("f()\n", "f($$$R)", "g(1, $$$R)") == "g(1)\n"


def test_empty_template_deletes_the_whole_line() -> None:
    text = "if a:\n    print(x)\n    y = 1\n"
    assert rewritten(text, "print($$$A)", "") == "if a:\n    y = 1\n"


def test_rewrite_that_would_not_parse_leaves_the_file_out() -> None:
    result = run("del x.foo\n", ("$A.foo", "$A + 1"))
    assert result.error_kind == "rewrite"
    assert "would not parse" in (result.error or "")
    assert result.new_text is None


def test_decorators_are_part_of_a_statement_match() -> None:
    text = "@dec\ndef f(a):\n    return a\n"
    assert rewritten(
        text, "@$D\ndef $F($$$P):\n    return $R", "@$D\n@other\ndef $F($$$P):\n    return $R"
    ) == ("@dec\n@other\ndef f(a):\n    return a\n")


def test_matches_report_lines_and_columns() -> None:
    result = run("x = 1\nif a:\n    print(\n        b)\n", ("print($$$A)", None), rewrite=False)
    (match,) = result.matches
    assert (match.start_line, match.start_column, match.end_line, match.end_column) == (
        3,
        4,
        4,
        10,
    )
    assert match.replacement is None


def test_deleting_every_statement_of_a_block_writes_pass() -> None:
    assert rewritten("if a:\n    print(x)\nz = 1\n", "print($$$A)", "") == (
        "if a:\n    pass\nz = 1\n"
    )
    text = "def f():\n    print(1)\n    print(2)\n\nclass C:\n    print(3)  # c\nfor i in x: print(i)\n"
    assert rewritten(text, "print($$$A)", "") == (
        "def f():\n    pass\n\nclass C:\n    pass  # c\nfor i in x: pass\n"
    )
    # Other statements left in the block: the lines simply go.
    assert rewritten("if a:\n    print(x)\n    y = 1\n", "print($$$A)", "") == "if a:\n    y = 1\n"
    # Statement patterns too; the module itself may become empty.
    assert rewritten("try:\n    a = 1\nexcept E:\n    a = 1\n", "a = 1", "") == (
        "try:\n    pass\nexcept E:\n    pass\n"
    )
    assert rewritten("print(1)\n", "print($$$A)", "") == ""


def test_a_match_that_cannot_be_rewritten_is_left_and_reported() -> None:
    text = "def f():\n    del y.foo\n    return y.foo\n"
    result = run(text, ("$A.foo", "$A + 1"))
    assert result.error is None
    assert result.new_text == "def f():\n    del y.foo\n    return y + 1\n"
    assert result.skipped == (
        "line 2: left unchanged, the rewrite would not parse: does not parse: "
        "cannot delete expression (line 2)",
    )


def test_parse_errors_of_rewritten_statements_name_the_file_line() -> None:
    result = run("x = 1\n\n\ndef f():\n    del y.foo\n", ("$A.foo", "$A + 1"))
    assert result.error_kind == "rewrite"
    assert "(line 5)" in (result.error or "")


def test_searching_lists_nested_matches_too() -> None:
    assert matched("f(f(1))\n", "f($X)") == ["f(f(1))", "f(1)"]
    text = "if a:\n    if b:\n        pass\n"
    assert matched(text, "if $C: $$$B") == [text.rstrip("\n"), "if b:\n        pass"]


def test_spots_libcst_does_not_reproduce_still_rewrite_exactly() -> None:
    # libcst regenerates `except E :` without the space; offsets must still line up.
    text = "try:\n    pass\nexcept OSError :\n    pass\nif a:\n    print(x)\n"
    assert rewritten(text, "print($A)", "log($A)") == text.replace("print(x)", "log(x)")
    assert matched(text, "if $C: $$$B") == ["if a:\n    print(x)"]


def test_a_body_of_several_lines_never_leaves_a_one_line_suite() -> None:
    text = "class A:\n    def f(self):\n        a = 1\n        return a\n"
    assert rewritten(text, "def $F($$$P): $$$B", "def $F($$$P) -> None: $$$B") == (
        "class A:\n    def f(self) -> None:\n        a = 1\n        return a\n"
    )
    assert rewritten("def f():\n    pass\n", "def $F(): $$$B", "def $F() -> None: $$$B") == (
        "def f() -> None: pass\n"
    )


def test_multiline_import_lists_keep_their_parentheses() -> None:
    assert rewritten("from a import (b,\n    c)\n", "from a import $$$N", "from z import $$$N") == (
        "from z import (b,\n    c)\n"
    )
