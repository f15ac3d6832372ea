"""The `ast` search finds exactly what the libcst matcher finds (issue 18).

Every pattern is searched twice, once on Python's `ast` (where supported) and once the
libcst way (``fast=False``), over hand-written edge cases and a deterministic sample of
the standard library; the results must be equal field by field.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from redline.tools.ast_edit import compile_ops
from redline.tools.ast_edit.analyze import analyze
from redline.tools.ast_edit.ast_match import node_may_match, pattern_for, search_text

# The benchmark suite's shapes, then patterns of the fidelity tests.
SUITE = [
    "print($$$A)",
    "self.$A.$B($$$C)",
    "$A == None",
    "[$E for $X in $Y]",
    "$A[$B]",
    "$A + $B",
    "lambda $$$A: $B",
    "assert $A, $M",
    "for $I in range(len($S)): $$$B",
    "isinstance($X, $T)",
    "$A.append($B)",
    "len($X) == 0",
    "raise $E from $C",
    "with open($P) as $F: $$$B",
]
FIDELITY = [
    "raise $E",
    "raise",
    "assert $A",
    "assert $X == $Y",
    "raise E from $C",
    "$A + $A",
    "$A + 1",
    "$A - $B",
    "$A == $A",
    "$A and $B",
    "$A.b($$$C)",
    "$A.foo()",
    "$X * 3",
    "$_ + $_",
    "-$A",
    "-$X ** 2",
    "None == $A",
    "[$FIRST, $$$REST]",
    "await $A",
    "dict($$$R, a=$V)",
    "f($$$)",
    "f($A)",
    "f($A, $$$R)",
    "f($A, $B)",
    "f($_, $_)",
    "f('$A')",
    "f(x=1, $$$A)",
    "g(1, $$$R)",
    "g($$$X, $$$X)",
    "lambda $X: $X",
    "lambda: $B",
    "not $A",
    "x[$I]",
    "$A[0]",
    "yield from $A",
    "{'a': $V, $$$R}",
    "{$K: $V for $K2 in $I}",
    "str($A) + 'x'",
    "$A.get($B, None)",
    "$A(1, $$$R)",
    "$A in $B",
    "x[1]",
    "f(0x1)",
    "for $I in $X: $$$B",
    "with $A: $$$B",
    "with $A as $B: $$$C",
    "with $A, $B: $$$C",
    "for $I in range($N): pass",
]
PATTERNS = SUITE + FIDELITY

EDGES = [
    "print(x)\nprint (a, *b, c=1, *d, **e)\nprint()\n",
    "x = f'{print(a)} {d[k]}'\ny = f'{a + b!r:>{width}}'\n",
    "match p:\n    case {'k': 1} if len(a) == 0:\n        print(a[0])\n    case -1 | 1 + 2j:\n        pass\n",
    "x[a,]\nx[(a, b)]\nx[(a), b]\nx[a, b]\nx[1:2]\nx[::2, 1]\nx[()]\n",
    "def f(*a):\n    return x[*a]\n",
    "s = 'é' * 3; print(s[0], 'ü' + t)  # café\nz = self.a.b('ß')\n",
    "a = ((b + c))\nd = (e) + (f)\ng = -(h)\nif (a == None): pass\n",
    "x = lambda: 1\ny = lambda a, *b, c=2, **d: a\nz = lambda x: x\nw = lambda x: y\n",
    "[y for y in z]\n[y for y in z if y]\n[y async for y in z]\n{k: v for k2 in i}\n",
    "f(0x1)\nf(1)\nf('$A')\nf(\"$A\")\nf('x' 'y')\nstr(a) + 'x'\nstr(a) + \"x\"\n",
    "@deco(a[b])\nclass C(Base[T], metaclass=M):\n    x: list[int] = [a + b for a in c]\n",
    "import a.b.c\nfrom x.append import y\nl.append(1)\nself.l.append(m[n])\n",
    "if isinstance(a, b) and isinstance(c, (d, e)):\n    assert len(x) == 0, 'empty'\n",
    "x = 1\r\nprint(x)\r\ny = z[1] + 2\r\n",
    "def g():\n    x = yield from h\n    return (yield from k)\n",
    "a.b(c)(d)[e][f] + g + h\nnot not x\n",
    "{'a': 1, **r}\nd = {**a, 'b': c}\nf(a=1, **kw)\n",
    "print(a\n      , b)  # comment\nprint(\n    # inside\n    c,\n)\n",
    "raise E from C\nraise E\nraise\nraise (E) from (C)  # c\nraise E from C; x = 1\n",
    "if x: raise E(a[0]) from C ; y = 2\ntry:\n    pass\nexcept E as e:\n    raise F(e) from e\n",
    "assert a, 'm'\nassert b\nassert (c,\n        d), (e)\nassert x == None, f'{y[0]}'\n",
    "def f():\n    assert len(a) == 0, a ; assert b, c\n    raise \\\n        E from C\n",
    # What may stand between two tokens that are adjacent in a pattern (the skeleton's gap).
    "if x == (  # none\n        None): pass\nif len(y) == \\\n    0: pass\n",
    "a.\\\n    append(1)\n(b).append((2),)\nc . append ( 3 , )\nself . d.e(f)\n",
    "x = (len(a)) == (0)\ny = a == None == b\nz = None == a\nw = f(0x1, )\n",
    "(self.a.b)(c)\n(print)(x)\nprint \\\n  (y)\nisinstance (a, (b))\n(self.a).b (d[0])\n",
    "for i in range(len(s)):  # c\n    print(i)\n    # after\n\nelse:\n    pass\n"
    "for j in range(len(t)): x = 1; y = 2\nfor (k) in range(len(s)):\n    pass\n"
    "for k, l in range(len(s)): pass;\nasync def g():\n    async for a in range(len(b)): pass\n"
    "for m in range(len(s)):\n    for n in range(len(m)):\n        pass  # inner\n",
    "with open(p) as f:\n    g(f)\nwith open(p) as f, open(q) as h:\n    pass\n"
    "with (open(p) as f):\n    pass\nwith open(p) as (f): x = 1 ; y = 2 ;\n"
    "async def g():\n    async with open(p) as f:\n        pass\nwith open(p):\n    pass\n",
    "with a as b:\n    pass\nwith a as b, c:\n    pass\nwith a, b as (c, d):\n    pass\n",
    "class C:\n    @property\n    def p(self):\n        return self.a.b(c[0])\n\n    x = 1\n",
]
REWRITES = [
    ("for $I in range(len($S)): $$$B", "for $I, _ in enumerate($S): $$$B"),
    ("with open($P) as $F: $$$B", "with open($P, encoding='utf-8') as $F: $$$B"),
    ("print($$$A)", "logger.info($$$A)"),
    ("$A == None", "$A is None"),
    ("$A[$B]", "get($A, $B)"),
    ("$A + $B", "add($A, $B)"),
    ("assert $A, $M", "check($A, $M)"),
    ("len($X) == 0", "not $X"),
    ("raise $E from $C", "raise $E"),
    ("$A.append($B)", "$A += [$B]"),
    ("print($$$A)", ""),
]


def _both(text: str, pattern: str) -> tuple[object, object]:
    ops = compile_ops([(pattern, None)])
    return analyze(text, ops, False, fast=False), analyze(text, ops, False)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_edge_cases_match_the_libcst_way(pattern: str) -> None:
    for text in EDGES:
        slow, fast = _both(text, pattern)
        assert fast == slow, (pattern, text)


@pytest.mark.parametrize(("pattern", "template"), REWRITES)
def test_rewrites_match_the_libcst_way(pattern: str, template: str) -> None:
    ops = compile_ops([(pattern, template)])
    for text in EDGES:
        slow = analyze(text, ops, True, fast=False)
        fast = analyze(text, ops, True)
        assert fast == slow, (pattern, text)


def test_the_suite_shapes_that_take_the_ast_way() -> None:
    supported = {pat for pat in SUITE if pattern_for(pat) is not None}
    assert supported == {
        "print($$$A)",
        "self.$A.$B($$$C)",
        "$A == None",
        "[$E for $X in $Y]",
        "$A[$B]",
        "$A + $B",
        "lambda $$$A: $B",
        "isinstance($X, $T)",
        "$A.append($B)",
        "len($X) == 0",
        "assert $A, $M",
        "raise $E from $C",
        "for $I in range(len($S)): $$$B",
        "with open($P) as $F: $$$B",
    }
    assert pattern_for("for $I in range($N): pass") is None  # a body other than $$$
    # Repeated metavariables compare captures: the libcst way decides.
    assert pattern_for("$A + $A") is None
    assert pattern_for("lambda $X: $X") is None


def test_unsure_files_take_the_libcst_way() -> None:
    inside = "x = f'print(a) {print(a)}'\n"
    assert search_text(inside, [(0, "print($$$A)")]) is None
    assert search_text("x[*a]\n", [(0, "$A[$B]")]) is None
    assert search_text("def f(:\n", [(0, "print($$$A)")]) is None
    result = search_text("x[a, b]\nx[a]\n", [(0, "$A[$B]")])
    assert result is not None and [m.text for m in result.matches] == ["x[a]"]


def test_the_filter_never_drops_a_node_it_cannot_judge() -> None:
    import ast

    tuple_index = ast.parse("x[(a, b)]", mode="eval").body
    assert node_may_match("$A[$B]", tuple_index)
    other_call = ast.parse("g(1)", mode="eval").body
    assert not node_may_match("print($$$A)", other_call)
    assert node_may_match("$A + $A", ast.parse("a + b", mode="eval").body)


def _stdlib_sample(count: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p for p in root.rglob("*.py") if not {"site-packages", "test", "tests"} & set(p.parts)
    )
    step = max(1, len(files) // count)
    return [p for p in files[::step] if p.stat().st_size < 60_000][:count]


def _compare_files(files: list[Path], patterns: list[str]) -> None:
    compiled = [(pat, compile_ops([(pat, None)])) for pat in patterns]
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for pat, ops in compiled:
            slow = analyze(text, ops, False, fast=False)
            fast = analyze(text, ops, False)
            assert fast == slow, (str(path), pat)


@pytest.mark.stress
def test_a_stdlib_sample_matches_the_libcst_way(stress: bool) -> None:
    supported = [pat for pat in PATTERNS if pattern_for(pat) is not None]
    _compare_files(_stdlib_sample(80 if stress else 4), supported)


@pytest.mark.stress
def test_stdlib_rewrites_match_the_libcst_way(stress: bool) -> None:
    compiled = [compile_ops([op]) for op in REWRITES]
    for path in _stdlib_sample(40 if stress else 3):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for ops in compiled:
            assert analyze(text, ops, True) == analyze(text, ops, True, fast=False), (
                str(path),
                ops[0].pat,
            )


def test_anchors_skip_statements_without_changing_the_matches() -> None:
    import ast

    from redline.tools.ast_edit.ast_match import Source, anchor_lines, find_spans

    text = (
        "import os\n"
        "def f(a):\n"
        "    x = 1\n"
        "    if a:\n"
        "        return a.append(2)\n"
        "    return [y for y in a]\n"
        "@deco(b.append(3))\n"
        "def g():\n"
        "    pass\n"
    )
    src = Source(text)
    tree = ast.parse(text)
    for pat in ("$A.append($B)", "[$E for $X in $Y]", "$A[$B]", "print($$$A)"):
        pattern = pattern_for(pat)
        assert pattern is not None
        lines = anchor_lines(src, [pat])
        assert lines is not None
        assert find_spans(tree, src, [(0, pattern)], lines) == find_spans(tree, src, [(0, pattern)])
    assert anchor_lines(src, ["$A.append($B)"]) == [5, 7]
    assert anchor_lines(src, ["[$E for $X in $Y]"]) == [6]
    assert anchor_lines(src, ["$F($$$A)"]) is None  # no token at all: walk everything


def test_token_runs_filter_files_before_parsing(tmp_path: Path) -> None:
    from redline.tools.ast_edit import ResultCache, search
    from redline.tools.ast_edit.skeleton import data_fits, skeleton

    from .helpers import write

    assert [run.literal for run in skeleton("$A == None").runs] == ["None"]
    assert skeleton("$A[$B]").runs == ()
    (call,) = skeleton("self.$A.$B($$$C)").runs  # attribute names and the call's `(` join
    assert call.data.search(b"(self . a).b (x)") and not call.data.search(b"self.a(b)")
    assert skeleton("print($$$A)").runs[0].data.search(b"(print)\\\n  (x)")
    assert skeleton("f(1, *$$$A)").runs[0].data.search(b"f(1)")  # `*` goes with `$$$A`
    assert data_fits(b"if x == (  # c\n  None): pass", "$A == None")
    assert data_fits(b"a.\\\n append(1)", "$A.append($B)")
    assert not data_fits(b"x = None\nif a == b: pass", "$A == None")
    write(tmp_path, "a.py", "if x == None:\n    pass\n")
    write(tmp_path, "b.py", "x = None\nif a == b:\n    pass\ndef broken(:\n")
    report = search(tmp_path, [("$A == None", None)], workers=1, cache=ResultCache())
    assert [(f.path, [m.text for m in f.matches]) for f in report.files] == [
        ("a.py", ["x == None"])
    ]
    assert report.errors == []  # b.py holds `==` and `None`, never `== None`: not parsed


FSTRINGS = [
    "x = f'{print(a)} {d[k]}'\n",
    "x = f'd[k] {d[k]}'\n",
    "x = f'{d[k]} {d[k]} {e[1]}'\n",
    "x = f'''\n{d[k]}\n  {a + b}'''\n",
    "x = (f'{a[0]}'\n     f'{a[0] + 1}')\n",
    "x = f'{f\"{a[1]}\"}'\n",
    "x = f'{a[0]=} {b[1]!r:>{w[2]}}'\n",
    "x = f'é {d[k]}' + f'{ü[1]}'\n",
]


@pytest.mark.parametrize("pattern", ["$A[$B]", "print($$$A)", "$A + $B"])
def test_matches_inside_f_strings_match_the_libcst_way(pattern: str) -> None:
    for text in FSTRINGS:
        slow, fast = _both(text, pattern)
        assert fast == slow, (pattern, text)


def test_tuple_subscripts_are_told_apart() -> None:
    text = "x[(a, b)]\nx[(a), b]\nx[(a), (b)]\nx[(a)]\nx[((a, b))]\n"
    slow, fast = _both(text, "$A[$B]")
    assert fast == slow
    assert search_text(text, [(0, "$A[$B]")]) is not None


def test_operator_tokens_filter_files_before_parsing(tmp_path: Path) -> None:
    from redline.tools.ast_edit import ResultCache, search
    from redline.tools.ast_edit.ast_match import required_symbols

    from .helpers import write

    assert required_symbols("$A == None") == (b"==",)
    assert required_symbols("-$X ** 2") == (b"**", b"-")
    assert required_symbols("$A + $A") == ()  # the libcst way: no promise made
    write(tmp_path, "a.py", "if x == None:\n    pass\n")
    write(tmp_path, "b.py", "x = None\ndef broken(:\n")
    report = search(tmp_path, [("$A == None", None)], workers=1, cache=ResultCache())
    assert [(f.path, [m.text for m in f.matches]) for f in report.files] == [
        ("a.py", ["x == None"])
    ]
    assert report.errors == []  # b.py holds no `==`: never parsed


def test_a_token_run_search_stays_linear_on_long_comments() -> None:
    """The gap between two tokens is possessive: a backtracking one took minutes on a file
    of long comments full of brackets (found by the benchmark)."""
    import threading

    from redline.tools.ast_edit.skeleton import data_fits, text_fits

    text = ("x.  # " + "((( ,,, ))) " * 400 + "\n") * 200
    answers: list[bool] = []
    worker = threading.Thread(
        target=lambda: answers.extend(
            [text_fits(text, "$A.append($B)"), data_fits(text.encode(), "$A.append($B)")]
        )
    )
    worker.start()
    worker.join(timeout=120)  # a hang guard, far above the milliseconds it takes
    assert answers == [False, False]
