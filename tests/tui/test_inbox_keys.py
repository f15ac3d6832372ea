"""Keys for reaching and reading things: i, d, /, g/G, enter on the activity, f, undo greying."""

from __future__ import annotations

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action
from textual.widgets import Static

from redline.review.events import ToolEnd, ToolStart
from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.tui.app import RedlineApp
from redline.tui.widgets.activity_log import ActivityLog
from redline.tui.widgets.diff_view import DiffView
from redline.tui.widgets.pending_stack import PendingStack, action_source, source_counts
from redline.tui.widgets.prompt_input import PromptInput
from redline.tui.widgets.search_input import SearchBar, SearchInput, find_row
from redline.workspace.queue import Source

SIZE = (120, 36)
OLD = "".join(f"alpha {n}\n" for n in range(30))
NEW = OLD.replace("alpha 3\n", "beta 3\n").replace("alpha 20\n", "beta 20\n")


def _session(count: int = 4) -> FakeSession:
    session = FakeSession()
    for index in range(count):
        session.push(make_action(f"Edit {index}", path=f"src/m{index}.py", old=OLD, new=NEW))
    return session


def _app(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)


async def test_i_focuses_the_prompt_and_escape_returns_to_the_stack() -> None:
    app = _app(_session())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.focused, PromptInput))
        await pilot.press("x", "escape")
        await wait_until(pilot, lambda: isinstance(app.focused, PendingStack))
        assert app.screen.query_one("#prompt", PromptInput).value == "x"


async def test_d_focuses_the_diff() -> None:
    app = _app(_session())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.focused, DiffView))


async def test_g_and_shift_g_jump_to_the_ends_of_the_stack() -> None:
    app = _app(_session(5))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("G")
        await wait_until(pilot, lambda: app.stack.cursor == 4)
        assert app.stack.selected_id == "pa-1"
        await pilot.press("g")
        await wait_until(pilot, lambda: app.stack.cursor == 0)
        assert app.stack.selected_id == "pa-5"


async def test_slash_searches_the_diff_with_f3_for_the_next_match() -> None:
    app = _app(_session(1))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d", "slash")
        await wait_until(pilot, lambda: isinstance(app.focused, SearchInput))
        # While searching the footer offers next / previous (and `n` stays discard).
        await pilot.press(*"beta", "enter")
        diff = app.preview.diff_view
        await wait_until(pilot, lambda: diff.search_hit is not None)
        first = diff.search_hit
        assert first is not None and "beta 3" in diff.plain_lines()[first]
        assert app.check_action("search_step", (1,)) is True
        await pilot.press("f3")
        await wait_until(pilot, lambda: diff.search_hit != first)
        assert diff.search_hit is not None and "beta 20" in diff.plain_lines()[diff.search_hit]
        await pilot.press("shift+f3")
        await wait_until(pilot, lambda: diff.search_hit == first)
        await pilot.press("escape")
        await wait_until(pilot, lambda: diff.search_hit is None)
        assert app.check_action("search_step", (1,)) is False


async def test_the_search_bar_counts_the_matches_and_says_which_is_shown() -> None:
    app = _app(_session(1))
    async with app.run_test(size=SIZE) as pilot:
        bar = app.query_one(SearchBar)
        assert not bar.display or not bar.has_class("-active")
        await pilot.press("d", "slash")
        await wait_until(pilot, lambda: isinstance(app.focused, SearchInput))
        assert bar.has_class("-active") and bar.count == ""
        diff = app.preview.diff_view
        total = sum("beta" in line.casefold() for line in diff.plain_lines())
        assert total >= 2
        await pilot.press(*"beta")
        # While typing: how many there are, none shown yet.
        await wait_until(pilot, lambda: bar.count == f"{total} matches")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bar.count == f"1 of {total}")
        await pilot.press("f3")
        await wait_until(pilot, lambda: bar.count == f"2 of {total}")
        await pilot.press("shift+f3", "shift+f3")
        # Back past the first: it wraps to the last.
        await wait_until(pilot, lambda: bar.count == f"{total} of {total}")
        rendered = str(app.query_one("#search-count", Static).render())
        assert rendered == f"{total} of {total}"
        await pilot.press("slash", "home", "ctrl+k", *"zzz-none")
        await wait_until(pilot, lambda: bar.count == "no match")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not bar.has_class("-active"))
        assert bar.count == ""


