"""`redline ast-edit`: output, the JSON shape, exit statuses 0/1/2/3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from redline.cli import main

from .helpers import write


def _project(root: Path) -> None:
    write(root, "b.py", "def f():\n    print(x,\n          y)\n")
    write(root, "a.py", "print(1)\n")
    write(root, "bad.py", "print('x')\nprint 'x'\n")
    write(root, "none.py", "x = 1\n")


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    status = main(["ast-edit", *argv, "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_search_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path)
    status, data = _json(capsys, "-C", str(tmp_path), "--pattern", "print($$$A)")
    assert status == 0
    assert set(data) == {"files", "total_matches", "files_searched", "errors"}
    assert [f["path"] for f in data["files"]] == ["a.py", "b.py"]
    assert data["files"][1] == {
        "path": "b.py",
        "matches": [
            {
                "start": {"line": 2, "column": 4},
                "end": {"line": 3, "column": 12},
                "text": "print(x,\n          y)",
            }
        ],
    }
    assert data["total_matches"] == 2
    assert data["files_searched"] == 4
    assert data["errors"] == [
        {
            "path": "bad.py",
            "message": "does not parse: Missing parentheses in call to 'print'. "
            "Did you mean print(...)? (line 2)",
        }
    ]


def test_rewrite_json_has_replacements_and_diffs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path)
    status, data = _json(
        capsys, "-C", str(tmp_path), "--pattern", "print($$$A)", "--rewrite", "log($$$A)", "a.py"
    )
    assert status == 0
    (entry,) = data["files"]
    assert entry["matches"] == [
        {
            "start": {"line": 1, "column": 0},
            "end": {"line": 1, "column": 8},
            "text": "print(1)",
            "replacement": "log(1)",
        }
    ]
    assert entry["diff"] == "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-print(1)\n+log(1)\n"
    assert data["files_searched"] == 1
    assert (tmp_path / "a.py").read_text() == "print(1)\n"


def test_columns_count_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "u.py", "s = 'é'; print(s)\n")
    status, data = _json(capsys, "-C", str(tmp_path), "--pattern", "print($A)")
    assert status == 0
    assert data["files"][0]["matches"][0]["start"] == {"line": 1, "column": 9}


def test_no_match_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path)
    status, data = _json(capsys, "-C", str(tmp_path), "--pattern", "nothing_like_this($A)")
    assert status == 1
    assert data["files"] == [] and data["total_matches"] == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pattern", "print($$$A"], "was never closed"),
        (["--pattern", "f($A)", "--rewrite", "g($B)"], "does not bind"),
        (["--pattern", "a", "--pattern", "b", "--rewrite", "c"], "2 --pattern but 1 --rewrite"),
        (["--pattern", "a", "--apply"], "--apply needs a --rewrite"),
        (["--pattern", "a", "--limit", "0"], "--limit must be at least 1"),
        (["--pattern", "a", "../outside"], "outside the workspace"),
        (["--pattern", "a", "missing.py"], "no such file or folder"),
        ([], "give at least one --pattern"),
    ],
)
def test_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    _project(tmp_path)
    assert main(["ast-edit", "-C", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("redline ast-edit: ")
    assert message in err
    assert "Traceback" not in err


def test_missing_workspace_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ast-edit", "-C", str(tmp_path / "nope"), "--pattern", "a"]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_text_output_search_and_rewrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path)
    assert main(["ast-edit", "-C", str(tmp_path), "--pattern", "print($$$A)"]) == 0
    out = capsys.readouterr().out
    assert "a.py:1:1: print(1)\nb.py:2:5: print(x, …\n" in out
    assert out.rstrip().endswith("2 matches in 2 files (4 files searched)")
    assert (
        main(
            ["ast-edit", "-C", str(tmp_path), "--pattern", "print($$$A)", "--rewrite", "log($$$A)"]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "-print(1)\n+log(1)" in captured.out
    assert captured.out.rstrip().endswith("2 replacements in 2 files (4 files searched)")
    assert "bad.py: does not parse" in captured.err


def test_apply_writes_through_safe_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("redline.workspace.safe_apply")
    _project(tmp_path)
    argv = ["ast-edit", "-C", str(tmp_path), "--pattern", "print($$$A)", "--rewrite", "log($$$A)"]
    assert main([*argv, "--apply"]) == 0
    assert "Applied 2 replacements in 2 files." in capsys.readouterr().out
    assert (tmp_path / "a.py").read_text() == "log(1)\n"
    assert (tmp_path / "b.py").read_text() == "def f():\n    log(x,\n          y)\n"
    assert main([*argv, "--apply"]) == 1


def test_refused_apply_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    safe_apply = pytest.importorskip("redline.workspace.safe_apply")
    _project(tmp_path)

    def refuse(*args: object, **kwargs: object) -> None:
        raise safe_apply.ApplyError("a.py: changed since the preview")

    monkeypatch.setattr(safe_apply, "apply_preview", refuse)
    argv = ["ast-edit", "-C", str(tmp_path), "--pattern", "print($A)", "--rewrite", "log($A)"]
    assert main([*argv, "--apply"]) == 3
    err = capsys.readouterr().err
    assert "nothing written: a.py: changed since the preview" in err
    assert (tmp_path / "a.py").read_text() == "print(1)\n"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["--pattern", "print($X"],
            "redline ast-edit: pattern 'print($X' is not valid Python once its metavariables "
            "are replaced: '(' was never closed (line 1, column 6)\n",
        ),
        (
            ["--pattern", "a($X)", "--pattern", "def", "--rewrite", "b($X)", "--rewrite", "c"],
            "redline ast-edit: --pattern #2: pattern 'def' is not valid Python once its "
            "metavariables are replaced: invalid syntax (line 1, column 4)\n",
        ),
    ],
)
def test_a_bad_pattern_is_named_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    _project(tmp_path)
    assert main(["ast-edit", "-C", str(tmp_path), *argv]) == 2
    assert capsys.readouterr().err == expected


def test_targets_with_no_python_file_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path)
    assert main(["ast-edit", "-C", str(tmp_path), "--pattern", "a", "--glob", "zz*"]) == 1
    out, err = capsys.readouterr()
    assert out == "0 matches in 0 files (0 files searched)\n"
    assert (
        err
        == "redline ast-edit: no Python file (.py, .pyi) in the workspace with --glob 'zz*' to search\n"
    )
