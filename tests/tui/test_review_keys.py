"""Pilot tests for reviewing at the grain people ask for: the selected action, hunks, edits."""

from __future__ import annotations

from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action, modify, multi_file_preview
from textual.widgets import TextArea

from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.tui.app import RedlineApp
from redline.tui.screens.confirm import ConfirmScreen
from redline.tui.screens.editor import LANGUAGES, EditorScreen, language_for
from redline.tui.widgets.file_list import FileList
from redline.workspace.preview import Preview

SIZE = (140, 40)
OLD = "".join(f"v{n} = {n}\n" for n in range(1, 21))
NEW = OLD.replace("v2 = 2\n", "v2 = 'two'\n").replace("v10 = 10\n", "v10 = 'ten'\n")
NEW = NEW.replace("v18 = 18\n", "v18 = 'eighteen'\n")


def app_for(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]


def three_hunks(label: str = "three hunks", applied: list[str] | None = None) -> PendingAction:
    return make_action(label, preview=Preview([modify("src/app.py", OLD, NEW)]), applied=applied)


def notified(app: RedlineApp, text: str) -> bool:
    return any(text in str(note.message) for note in app._notifications)


def bar_label(app: RedlineApp, which: str = "#apply") -> str:
    return str(app.query_one(which).label)  # type: ignore[attr-defined]


async def test_y_applies_the_selected_action_not_the_top() -> None:
    applied: list[str] = []
    session = FakeSession()
    session.push(make_action("lower", applied=applied))
    session.push(make_action("upper", applied=applied))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert bar_label(app) == "Apply pa-2 (y)"
        await pilot.press("j")
        await wait_until(pilot, lambda: app.preview.action is not None)
        await wait_until(pilot, lambda: app.preview.action.id == "pa-1")  # type: ignore[union-attr]
        assert bar_label(app) == "Apply pa-1 (y)"
        assert bar_label(app, "#discard") == "Discard pa-1 (n)"
        await pilot.press("y")
        await wait_until(pilot, lambda: applied == ["lower"])
        assert session.resolutions == [("apply", "no reason given", "pa-1", "human")]
        assert [action.id for action in session.store.snapshot()] == ["pa-2"]


