"""Issue 27: a search pays for no more than it needs.

libcst is imported only when a rewrite is produced (or a file needs the libcst way to be
sure), the process pool only for large jobs, and the libcst-free compile of a search
accepts and refuses exactly what the libcst compile does.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from redline.tools.ast_edit import PatternError, compile_ops, engine, search
from redline.tools.ast_edit.ops import CompiledOp
from redline.tools.ast_edit.pattern import compile_op

from .helpers import write

# Runs the CLI in a fresh interpreter, then prints its exit status and which of the
# heavy modules it loaded.
_PROBE = """
import sys
from redline.cli import main
status = main(sys.argv[1:])
sys.stdout.flush()
heavy = ("libcst", "pydantic", "multiprocessing", "concurrent.futures", "redline.workspace.preview")
print("STATUS", status, "LOADED", ",".join(m for m in heavy if m in sys.modules) or "-")
"""


def _probe(root: Path, *argv: str) -> tuple[list[str], str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, "ast-edit", "-C", str(root), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    lines = proc.stdout.splitlines()
    assert lines and lines[-1].startswith("STATUS"), proc.stdout + proc.stderr
    return lines[:-1], lines[-1]


def _project(root: Path) -> None:
    write(root, "a.py", "print(1)\nx = a + b\n")
    write(root, "pkg/b.py", "def f(items):\n    return items[0] + len(items)\n")


def test_a_search_imports_neither_libcst_nor_the_pool(tmp_path: Path) -> None:
    _project(tmp_path)
    out, status = _probe(tmp_path, "--pattern", "print($$$A)", "--pattern", "$A + $B", ".")
    assert status == "STATUS 0 LOADED -"
    assert out == [
        "a.py:1:1: print(1)",
        "a.py:2:5: a + b",
        "pkg/b.py:2:12: items[0] + len(items)",
        "3 matches in 2 files (2 files searched)",
    ]


def test_an_empty_folder_imports_nothing_heavy(tmp_path: Path) -> None:
    out, status = _probe(tmp_path, "--pattern", "isinstance($X, $T)", ".")
    assert status == "STATUS 1 LOADED -"
    assert out == ["0 matches in 0 files (0 files searched)"]


def test_a_rewrite_imports_libcst(tmp_path: Path) -> None:
    # The probe can tell: a rewrite needs libcst, and the search above did not load it.
    _project(tmp_path)
    out, status = _probe(tmp_path, "--pattern", "$A + $B", "--rewrite", "$B + $A", ".")
    assert status.startswith("STATUS 0 LOADED libcst")
    assert "+x = b + a" in out


def test_renaming_a_call_imports_no_libcst(tmp_path: Path) -> None:
    # `F($$$A)` into `G($$$A)` is spliced from the `ast` search's spans (ast_splice.py).
    _project(tmp_path)
    out, status = _probe(tmp_path, "--pattern", "print($$$A)", "--rewrite", "log($$$A)", ".")
    assert status.startswith("STATUS 0 LOADED") and "libcst" not in status
    assert "+log(1)" in out


def test_renaming_a_call_the_ast_way_is_unsure_of_goes_the_libcst_way(tmp_path: Path) -> None:
    write(tmp_path, "f.py", 'x = f"{print(1)} {print(1)}"\n')
    out, status = _probe(tmp_path, "--pattern", "print($$$A)", "--rewrite", "log($$$A)", ".")
    assert '+x = f"{log(1)} {log(1)}"' in out
    if sys.version_info < (3, 12):
        assert "libcst" in status


def test_a_plain_rewrite_without_a_match_imports_no_libcst(tmp_path: Path) -> None:
    # `$A is None` is a plain expression (plain_template.py): checked without libcst,
    # compiled with it only when a file has a match to rewrite.
    _project(tmp_path)
    out, status = _probe(tmp_path, "--pattern", "$A == None", "--rewrite", "$A is None", ".")
    assert status == "STATUS 1 LOADED -"
    assert out == ["0 replacements in 0 files (2 files searched)"]
    write(tmp_path, "c.py", "x = y == None\n")
    out, status = _probe(tmp_path, "--pattern", "$A == None", "--rewrite", "$A is None", ".")
    assert status.startswith("STATUS 0 LOADED libcst")
    assert "+x = y is None" in out


def test_a_file_the_ast_way_is_unsure_of_goes_the_libcst_way(tmp_path: Path) -> None:
    # The same call twice in one f-string: `ast` (before 3.12) may place the second
    # where the first is, so libcst decides; the answer is the same as before.
    write(tmp_path, "f.py", 'x = f"{print(1)} {print(1)}"\n')
    out, status = _probe(tmp_path, "--pattern", "print($$$A)", ".")
    assert out == [
        "f.py:1:8: print(1)",
        "f.py:1:19: print(1)",
        "1 match in 1 file (1 file searched)".replace("1 match", "2 matches"),
    ]
    if sys.version_info < (3, 12):
        assert "libcst" in status


SEARCH_PATTERNS = [
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
    "f(*$$$A)",
    "f(**$$$A)",
    "f($A, key=1)",
    "-$A",
    "not $A",
    "{$K: $V for $K in $S}",
    "$A if $B else $C",
    "$X = $Y",
    "foo",
    "x.$A",
]


@pytest.mark.parametrize("pat", SEARCH_PATTERNS)
def test_the_light_compile_agrees_with_the_libcst_compile(pat: str) -> None:
    (op,) = compile_ops([(pat, None)])
    pattern, template = compile_op(0, pat, None)
    assert template is None
    assert (op.source, op.words) == (pattern.source, pattern.words)
    lazy = op.pattern  # the libcst pattern compiled on first use: the same one
    assert (lazy.source, lazy.words, lazy.bound) == (pattern.source, pattern.words, pattern.bound)
    assert (lazy.kinds, lazy.compound_types) == (pattern.kinds, pattern.compound_types)
    assert (lazy.expression is None) == (pattern.expression is None)
    if lazy.expression is not None and pattern.expression is not None:
        assert lazy.expression.deep_equals(pattern.expression)
    assert len(lazy.statements) == len(pattern.statements)
    assert all(a.deep_equals(b) for a, b in zip(lazy.statements, pattern.statements, strict=True))
    dump = [None if p.shape is None else ast.dump(p.shape) for p in (lazy, pattern)]
    assert dump[0] == dump[1]


def test_only_patterns_the_ast_way_supports_skip_libcst() -> None:
    (light,) = compile_ops([("print($$$A)", None)])
    (full,) = compile_ops([("$X = $Y", None)])
    (rewrite,) = compile_ops([("$A + $B", "lambda: $B + $A")])
    (renamed,) = compile_ops([("print($$$A)", "log.info($$$A)")])
    assert light.compiled is None  # the libcst pattern waits until needed
    assert full.compiled is not None and rewrite.compiled is not None
    assert rewrite.template is not None and rewrite.splice is None
    # Renaming a call: spliced without libcst, its template compiled when first needed.
    assert renamed.compiled is None and renamed.template is None
    assert renamed.splice == ("print", "log.info") and renamed.rewrites
    assert renamed.rendering.text == compile_op(0, "print($$$A)", "log.info($$$A)")[1].text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("pat", "out"),
    [
        ("print($$$A)", "log($$$B)"),  # another capture
        ("print($$$A)", "log($A)"),
        ("print($A)", "log($A)"),
        ("print($$$A, x)", "log($$$A, x)"),
        ("print($$$A)", "None($$$A)"),  # a keyword
        ("match($$$A)", "log($$$A)"),  # a soft keyword: left to libcst
        ("print($$$A)", "log ($$$A)"),
        ("print($$$A)", "x.log($$$A).y"),
    ],
)
def test_only_a_renamed_call_is_spliced(pat: str, out: str) -> None:
    try:
        (op,) = compile_ops([(pat, out)])
    except PatternError:
        return  # refused as before (by the libcst compile)
    assert op.splice is None  # its template compiled up front, or plain (plain_template.py)
    assert op.template is not None or op.rendering is not None


@pytest.mark.parametrize(
    ("pat", "message"),
    [
        ("f($X, $$$X)", "uses both $X and $$$X"),
        ("f($x)", "metavariable $x is not a valid name"),
        ("f($ + 1)", "'$' at offset 2 must start a metavariable"),
        ("   ", "is empty"),
        ("f(", "is not valid Python once its metavariables are replaced"),
        ("x = $$$A", "can only stand for items of a list"),
    ],
)
def test_bad_patterns_fail_as_before(pat: str, message: str) -> None:
    with pytest.raises(PatternError, match=None) as light:
        compile_ops([(pat, None)])
    with pytest.raises(PatternError) as full:
        compile_op(0, pat, None)
    assert message in str(light.value)
    assert str(light.value) == str(full.value)


def test_a_light_op_is_an_op() -> None:
    (op,) = compile_ops([("print($$$A)", None)])
    assert isinstance(op, CompiledOp)
    assert op.label == "operation 1 ('print($$$A)')"
    assert op.pattern.expression is not None  # compiled on first use


def _corpus(root: Path) -> None:
    for index in range(12):
        write(root, f"m{index}.py", "def f(a, b):\n    print(a + b)\n" * 400)


def test_a_small_job_starts_no_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(tmp_path)
    started: list[int] = []
    # A busy machine (one CPU free): the pool's own thresholds decide, whatever the load
    # of the machine running the test (on idle CPUs a search forks children instead).
    monkeypatch.setattr(engine, "free_workers", lambda: 1)
    monkeypatch.setattr(engine, "_get_executor", lambda workers, rewrite: started.append(workers))
    report = search(tmp_path, [("$A + $B", None)], workers=2, cache=None)
    assert report.total_matches == 12 * 400
    assert started == []
    # Past the threshold the pool is asked for (and, here, declined: None).
    monkeypatch.setattr(engine, "POOL_MIN_BYTES", 1_000)
    again = search(tmp_path, [("$A + $B", None)], workers=2, cache=None)
    assert started == [2]
    assert again.total_matches == report.total_matches


def test_the_pool_threshold() -> None:
    big = engine.POOL_MIN_BYTES
    assert not engine._use_pool(2, 100, big - 1)
    assert engine._use_pool(2, 100, big)
    assert not engine._use_pool(1, 100, big * 10)  # one worker: never a pool
    assert not engine._use_pool(2, engine.POOL_MIN_FILES - 1, big * 10)
    assert not engine._use_pool(8, 7, big * 10)  # fewer files than workers


def test_a_search_in_process_and_in_workers_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus(tmp_path)
    ops = [("$A + $B", None)]
    alone = search(tmp_path, ops, workers=1, cache=None)
    monkeypatch.setattr(engine, "POOL_MIN_BYTES", 0)
    try:
        pooled = search(tmp_path, ops, workers=2, cache=None)
    finally:
        engine.shutdown_pool()
    assert alone.total_matches == pooled.total_matches == 12 * 400
    assert [r.matches for r in alone.files] == [r.matches for r in pooled.files]


@pytest.mark.parametrize(
    ("pat", "out"),
    [
        ("print($$$A)", "a.b.c($$$A)"),
        ("os.path.join($$$P)", "join($$$P)"),
        ("__debug__($$$A)", "f($$$A)"),
        ("self.write($$$ARGS_2)", "self.emit($$$ARGS_2)"),
    ],
)
def test_a_spliced_rename_is_one_the_libcst_compile_accepts(pat: str, out: str) -> None:
    (op,) = compile_ops([(pat, out)])
    assert op.splice is not None
    pattern, template = compile_op(0, pat, out)  # no error put off: it compiles
    assert template is not None and op.rendering.text == template.text
    assert op.source == pattern.source and op.words == pattern.words
