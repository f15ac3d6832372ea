"""A rewrite whose template is a plain expression compiles without libcst (issue 44), and
refuses exactly what the libcst compile refuses, with the same message and exit status."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

import libcst as cst
import pytest

from redline.cli import main
from redline.tools.ast_edit import PatternError, compile_ops, ops
from redline.tools.ast_edit.analyze import analyze
from redline.tools.ast_edit.ops import CompiledOp
from redline.tools.ast_edit.pattern import CompiledTemplate, compile_op
from redline.tools.ast_edit.plain_template import plain_expression

from .helpers import write

PATTERNS = [
    "$A == None",
    "print($$$A)",
    "$A + $B",
    "isinstance($X, $T)",
    "self.$A.$B($$$C)",
    "$X = $Y",  # not the `ast` search's: libcst both ways
]

TEMPLATES = [
    # accepted by the libcst compile (for some of the patterns above)
    "$A is None",
    "$A is not None",
    "not $A",
    "$B + $A",
    "($A + $B) * 2",
    "$A if $A is not None else 0",
    "logger.info($$$A)",
    "f(*$$$A)",
    "f(1, $$$A, x=2)",
    "f($$$A, sep='')",
    "f(**$$$A)",
    "[$$$A]",
    "{$$$A}",
    "($$$A,)",
    "{'k': $A}",
    "{**$A}",
    "[x for x in $A if x]",
    "{k: v for k, v in $A}",
    "(x async for x in $A)",
    "sum(x for x in $A)",
    "$A[1:2, ::3]",
    "$A[*$B]",
    "$X.$A",
    "type($X) is $T",
    "match($X)",
    "None($$$A)",
    "True.real",
    "log ($$$A)",
    "x.log($$$A).y",
    "print($A)",
    "_($X)",
    "isinstance($X, $T) and $X",
    "r'\\d' + $A",
    "'\\N{EM DASH}'.join($$$A)",
    "b'x' 'y'",
    "0x1F + 1_000 + 1j + 1.5e3 + ...",
    "f'{$A}'",
    "f'{x}' + $A",
    "lambda: $A",
    "(x := $A)",
    "await $A",
    "yield $A",
    "$A  # why",
    "($A +\n $B)",
    "'é' + $A",
    "$A;",
    "return $A",
    "pass",
    "if $A:\n    pass",
    "f(x=1, $$$A)",
    "",
    "   ",
    "None",
    "$$$A",
    "$A",
    "print $A",
    "0777",
    # refused
    "$B is None",
    "$$$A is None",
    "$A($$$B)",
    "$_",
    "$$$",
    "$a is None",
    "$ + 1",
    "$A is",
    "$A +",
    "f(",
    "x.if",
    "$A <> None",
    "f(a for a in b, c)",
    "f(**$A, *$A)",
    "\x00$A",
    "1 +* 2",
    "None = $A",
]


def _outcome(compile_: object) -> str:
    try:
        compile_()  # type: ignore[operator]
    except PatternError as exc:
        return f"error: {exc}"
    return "ok"


def _slots(template: CompiledTemplate) -> list[tuple[object, ...]]:
    return [
        (s.start, s.end, s.name, s.multi, type(s.parent), s.field, s.line_indent, s.own_line)
        for s in template.slots
    ]


def _compare(pat: str, out: str) -> None:
    light = _outcome(lambda: compile_ops([(pat, out)]))
    full = _outcome(lambda: compile_op(0, pat, out))
    assert light == full
    prefix = "--pattern #2: "
    light = _outcome(lambda: compile_ops([("x", None), (pat, out)], where=lambda i: prefix))
    full = _outcome(lambda: compile_op(1, pat, out, prefix))
    assert light == full
    if light != "ok":
        return
    (op,) = compile_ops([(pat, out)])
    template = compile_op(0, pat, out)[1]
    assert template is not None
    rendering = op.rendering  # compiled on first use: the same template
    assert (rendering.source, rendering.text) == (template.source, template.text)
    assert _slots(rendering) == _slots(template)
    assert rendering.string_lines == template.string_lines
    assert (rendering.root is None) == (template.root is None)
    if rendering.root is not None and template.root is not None:
        assert rendering.root.deep_equals(template.root)


@pytest.mark.parametrize("pat", PATTERNS)
def test_the_light_compile_refuses_what_the_libcst_compile_refuses(pat: str) -> None:
    """Every template with ``pat``: the same outcome, message and template both ways (one
    test per pattern, the templates in a loop: hundreds of tiny cases cost more in the
    suite's per-test set-up than in the comparing)."""
    mismatched: list[tuple[str, str]] = []
    for out in TEMPLATES:
        try:
            _compare(pat, out)
        except AssertionError as exc:
            mismatched.append((out, str(exc)))
    assert mismatched == []


def test_plain_templates_skip_libcst_and_others_do_not() -> None:
    (plain,) = compile_ops([("$A == None", "$A is None")])
    assert plain.template is None and plain.compiled is None and plain.rewrites
    (empty,) = compile_ops([("$A == None", "")])
    assert empty.template is None and empty.rendering.text == ""
    for out in ("lambda: $A", "f'{x}' + $A", "return $A", "$A  # why"):
        (op,) = compile_ops([("$A == None", out)])
        assert op.template is not None, out
    (statement,) = compile_ops([("$X = $Y", "$Y = $X")])  # not the `ast` search's pattern
    assert statement.template is not None and statement.compiled is not None


@pytest.mark.parametrize("out", ["$B is None", "$A is", "f(x=1, $$$A)", "$A is None"])
def test_the_command_fails_as_before(
    out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "a.py", "x = y == None\nprint(x)\n")
    argv = ["ast-edit", "-C", str(tmp_path), "--pattern", "$A == None", "--rewrite", out]
    light = main(argv)
    light_out = capsys.readouterr()
    monkeypatch.setattr(ops, "_plain_rewrite", lambda index, spec, prefix: None)
    full = main(argv)
    full_out = capsys.readouterr()
    assert (light, light_out.out, light_out.err) == (full, full_out.out, full_out.err)


REWRITE_TEXTS = [
    "x = y == None\nif (a.b\n    == None):  # c\n    pass\n",
    "z = [q == None for q in r]\nw = (a == None) == None\n",
    "f(a == None, b)\nassert (\n    a  # why\n) == None\n",
    "x = a + b == None\ny = not a == None\n",
    "x = f'{a == None}'\n",
]


@pytest.mark.parametrize("out", ["$A is None", "not $A", "($A, None)", "g($A) or 0", ""])
def test_a_plain_rewrite_rewrites_as_before(out: str) -> None:
    pat = "$A == None"
    (light,) = compile_ops([(pat, out)])
    pattern, template = compile_op(0, pat, out)
    full = CompiledOp(0, pat, out, pattern.source, pattern.words, template, pattern)
    assert light.template is None and full.template is not None
    for text in REWRITE_TEXTS:
        assert analyze(text, [light], True) == analyze(text, [full], True)


def _expressions(path: Path) -> list[str]:
    """The file's one-line expressions, as written."""
    text = path.read_text(encoding="utf-8")
    lines = text.encode("utf-8").split(b"\n")
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.expr) and node.lineno == node.end_lineno:
            line = lines[node.lineno - 1]
            found.append(line[node.col_offset : node.end_col_offset].decode("utf-8"))
    return found


def test_every_plain_expression_of_standard_library_files_parses_in_libcst() -> None:
    # The soundness the light compile rests on: what it calls plain, libcst parses (on
    # the whole standard library, 168,102 distinct plain expressions: all parsed).
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    names = ["argparse.py", "dataclasses.py", "typing.py", "inspect.py", "string.py"]
    plain = 0
    for name in names:
        for text in _expressions(stdlib / name):
            if plain_expression(text):
                plain += 1
                cst.parse_expression(text)  # raises if not
    assert plain > 5_000
