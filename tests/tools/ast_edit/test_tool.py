"""The ast_edit tool: preview text, the pending action, apply, repreview."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from redline.review.resolve import resolve_pending
from redline.review.result import ToolResult
from redline.review.store import PendingAction, PendingActionStore
from redline.tools.ast_edit import engine
from redline.tools.ast_edit.tool import AstEditParams, AstEditTool
from redline.tools.base import PREVIEW_BANNER, ToolContext

from .helpers import write

OPS = [{"pat": "print($$$A)", "out": "logger.info($$$A)"}]


def _execute(root: Path, store: PendingActionStore | None, **params: object) -> ToolResult:
    tool = AstEditTool()
    model = AstEditParams.model_validate({"ops": OPS, **params})
    return asyncio.run(tool.execute(model, ToolContext(cwd=root, store=store)))


def test_tool_shape() -> None:
    tool = AstEditTool()
    assert tool.name == "ast_edit"
    assert tool.deferrable is True
    schema = tool.parameters_schema()
    assert set(schema["properties"]) == {"ops", "path", "glob", "limit"}
    assert schema["required"] == ["ops"]
    op_schema = schema["$defs"]["AstEditOp"]
    assert sorted(op_schema["required"]) == ["out", "pat"]
    with pytest.raises(ValueError):
        AstEditParams.model_validate({"ops": [{"pat": "x"}]})


def test_zero_matches_pushes_nothing(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "x = 1\n")
    store = PendingActionStore()
    result = _execute(tmp_path, store)
    assert not result.is_error
    assert result.text == "No replacements made"
    assert store.count == 0


def test_one_replacement_label_and_preview_text(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "x = 1\nprint(x)\n")
    store = PendingActionStore()
    result = _execute(tmp_path, store)
    assert not result.is_error
    lines = result.text.splitlines()
    assert lines[0] == PREVIEW_BANNER
    assert lines[1].startswith("AST Edit: 1 replacement in 1 file (pending action pa-1;")
    assert "a.py: 1 replacement" in result.text
    assert "  line 2: print(x)  ->  logger.info(x)" in result.text
    assert "-print(x)\n+logger.info(x)" in result.text
    action = store.peek()
    assert action is not None
    assert action.label == "AST Edit: 1 replacement in 1 file"
    assert action.source_tool_name == "ast_edit"
    assert action.preview is not None
    (change,) = action.preview.changes
    assert change.path == "a.py"
    assert change.new_text == "x = 1\nlogger.info(x)\n"  # type: ignore[union-attr]


def _seven_in_three(root: Path) -> None:
    write(root, "a.py", "print(1)\nprint(2)\nprint(3)\n")
    write(root, "pkg/b.py", "def f():\n    print(4)\n    print(5)\n")
    write(root, "pkg/c.py", "print(6)\nprint(7)\n")
    write(root, "pkg/d.py", "x = 1\n")


def test_plural_label_and_apply_text(tmp_path: Path) -> None:
    pytest.importorskip("redline.workspace.safe_apply")
    _seven_in_three(tmp_path)
    store = PendingActionStore()
    result = _execute(tmp_path, store)
    action = store.peek()
    assert action is not None
    assert action.label == "AST Edit: 7 replacements in 3 files"
    assert "AST Edit: 7 replacements in 3 files" in result.text
    assert (tmp_path / "a.py").read_text() == "print(1)\nprint(2)\nprint(3)\n"
    applied = asyncio.run(resolve_pending(store, "apply", "looks right"))
    assert not applied.is_error, applied.text
    assert applied.text == "Applied 7 replacements in 3 files."
    assert (tmp_path / "pkg/c.py").read_text() == "logger.info(6)\nlogger.info(7)\n"
    assert store.count == 0


def test_apply_singular_text(tmp_path: Path) -> None:
    pytest.importorskip("redline.workspace.safe_apply")
    write(tmp_path, "a.py", "print(1)\n")
    store = PendingActionStore()
    _execute(tmp_path, store)
    applied = asyncio.run(resolve_pending(store, "apply", "ok"))
    assert applied.text == "Applied 1 replacement in 1 file."


def test_stale_file_is_refused_and_the_action_stays(tmp_path: Path) -> None:
    pytest.importorskip("redline.workspace.safe_apply")
    write(tmp_path, "a.py", "print(1)\n")
    store = PendingActionStore()
    _execute(tmp_path, store)
    write(tmp_path, "a.py", "print(1)\nprint(2)\n")
    applied = asyncio.run(resolve_pending(store, "apply", "ok"))
    assert applied.is_error
    assert "a.py" in applied.text
    assert store.count == 1
    assert (tmp_path / "a.py").read_text() == "print(1)\nprint(2)\n"


def test_repreview_recomputes_against_current_files(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "print(1)\n")
    store = PendingActionStore()
    _execute(tmp_path, store)
    action = store.peek()
    assert action is not None and action.repreview is not None
    write(tmp_path, "a.py", "print(1)\nprint(2)\n")
    fresh = action.repreview()
    assert isinstance(fresh, PendingAction)
    assert fresh.label == "AST Edit: 2 replacements in 1 file"
    assert fresh.preview is not None
    assert fresh.preview.changes[0].new_text == (  # type: ignore[union-attr]
        "logger.info(1)\nlogger.info(2)\n"
    )
    write(tmp_path, "a.py", "x = 1\n")
    with pytest.raises(ValueError, match="no longer match"):
        action.repreview()


def test_invalid_pattern_is_an_error_before_any_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "a.py", "print(1)\n")

    def no_listing(*args: object, **kwargs: object) -> list[str]:
        raise AssertionError("files were listed")

    monkeypatch.setattr(engine, "list_files", no_listing)
    store = PendingActionStore()
    tool = AstEditTool()
    params = AstEditParams.model_validate({"ops": [{"pat": "print($$$A", "out": "x"}]})
    result = asyncio.run(tool.execute(params, ToolContext(cwd=tmp_path, store=store)))
    assert result.is_error
    assert result.text.startswith("Invalid ast_edit operation: operation 1: pattern")
    assert "'(' was never closed" in result.text
    assert store.count == 0


def test_bad_path_is_an_error(tmp_path: Path) -> None:
    result = _execute(tmp_path, PendingActionStore(), path="../x")
    assert result.is_error
    assert "outside the workspace" in result.text


def test_no_store_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "print(1)\n")
    result = _execute(tmp_path, None)
    assert result.is_error
    assert "store unavailable" in result.text


def test_limit_and_problems_are_reported(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "print(1)\nprint(2)\n")
    write(tmp_path, "b.py", "print(3)\n")
    write(tmp_path, "0bad.py", "print('x')\nprint 'x'\n")
    store = PendingActionStore()
    result = asyncio.run(
        AstEditTool().execute(
            AstEditParams.model_validate(
                {
                    "ops": [{"pat": "print($$$A)", "out": "logger.info($$$A)"}],
                    "limit": 2,
                }
            ),
            ToolContext(cwd=tmp_path, store=store),
        )
    )
    assert "AST Edit: 2 replacements in 1 file" in result.text
    assert "Limit of 2 replacements reached" in result.text
    assert "Not searched (cannot be parsed or read):\n  0bad.py: does not parse" in result.text
    action = store.peek()
    assert action is not None and action.label == "AST Edit: 2 replacements in 1 file"


def test_overlapping_file_is_left_out_and_named(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "print(1)\n")
    write(tmp_path, "c.py", "f(print(1))\n")
    store = PendingActionStore()
    result = asyncio.run(
        AstEditTool().execute(
            AstEditParams.model_validate(
                {
                    "ops": [
                        {"pat": "print($$$A)", "out": "logger.info($$$A)"},
                        {"pat": "f($X)", "out": "g($X)"},
                    ]
                }
            ),
            ToolContext(cwd=tmp_path, store=store),
        )
    )
    action = store.peek()
    assert action is not None and action.preview is not None
    assert [c.path for c in action.preview.changes] == ["a.py"]
    assert "Left out of the change:" in result.text
    assert "c.py: matches of operation 1 ('print($$$A)') and operation 2 ('f($X)') overlap" in (
        result.text
    )


def test_rewriting_code_into_itself_is_no_replacement(tmp_path: Path) -> None:
    from redline.tools.ast_edit import search

    (tmp_path / "m.py").write_text("x = f(a)\n", encoding="utf-8")
    report = search(tmp_path, [("f($A)", "f($A)")], ["."], None, None)
    assert report.total_matches == 0
