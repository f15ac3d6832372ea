"""The dashboard at any terminal size: what stays visible at 80×24 and 60×20."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action
from textual.widgets import Button, Footer

from redline.tui.app import RedlineApp
from redline.tui.screens.confirm import ConfirmScreen
from redline.tui.screens.help import HelpScreen
from redline.tui.screens.trust import TrustScreen
from redline.tui.widgets.resolve_bar import BUTTON_MARGIN, arrangement, button_width

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


def _reason_fits(app: RedlineApp) -> None:
    reason = _visible(app, "#reason")
    assert reason.width >= 20, f"the reason field is {reason.width} columns wide"
    for button in ("#apply", "#discard"):
        region = _visible(app, button)
        assert not region.overlaps(reason), f"{button} covers the reason field"
        assert region.width >= len(str(app.screen.query_one(button, Button).label))
        assert app.resolve_bar.region.contains_region(region), f"{button} is cut"


@pytest.mark.parametrize("width", [60, 80, 100, 120, 135, 160])
async def test_reason_field_keeps_twenty_columns(width: int) -> None:
    app = _app(_session())
    height = 20 if width < 80 else 24 if width < 100 else 32
    async with app.run_test(size=(width, height)) as pilot:
        await wait_until(pilot, lambda: app.stack.rows and app.resolve_bar.region.width > 0)
        await pilot.pause()
        _reason_fits(app)


def test_every_bar_width_keeps_the_reason_field() -> None:
    # The stack panel is at least 40 columns wide (styles/stack.tcss), so the bar at least
    # 38 at any terminal width from 60 to 200; ids grow to pa-99999 on a long-lived queue.
    cases = [
        (("Apply (y)", "Discard (n)"), ("Apply (y)", "Discard (n)")),
        (("Apply pa-99999 (y)", "Discard pa-99999 (n)"), ("Apply (y)", "Discard (n)")),
        (("Apply 12 of 40 hunks", "Discard 12 of 40 hunks"), ("Apply 12/40", "Discard 12/40")),
    ]
    for width in range(38, 201):
        for (long, short), rows_first in itertools.product(cases, (False, True)):
            two_rows, labels = arrangement(width, long, short, rows_first=rows_first)
            buttons = sum(button_width(label) + BUTTON_MARGIN for label in labels)
            reason = width if two_rows else width - buttons
            assert reason >= 20, (width, labels)
            assert buttons <= width, (width, labels)
            assert all(button_width(label) >= len(label) + 2 for label in labels)


WIDE = "".join(f"value_{n} = compute('{'x' * 90}', {n})\n" for n in range(40))


@pytest.mark.parametrize(("size", "lines"), [((80, 24), 8), ((60, 20), 6)])
async def test_long_lines_never_cost_a_diff_row(size: tuple[int, int], lines: int) -> None:
    session = FakeSession()
    new = WIDE.replace("value_3 =", "changed_3 =")
    label = "Edit wide.py: every value computed through the new helper"
    session.push(make_action(label, path="src/wide.py", old=WIDE, new=new))
    app = _app(session)
    async with app.run_test(size=size) as pilot:
        diff = app.preview.diff_view
        await wait_until(pilot, lambda: diff.row_count > lines)
        await pilot.pause()
        # No scrollbar row under the diff: every row of the widget shows a diff line.
        assert not diff.show_horizontal_scrollbar
        # A long label is cut in the preview's header, not wrapped onto a diff row.
        assert app.preview.query_one("#preview-header").region.height == 1
        assert diff.scrollable_content_region.height >= lines
        assert _visible(app, "#diff-view").height >= lines
        _reason_fits(app)
        _visible(app, "#prompt")
        # The rest of a long line is there on demand: → scrolls it sideways, ← back.
        assert diff.max_scroll_x > 0
        first = diff.render_line(3).text
        assert first.rstrip().endswith("…")
        diff.focus()
        await pilot.press("right", "right", "right")
        await wait_until(pilot, lambda: diff.scroll_x == 3)
        assert diff.render_line(3).text != first
        await pilot.press("left", "left", "left")
        await wait_until(pilot, lambda: diff.scroll_x == 0)


async def test_a_label_keeps_twenty_columns_beside_a_long_source_badge() -> None:
    from redline.workspace.queue import Source

    session = FakeSession()
    action = make_action("Fix the pager's off-by-one error in page counts", path="src/app.py")
    action = action.stamped(source=Source("mcp", "an-mcp-client-with-a-very-long-name-indeed"))
    session.push(action)
    app = _app(session)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: app.stack.row_height == 1 and app.stack.rows)
        row = app.stack.render_line(0).text
        assert "Fix the pager's off…" in row  # 20 columns of the label
        assert "‹mcp:an-mcp" in row and row.rstrip().endswith("…")  # the badge gives way