async def test_n_discards_the_selected_action() -> None:
    session = FakeSession()
    session.push(make_action("lower"))
    session.push(make_action("upper"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("j", "n")
        await wait_until(pilot, lambda: session.store.count == 1)
        assert session.resolutions[0][:3] == ("discard", "no reason given", "pa-1")
        assert session.store.peek() is not None and session.store.peek().label == "upper"  # type: ignore[union-attr]


async def test_selection_follows_the_top_until_moved() -> None:
    session = FakeSession()
    session.push(make_action("one"))
    session.push(make_action("two"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert app.stack.selected_id == "pa-2"
        session.push(make_action("three"))
        await wait_until(pilot, lambda: app.stack.selected_id == "pa-3")
        await pilot.press("j")
        await wait_until(pilot, lambda: app.stack.selected_id == "pa-2")
        session.push(make_action("four"))
        await wait_until(pilot, lambda: app.stack.top_id == "pa-4")
        assert app.stack.selected_id == "pa-2"
        assert bar_label(app) == "Apply pa-2 (y)"


async def test_hunk_cursor_space_and_partial_apply() -> None:
    session = FakeSession()
    session.push(three_hunks())
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        diff = app.preview.diff_view
        assert diff.hunk_count == 3
        await pilot.press("right_curly_bracket")
        assert diff.hunk_cursor == 1
        await pilot.press("right_curly_bracket", "right_curly_bracket")
        assert diff.hunk_cursor == 3
        await pilot.press("right_curly_bracket")
        assert diff.hunk_cursor == 1  # wraps
        await pilot.press("left_curly_bracket")
        assert diff.hunk_cursor == 3
        await pilot.press("space")
        assert app.preview.selection() == ["src/app.py#3"]
        await pilot.press("left_curly_bracket", "space")
        assert app.preview.selection() == ["src/app.py#2", "src/app.py#3"]
        assert bar_label(app) == "Apply 2 of 3 hunks"
        assert bar_label(app, "#discard") == "Discard 2 of 3 hunks"
        y = app.screen.active_bindings["y"].binding
        footer = {y.key: y.description}
        assert footer == {"y": "Apply 2/3 hunks"}
        marked = [line for line in diff.plain_lines() if "●" in line]
        assert any("'ten'" in line for line in marked)
        assert any("'eighteen'" in line for line in marked)
        assert not any("'two'" in line for line in marked)
        # space again takes a hunk back out
        await pilot.press("space")
        assert app.preview.selection() == ["src/app.py#3"]
        await pilot.press("space")
        await pilot.press("y")
        await wait_until(pilot, lambda: bool(session.selections))
        assert session.selections == [("apply", "pa-1", ["src/app.py#2", "src/app.py#3"])]


async def test_n_on_a_selection_discards_only_those_hunks() -> None:
    session = FakeSession()
    session.push(three_hunks())
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d", "space")  # in the diff, no cursor yet: the first hunk
        assert app.preview.selection() == ["src/app.py#1"]
        await pilot.press("n")
        await wait_until(pilot, lambda: bool(session.selections))
        assert session.selections == [("discard", "pa-1", ["src/app.py#1"])]


async def test_space_in_the_file_list_picks_the_whole_file() -> None:
    session = FakeSession()
    session.push(make_action("three files", preview=multi_file_preview()))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(FileList).focus()
        await pilot.pause()
        await pilot.press("space")
        assert app.preview.selection() == ["src/app.py#1"]
        await pilot.press("right_square_bracket", "space")
        assert app.preview.selection() == ["src/app.py#1", "src/new_module.py"]
        assert bar_label(app) == "Apply 2 of 3 hunks"
        await pilot.press("space")
        assert app.preview.selection() == ["src/app.py#1"]


async def test_an_action_without_preview_resolves_only_as_a_whole() -> None:
    session = FakeSession()
    session.push(make_action("run migration", details={"command": "migrate"}))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert app.check_action("toggle_part", ()) is None
        assert app.check_action("step_hunk", (1,)) is None
        assert app.check_action("edit", ()) is None
        app.inbox.action_toggle_part()
        await wait_until(pilot, lambda: notified(app, "only as a whole"))
        assert "only as a whole" in str(app.query_one("#apply").tooltip)
        await pilot.press("y")
        await wait_until(pilot, lambda: session.store.count == 0)
        assert session.selections == []


async def test_editor_cancel_changes_nothing() -> None:
    session = FakeSession()
    session.push(three_hunks())
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        area = app.screen.query_one(TextArea)
        assert area.text == NEW and area.show_line_numbers
        assert area.language == "python"  # textual[syntax] highlights the proposed text
        area.insert("junk ")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditorScreen))
        assert session.edits == []
        assert session.store.peek() is not None and session.store.peek().id == "pa-1"  # type: ignore[union-attr]


async def test_editor_save_replaces_the_action() -> None:
    session = FakeSession()
    session.push(three_hunks())
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        area = app.screen.query_one(TextArea)
        area.load_text(NEW.replace("'ten'", "'TEN'"))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(session.edits))
        assert session.edits == [("pa-1", "src/app.py", NEW.replace("'ten'", "'TEN'"))]
        await wait_until(pilot, lambda: app.stack.top_id == "pa-2")
        assert "(edited)" in app.stack.rows[0].label
        # The activity logs the edit as an edit (not as a re-preview).
        await wait_until(pilot, lambda: "✎ edited pa-1 as pa-2" in app.activity.plain)
        assert "re-previewed" not in app.activity.plain


async def test_editor_warns_before_saving_python_that_does_not_parse() -> None:
    session = FakeSession()
    session.push(make_action("py edit", path="src/app.py", old="a = 1\n", new="a = 2\n"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        app.screen.query_one(TextArea).load_text("a = (\n")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "does not parse as Python" in app.screen.question  # type: ignore[attr-defined]
        await pilot.press("n")  # keep editing
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        assert session.edits == []
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: bool(session.edits))
        assert session.edits[0][2] == "a = (\n"


async def test_external_editor_is_not_offered_in_a_browser(monkeypatch: Any) -> None:
    session = FakeSession()
    session.push(three_hunks())
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert app.check_action("edit_external", ()) is True
        monkeypatch.setattr(type(app), "is_web", property(lambda _self: True))
        assert app.check_action("edit_external", ()) is None
        await pilot.pause()


async def test_stale_y_says_why_nothing_happened() -> None:
    session = FakeSession()
    session.push(make_action("edit app"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        FakeWatcher.instances[-1].fire("src/app.py")
        await wait_until(pilot, lambda: bool(app.stack.rows) and app.stack.rows[0].stale)
        await pilot.press("y")
        await wait_until(pilot, lambda: notified(app, "pa-1 was not applied: it is stale"))
        assert session.resolutions == []


async def test_quit_dialog_names_what_stays_and_what_ends() -> None:
    session = FakeSession()
    session.push(three_hunks("edit app"))

    def run(_reason: str) -> ToolResult:
        return ToolResult.text_result("ran")

    session.push(PendingAction("run the migration", run, details={"command": "migrate"}))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = app.screen.question  # type: ignore[attr-defined]
        assert "1 preview action stays queued" in question
        assert "end with this process" in question
        assert "pa-2 run the migration" in question
        assert "pa-1" not in question
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))


async def test_resume_from_the_palette_continues_the_session() -> None:
    session = FakeSession()
    session.push(make_action("pending"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        app.action_resume_session()
        await wait_until(pilot, lambda: notified(app, "Resolve this session's pending actions"))
        assert session.resumes == 0
        await pilot.press("y")
        await wait_until(pilot, lambda: session.store.count == 0)
        app.action_resume_session()
        await wait_until(pilot, lambda: session.resumes >= 1)


def test_the_editor_language_follows_the_suffix_in_any_case() -> None:
    available = set(TextArea.code_editor("").available_languages)
    # textual[syntax] is a dependency: every language the editor maps to is importable.
    assert set(LANGUAGES.values()) <= available
    cases = {
        "src/app.py": "python",
        "README.MD": "markdown",
        "Main.java": "java",
        "web/app.jsx": "javascript",
        "index.htm": "html",
        "pom.xml": "xml",
        "run.bash": "bash",
        "notes.txt": None,
        "Makefile": None,
    }
    for path, language in cases.items():
        assert language_for(path, available) == language, path
    assert language_for("src/app.py", set()) is None


async def test_the_editor_colours_the_proposed_code() -> None:
    session = FakeSession()
    session.push(three_hunks())
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        area = app.screen.query_one(TextArea)
        await pilot.pause()
        row = next(index for index, line in enumerate(NEW.splitlines()) if "=" in line)
        colours = {str(seg.style.color) for seg in area.render_line(row) if seg.style}
        # Line numbers, names, operators and literals: several colours, not one.
        assert len(colours) >= 3, colours
        await pilot.press("escape")


@pytest.mark.parametrize(
    ("raw_input", "shown"),
    [
        ({"command": "npm test", "description": "Run the tests"}, "$ npm test"),
        ({"command": ["bash", "-lc", "ls -la"], "cwd": "/w"}, "$ bash -lc 'ls -la'"),
    ],
)
async def test_an_agents_shell_permission_shows_the_command_line(
    raw_input: dict[str, object], shown: str
) -> None:
    session = FakeSession()
    details = {
        "source": {"kind": "acp", "name": "claude"},
        "tool_call_id": "t1",
        "kind": "execute",
        "raw_input": raw_input,
    }
    session.push(make_action("Run a command", details=details, source="acp:execute"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        diff = app.preview.diff_view
        await wait_until(pilot, lambda: app.preview.action is not None)
        lines = diff.plain_lines()
        assert shown in lines
        assert not any("raw_input" in line or "tool_call_id" in line for line in lines)
