"""Snapshots of a demo-like review at 160×48, 80×24 and 60×20 (plus help and quit at 60×20).

Regenerate after an intended visual change with ``uv run pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.tui.fakes import FakeSession, make_action, multi_file_preview
from tests.tui.test_snapshots import PYTHON_NEW, PYTHON_OLD, _app, _settle
from textual.pilot import Pilot

from redline.review.events import MessageDelta, MessageEnd, ToolEnd, ToolStart
from redline.review.result import ToolResult
from redline.workspace.queue import Source

SIZES = [(160, 48), (80, 24), (60, 20)]


def _demo_session() -> FakeSession:
    session = FakeSession()
    session.push(
        make_action(
            "AST Edit: 3 replacements in 1 file",
            path="inventory/store.py",
            old=PYTHON_OLD,
            new=PYTHON_NEW,
            source="ast_edit",
        )
    )
    other = make_action("Edit: inventory/models.py", path="inventory/models.py")
    other = other.stamped(source=Source("mcp", "zed"))
    session.push(other)
    session.push(make_action("Write: CHANGELOG.md", path="CHANGELOG.md", old="", new="# Changes\n"))
    session.push(
        make_action(
            "Batch rename: 3 files", preview=multi_file_preview(), source="batch_rename_preview"
        )
    )
    return session


async def _with_activity(pilot: Pilot[Any]) -> None:
    session = pilot.app.session  # type: ignore[attr-defined]
    session.emit(MessageDelta(text="I'll queue one reviewable change for each problem."))
    session.emit(MessageEnd(text="I'll queue one reviewable change for each problem."))
    session.emit(ToolStart(tool_call_id="c1", name="read", args={"path": "inventory/store.py"}))
    session.emit(
        ToolEnd(
            tool_call_id="c1",
            name="read",
            result=ToolResult.text_result("1 import logging"),
            is_error=False,
        )
    )
    await _settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_review(snap_compare: Any, size: tuple[int, int]) -> None:
    assert snap_compare(_app(_demo_session()), terminal_size=size, run_before=_with_activity)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_empty_at_size(snap_compare: Any, size: tuple[int, int]) -> None:
    assert snap_compare(_app(FakeSession()), terminal_size=size, run_before=_settle)


def test_help_at_60x20(snap_compare: Any) -> None:
    assert snap_compare(
        _app(FakeSession()), terminal_size=(60, 20), press=["question_mark"], run_before=_settle
    )


def test_quit_question_at_60x20(snap_compare: Any) -> None:
    assert snap_compare(
        _app(_demo_session()), terminal_size=(60, 20), press=["ctrl+q"], run_before=_settle
    )


def test_search_open_at_80x24(snap_compare: Any) -> None:
    assert snap_compare(
        _app(_demo_session()),
        terminal_size=(80, 24),
        press=["d", "slash", "i", "m", "p", "enter"],
        run_before=_settle,
    )


def _wide_session() -> FakeSession:
    old = "".join(f"value_{n} = compute('{'x' * 90}', {n})\n" for n in range(40))
    session = FakeSession()
    session.push(
        make_action(
            "Edit wide.py",
            path="src/wide.py",
            old=old,
            new=old.replace("value_3 =", "changed_3 ="),
        )
    )
    return session


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda size: f"{size[0]}x{size[1]}")
def test_long_lines_cut_without_a_scrollbar(snap_compare: Any, size: tuple[int, int]) -> None:
    # Eight diff rows at 80×24 and six at 60×20, each long line cut with "…".
    assert snap_compare(_app(_wide_session()), terminal_size=size, run_before=_settle)
