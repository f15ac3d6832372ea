"""The dashboard at any terminal size: what stays visible at 80×24 and 60×20."""

from __future__ import annotations

from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action
from textual.widgets import Footer

from redline.tui.app import RedlineApp
from redline.tui.screens.confirm import ConfirmScreen
from redline.tui.screens.help import HelpScreen
from redline.tui.screens.trust import TrustScreen

LONG = "".join(f"line {n}\n" for n in range(40))


def _session(count: int = 6) -> FakeSession:
    session = FakeSession()
    for index in range(count):
        new = LONG.replace(f"line {index + 3}\n", f"changed {index}\n")
        session.push(
            make_action(f"Edit number {index}", path=f"src/m{index}.py", old=LONG, new=new)
        )
    return session


def _app(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)


def _visible(app: RedlineApp, selector: str) -> Any:
    widget = app.screen.query_one(selector)
    region = widget.region
    screen = app.screen.region
    assert widget.display and region.area > 0, f"{selector} is not shown"
    assert screen.contains_region(region), f"{selector} ({region}) is off screen ({screen})"
    return region


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_everything_to_review_stays_visible(size: tuple[int, int]) -> None:
    app = _app(_session())
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.stack.rows and app.preview.diff_view.row_count > 8)
        status = _visible(app, "#status")
        assert _visible(app, "#stack").height >= 3
        assert _visible(app, "#diff-view").height >= 8
        assert _visible(app, "#reason").width >= 20
        _visible(app, "#apply")
        _visible(app, "#discard")
        _visible(app, "#prompt")
        _visible(app, Footer.__name__)
        line = app.status_line.render().plain
        assert status.height == 1
        assert "6 pending" in line and "agent: idle" in line
        # At least three actions fit in the stack's rows.
        assert app.stack.region.height // app.stack.row_height >= 3


async def test_below_100_columns_the_panels_stack() -> None:
    app = _app(_session())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        stack = app.screen.query_one("#stack-panel").region
        preview = app.screen.query_one("#preview").region
        assert preview.y >= stack.bottom
        assert preview.width == 80
    app = _app(_session())
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        stack = app.screen.query_one("#stack-panel").region
        preview = app.screen.query_one("#preview").region
        assert preview.x >= stack.right


async def test_at_60x20_one_line_per_action_and_six_diff_lines() -> None:
    app = _app(_session())
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: app.preview.diff_view.row_count > 6)
        assert app.stack.row_height == 1
        assert _visible(app, "#stack").height >= 2
        assert _visible(app, "#diff-view").height >= 6
        _visible(app, "#reason")
        _visible(app, "#prompt")
        line = app.status_line.render().plain
        assert "6 pending" in line and "agent: idle" in line
        # Each row names its action, its size and its source.
        row = app.stack.render_line(0).text
        assert "pa-6" in row and "‹agent›" in row


async def test_help_scrolls_when_it_does_not_fit() -> None:
    app = _app(FakeSession())
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        dialog = app.screen.query_one("#dialog")
        await pilot.pause()
        assert app.screen.region.contains_region(dialog.region)
        assert dialog.max_scroll_y > 0
        await pilot.press("end")
        await wait_until(pilot, lambda: dialog.scroll_y == dialog.max_scroll_y)


async def test_quit_question_wraps_instead_of_being_cut() -> None:
    app = _app(_session(1))
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        question = app.screen.query_one("#question")
        assert app.screen.region.contains_region(question.region)
        text = " ".join(
            line.text.strip() for line in question.render_lines(question.region.reset_offset)
        )
        assert "Quit anyway?" in " ".join(text.split())
        await pilot.press("n")


async def test_trust_question_lists_the_files_and_how_to_revoke(tmp_path: Any) -> None:
    tools = tmp_path / ".redline" / "tools"
    tools.mkdir(parents=True)
    (tools / "stamp.py").write_text("x = 1\n", encoding="utf-8")
    (tools / "_helper.py").write_text("x = 1\n", encoding="utf-8")
    app = _app(FakeSession(untrusted_plugin_dir=tools))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.pause()
        listing = str(app.screen.query_one("#plugin-files").render())
        assert "stamp.py" in listing and "_helper.py" not in listing
        assert "redline trust --revoke" in str(app.screen.query_one("#remembered").render())
        assert app.screen.region.contains_region(app.screen.query_one("#buttons").region)
        await pilot.press("n")
