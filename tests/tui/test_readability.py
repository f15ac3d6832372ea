"""Readability fixes: colours per theme, wrapping and truncation markers."""

from __future__ import annotations

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action, modify
from textual.color import Color
from textual.strip import Strip
from textual.theme import BUILTIN_THEMES
from textual.widgets import Static

from redline.tui.app import RedlineApp
from redline.tui.palette import MIN_CONTRAST, contrast_ratio, readable_variables
from redline.tui.screens.help import HelpScreen
from redline.workspace.preview import Preview

SIZE = (140, 40)
LONG_MESSAGE = " ".join(f"word{index:03d}" for index in range(40))  # 319 characters


def app_for(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)


def colours(strip: Strip) -> set[object]:
    return {segment.style.color for segment in strip if segment.text.strip() and segment.style}


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
def test_readable_variables_reach_aa_on_surface_and_panel(theme: str) -> None:
    variables = BUILTIN_THEMES[theme].to_color_system().generate()
    for value in readable_variables(variables).values():
        for background in ("surface", "panel"):
            ratio = contrast_ratio(Color.parse(value), Color.parse(variables[background]))
            assert ratio >= MIN_CONTRAST, (theme, value, background, ratio)


def test_readable_variables_leave_terminal_colours_alone() -> None:
    variables = {
        "text-warning": "ansi_yellow",
        "text-accent": "ansi_magenta",
        "text-success": "ansi_green",
        "text-error": "ansi_red",
        "surface": "transparent",
        "panel": "transparent",
        "foreground": "ansi_default",
    }
    assert readable_variables(variables) == {
        "redline-text-warning": "ansi_yellow",
        "redline-text-accent": "ansi_magenta",
        "redline-text-success": "ansi_green",
        "redline-text-error": "ansi_red",
    }


async def test_stack_rows_repaint_after_theme_change_and_cursor_row_is_one_colour() -> None:
    session = FakeSession()
    for label in ("first", "second"):
        session.push(make_action(label))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        stack = app.stack
        assert app.focused is stack and stack.cursor == 0
        # The cursor row's pieces all take the cursor foreground; other rows keep theirs.
        assert len(colours(stack.render_line(1))) == 1
        assert len(colours(stack.render_line(3))) > 1
        before = stack.render_line(3)
        app.theme = "textual-light"
        await pilot.pause()
        assert colours(stack.render_line(3)) != colours(before)


async def test_stack_second_line_is_cut_with_an_ellipsis() -> None:
    session = FakeSession()
    files = [modify(f"data/stock-{index:04d}.csv", "a\n", "b\n") for index in range(12)]
    session.push(make_action("many files", preview=Preview(files)))
    app = app_for(session)
    async with app.run_test(size=SIZE):
        line = app.stack.render_line(1).text
        assert "12 files: data/stock-0000.csv" in line
        assert line.rstrip().endswith("…")


async def test_streamed_text_wraps_to_the_log_width_and_rewraps_on_resize() -> None:
    app = app_for(FakeSession())
    async with app.run_test(size=SIZE) as pilot:
        log = app.activity
        for start in range(0, len(LONG_MESSAGE), 7):
            log.stream_text(LONG_MESSAGE[start : start + 7])
        log.end_text()
        await pilot.pause()
        width = log.scrollable_content_region.width
        assert len(log.lines) >= 3
        assert all(line.cell_length <= width for line in log.lines)
        assert log.max_scroll_x == 0
        assert log.plain == "▌ " + LONG_MESSAGE
        rows = len(log.lines)
        await pilot.resize_terminal(90, 40)
        await wait_until(pilot, lambda: log.scrollable_content_region.width < width)
        narrower = log.scrollable_content_region.width
        assert len(log.lines) > rows
        assert all(line.cell_length <= narrower for line in log.lines)
        assert log.plain == "▌ " + LONG_MESSAGE


async def test_help_descriptions_wrap_under_their_own_column() -> None:
    app = app_for(FakeSession())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        descriptions = list(app.screen.query(".what").results(Static))
        assert len({widget.region.x for widget in descriptions}) == 1
        palette = next(w for w in descriptions if "toggles" in str(w.render()))
        assert palette.region.height >= 2


async def test_split_view_marks_cut_lines() -> None:
    session = FakeSession()
    long_line = "value = " + "x" * 150 + "\n"
    session.push(make_action("long", old="value = 1\n", new=long_line))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        diff = app.preview.diff_view
        await wait_until(pilot, lambda: diff.split)
        rendered = [diff.render_line(y).text for y in range(diff.row_count)]
        assert any("…" in line for line in rendered)
