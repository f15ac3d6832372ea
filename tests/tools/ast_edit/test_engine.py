"""Files: listing, prefilter, statement locating, errors, limit, cache, streaming."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from redline.tools.ast_edit import (
    ResultCache,
    TargetError,
    compile_ops,
    engine,
    iter_search,
    list_files,
    search,
)

from .helpers import matched, write

PRINT = [("print($$$A)", "log($$$A)")]


def _project(root: Path) -> None:
    write(root, "a.py", "print(1)\n")
    write(root, "pkg/b.py", "def f():\n    print(2)\n    print(3)\n")
    write(root, "pkg/c.pyi", "def g() -> None: ...\n")
    write(root, "notes.txt", "print(4)\n")
    write(root, ".git/hooks/x.py", "print(5)\n")
    write(root, ".venv/pyvenv.cfg", "home = /usr\n")
    write(root, ".venv/lib/site.py", "print(6)\n")
    write(root, "env2/pyvenv.cfg", "home = /usr\n")
    write(root, "env2/y.py", "print(7)\n")
    write(root, "build/gen.py", "print(8)\n")
    write(root, ".gitignore", "build/\n")


def test_lists_python_files_only_skipping_protected_and_ignored(tmp_path: Path) -> None:
    _project(tmp_path)
    assert list_files(tmp_path) == ["a.py", "pkg/b.py", "pkg/c.pyi"]
    assert list_files(tmp_path, ["pkg"]) == ["pkg/b.py", "pkg/c.pyi"]
    assert list_files(tmp_path, ["pkg"], glob="*.py") == ["pkg/b.py"]
    assert list_files(tmp_path, ["**/*.py"]) == ["a.py", "pkg/b.py"]
    assert list_files(tmp_path, ["pkg/b.py", "a.py"]) == ["a.py", "pkg/b.py"]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("../elsewhere", "outside the workspace"),
        ("missing.py", "no such file or folder"),
        ("notes.txt", "not a Python file"),
        (".git/hooks/x.py", "never touches"),
    ],
)
def test_bad_targets_are_refused(tmp_path: Path, target: str, message: str) -> None:
    _project(tmp_path)
    with pytest.raises(TargetError, match=message):
        list_files(tmp_path, [target])


def test_search_counts_and_sorts(tmp_path: Path) -> None:
    _project(tmp_path)
    report = search(tmp_path, PRINT)
    assert [r.path for r in report.files] == ["a.py", "pkg/b.py"]
    assert report.total_matches == 3
    assert report.files_searched == 3
    assert report.summary_label() == "AST Edit: 3 replacements in 2 files"
    preview = report.preview()
    assert [c.path for c in preview] == ["a.py", "pkg/b.py"]
    assert preview.changes[0].new_text == "log(1)\n"


def test_unparsable_and_undecodable_files_are_listed(tmp_path: Path) -> None:
    write(tmp_path, "good.py", "print(1)\n")
    write(tmp_path, "py2.py", "print 'x'\nprint(2)\n")
    write(tmp_path, "latin.py", b"# caf\xe9\nprint(3)\n")
    report = search(tmp_path, PRINT)
    assert [r.path for r in report.files] == ["good.py"]
    errors = {r.path: r.error or "" for r in report.errors}
    assert set(errors) == {"latin.py", "py2.py"}
    assert "does not parse" in errors["py2.py"] and "line 1" in errors["py2.py"]
    assert "not valid UTF-8" in errors["latin.py"]


def test_limit_caps_total_replacements_in_path_order(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "print(1)\nprint(2)\n")
    write(tmp_path, "b.py", "print(3)\nprint(4)\n")
    report = search(tmp_path, PRINT, limit=3)
    assert report.total_matches == 3
    assert report.limit_reached
    assert [len(r.matches) for r in report.files] == [2, 1]
    assert report.files[1].new_text == "log(3)\nprint(4)\n"
    assert not search(tmp_path, PRINT, limit=10).limit_reached
    with pytest.raises(TargetError, match="at least 1"):
        search(tmp_path, PRINT, limit=0)


def test_prefilter_never_drops_a_real_match() -> None:
    text = "print (a)\nprint\\\n(b)\nx = (print)(c)\nreprint(d)\nprint_(e)\n"
    assert matched(text, "print($$$A)") == ["print (a)", "print\\\n(b)", "(print)(c)"]


def test_nested_statements_are_located_at_every_depth() -> None:
    text = (
        "class A:\n"
        "    '''print(doc)'''\n"
        "    @decorate(print(0))\n"
        "    def m(self, x=print(1)):\n"
        "        if x:\n"
        "            pass\n"
        "        elif print(2):\n"
        "            y = 1; print(3)\n"
        "        else: print(4)\n"
        "        try:\n"
        "            pass\n"
        "        except print(5):\n"
        "            print(6)\n"
        "print(7)\n"
    )
    assert matched(text, "print($A)") == [f"print({i})" for i in range(8)]


def test_files_only_libcst_parses_fall_back_to_a_whole_file_parse() -> None:
    # Python 3.12 syntax: `ast` on 3.11 refuses it, libcst reads it.
    text = "type Alias = int\nprint(1)\n"
    assert matched(text, "print($A)") == ["print(1)"]


def test_deep_nesting_is_a_per_file_error(tmp_path: Path) -> None:
    write(tmp_path, "deep.py", "x = " + "(" * 3000 + "print(1)" + ")" * 3000 + "\n")
    write(tmp_path, "ok.py", "print(2)\n")
    report = search(tmp_path, PRINT)
    assert [r.path for r in report.files] == ["ok.py"]
    assert [r.path for r in report.errors] == ["deep.py"]


def test_results_stream_in_path_order(tmp_path: Path) -> None:
    for index in range(5):
        write(tmp_path, f"m{index}.py", f"print({index})\n" if index % 2 == 0 else "x = 1\n")
    files = list_files(tmp_path)
    stream = iter_search(tmp_path, compile_ops(PRINT), files, cache=None)
    first = next(stream)
    assert first.path == "m0.py" and len(first.matches) == 1
    assert [r.path for r in stream] == ["m1.py", "m2.py", "m3.py", "m4.py"]


def test_cache_serves_unchanged_files_and_notices_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "a.py", "print(1)\n")
    write(tmp_path, "b.py", "print(2)\n")
    cache = ResultCache()
    first = search(tmp_path, PRINT, cache=cache)
    calls: list[str] = []
    real = engine.analyze

    def counting(text: str, ops: object, rewrite: bool) -> object:
        calls.append(text)
        return real(text, ops, rewrite)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "analyze", counting)
    again = search(tmp_path, PRINT, cache=cache)
    assert calls == []
    assert [r.new_text for r in again.files] == [r.new_text for r in first.files]
    write(tmp_path, "b.py", "print(22)\n")
    changed = search(tmp_path, PRINT, cache=cache)
    assert calls == ["print(22)\n"]
    assert changed.files[1].new_text == "log(22)\n"
    # Other operations are other cache entries.
    search(tmp_path, [("print($$$A)", "out($$$A)")], cache=cache)
    assert len(calls) == 3


def test_process_pool_gives_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(6):
        write(tmp_path, f"m{index}.py", f"def f():\n    print({index})\n")
    write(tmp_path, "bad.py", "print('x')\nprint 'x'\n")
    monkeypatch.setattr(engine, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(engine, "POOL_MIN_BYTES", 0)
    try:
        pooled = search(tmp_path, PRINT, workers=2, cache=None)
    finally:
        engine.shutdown_pool()
    inline = search(tmp_path, PRINT, workers=1, cache=None)
    assert [(r.path, r.new_text) for r in pooled.files] == [
        (r.path, r.new_text) for r in inline.files
    ]
    assert [r.path for r in pooled.errors] == ["bad.py"]


def test_bom_and_crlf_survive(tmp_path: Path) -> None:
    write(tmp_path, "a.py", b"\xef\xbb\xbfx = 1\r\nprint(1)\r\n")
    (result,) = search(tmp_path, PRINT).files
    assert result.encoding == "utf-8-sig"
    assert result.new_text == "x = 1\r\nlog(1)\r\n"


def test_pooled_batches_keep_order_fill_the_cache_and_reread_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(7):
        write(tmp_path, f"m{index}.py", f"x = {index}\nprint({index})\n")
    write(tmp_path, "skip.py", "x = 1\n")  # settled by the prefilter in a worker
    monkeypatch.setattr(engine, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(engine, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(engine, "_BATCH_FILES", 2)
    cache = ResultCache()
    try:
        pooled = search(tmp_path, PRINT, workers=2, cache=cache)
    finally:
        engine.shutdown_pool()
    assert [(r.path, r.new_text) for r in pooled.files] == [
        (f"m{i}.py", f"x = {i}\nlog({i})\n") for i in range(7)
    ]
    # Every file, matched or not, is now known by its stat: nothing is read again.
    reads: list[str] = []
    real_read = Path.read_bytes

    def counting(path: Path) -> bytes:
        reads.append(path.name)
        return real_read(path)

    monkeypatch.setattr(Path, "read_bytes", counting)
    again = search(tmp_path, PRINT, workers=2, cache=cache)
    assert reads == []
    assert [r.new_text for r in again.files] == [r.new_text for r in pooled.files]


def test_a_file_changed_after_its_worker_read_it_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "print(1)\n")
    seen = engine._process(b"print(0)\n", "a.py", engine.ops_key(PRINT), True)
    assert seen.matches and seen.matches[0].replacement is not None
    stripped = replace(seen, path="a.py", old_text=None, new_text=None)
    item = engine._Pending("a.py", str(tmp_path / "a.py"), None, None)
    result = engine._with_texts(stripped, item)
    assert result.error == "changed while being searched; search again"


def test_analysing_a_file_pauses_the_cyclic_collector_and_restores_it() -> None:
    import gc

    from redline.tools.ast_edit.analyze import analyze
    from redline.tools.ast_edit.ops import compile_ops

    ops = compile_ops([("print($$$A)", None)])
    seen: list[bool] = []
    original = gc.disable

    def spy() -> None:
        seen.append(gc.isenabled())
        original()

    text = "print(1)\nx = [print(2)]\n"
    assert gc.isenabled()
    gc.disable = spy  # type: ignore[assignment]
    try:
        result = analyze(text, ops, False)
    finally:
        gc.disable = original  # type: ignore[assignment]
    assert [m.text for m in result.matches] == ["print(1)", "print(2)"]
    assert seen == [True] and gc.isenabled()
    gc.disable()
    try:
        assert analyze(text, ops, False) == result
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        gc.enable()