async def test_slash_searches_the_activity_when_it_has_focus() -> None:
    session = _session(1)
    app = _app(session)
    async with app.run_test(size=SIZE) as pilot:
        session.emit(ToolStart(tool_call_id="c1", name="grep", args={"pattern": "needle"}))
        await wait_until(pilot, lambda: "needle" in app.activity.plain)
        app.activity.focus()
        await pilot.press("slash", *"needle", "enter")
        await wait_until(pilot, lambda: app.activity.search_hit is not None)
        assert isinstance(app.focused, ActivityLog)
        hit = app.activity.search_hit
        assert hit is not None and "needle" in app.activity.lines[hit].plain


async def test_enter_expands_an_activity_entry_and_folds_it_again() -> None:
    session = FakeSession()
    app = _app(session)
    full = "rewrote 2 files\nleft out src/bad.py: the rewrite would not parse (line 3)"
    async with app.run_test(size=SIZE) as pilot:
        session.emit(ToolStart(tool_call_id="c1", name="ast_edit", args={"path": "src"}))
        session.emit(
            ToolEnd(
                tool_call_id="c1",
                name="ast_edit",
                result=ToolResult.text_result(full, details={"left_out": ["src/bad.py"]}),
                is_error=False,
            )
        )
        await wait_until(pilot, lambda: "rewrote 2 files" in app.activity.plain)
        log = app.activity
        assert "would not parse" not in "\n".join(line.plain for line in log.lines)
        log.focus()
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: "would not parse" in "\n".join(line.plain for line in log.lines)
        )
        assert "left_out" in "\n".join(line.plain for line in log.lines)
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: "would not parse" not in "\n".join(line.plain for line in log.lines)
        )
        # The entry above (the call) expands to its full arguments.
        await pilot.press("k", "enter")
        await wait_until(
            pilot, lambda: any(line.plain.strip() == '"path": "src"' for line in log.lines)
        )


def test_the_badge_is_the_sources_canonical_string() -> None:
    def sourced(source: Source | None) -> PendingAction:
        return make_action("Edit").stamped(source=source)

    assert action_source(sourced(None)) == "agent"
    assert action_source(sourced(Source("exec", "exec"))) == "exec"
    assert action_source(sourced(Source("sdk", ""))) == "sdk"
    assert action_source(sourced(Source("acp", "gemini", "s"))) == "acp:gemini"
    actions = [sourced(None), sourced(Source("mcp", "zed")), sourced(None)]
    assert source_counts(actions) == (("agent", 2), ("mcp:zed", 1))


async def test_f_filters_the_stack_by_source_and_the_status_line_counts_them() -> None:
    session = FakeSession()
    for index in range(4):
        action = make_action(f"Edit {index}", path=f"src/m{index}.py")
        if index % 2:
            action = action.stamped(source=Source("mcp", "zed"))
        session.push(action)
    app = _app(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 4)
        line = app.status_line.render().plain
        assert "4 pending (mcp:zed 2, agent 2)" in line
        assert "‹mcp:zed›" in app.stack.render_line(0).text
        await pilot.press("f")
        await wait_until(pilot, lambda: app.stack.source_filter == "mcp:zed")
        assert [row.action_id for row in app.stack.rows] == ["pa-4", "pa-2"]
        # The top of the whole queue stays what y/n act on.
        assert app.stack.top_id == "pa-4"
        await pilot.press("f")
        await wait_until(pilot, lambda: app.stack.source_filter == "agent")
        assert app.stack.top_id == "pa-4"
        assert "▶ top" not in app.stack.render_line(0).text
        await pilot.press("f")
        await wait_until(pilot, lambda: app.stack.source_filter is None)
        assert len(app.stack.rows) == 4


async def test_u_is_greyed_out_when_there_is_nothing_to_undo() -> None:
    session = _session(1)
    session.undo_available = False
    app = _app(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.check_action("undo", ()) is None)
        await pilot.press("u")
        await pilot.pause()
        assert session.undos == 0
        session.undo_available = True
        await pilot.press("y")
        await wait_until(pilot, lambda: app.check_action("undo", ()) is True)


def test_find_row_wraps_and_ignores_case() -> None:
    rows = ["Alpha", "beta", "ALPHA"]
    assert find_row(rows, "alpha", 1, 1) == 2
    assert find_row(rows, "alpha", 3, 1) == 0
    assert find_row(rows, "alpha", 1, -1) == 0
    assert find_row(rows, "gamma", 0, 1) is None
