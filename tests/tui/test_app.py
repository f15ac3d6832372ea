"""Pilot tests: the real app driven by keys and clicks over a fake session."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import (
    FakeSession,
    FakeWatcher,
    PluginProblem,
    make_action,
    multi_file_preview,
    wait_for_abort_script,
)

from redline.review.events import MessageDelta, PluginFailed, ToolStart
from redline.review.resolve import ResolveOutcome
from redline.tui.app import RedlineApp
from redline.tui.messages import ResolutionFinished, StackChanged
from redline.tui.screens.confirm import ConfirmScreen
from redline.tui.screens.help import HelpScreen
from redline.tui.screens.trust import TrustScreen
from redline.tui.widgets.pending_stack import PendingStack
from redline.tui.widgets.reason_input import ReasonInput

SIZE = (140, 40)


def stacked(*labels: str, applied: list[str] | None = None) -> FakeSession:
    session = FakeSession()
    for label in labels:
        session.push(make_action(label, applied=applied))
    return session


def app_for(session: FakeSession, **kwargs: object) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher, **kwargs)  # type: ignore[arg-type]


async def test_apply_from_key_with_reason_reaches_session() -> None:
    applied: list[str] = []
    session = stacked("first", "second", applied=applied)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert app.focused is app.stack
        await pilot.press("r")
        assert isinstance(app.focused, ReasonInput)
        # Escape keeps the text for the next y (Enter would discard with it).
        await pilot.press(*"looks right", "escape")
        assert app.focused is app.stack
        assert app.resolve_bar.reason == "looks right"
        await pilot.press("y")
        await wait_until(pilot, lambda: session.store.count == 1)
        assert session.resolutions == [("apply", "looks right", "pa-2", "human")]
        assert applied == ["second"]
        await wait_until(pilot, lambda: "APPLIED" in app.activity.plain)
        assert "reason: looks right" in app.activity.plain
        await wait_until(pilot, lambda: app.resolve_bar.reason == "")


async def test_discard_from_key_and_escape_keeps_reason() -> None:
    session = stacked("only")
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r", *"not needed", "escape")
        assert app.focused is app.stack
        assert app.resolve_bar.reason == "not needed"
        await pilot.press("n")
        await wait_until(pilot, lambda: not session.store.has_pending)
        assert session.resolutions == [("discard", "not needed", "pa-1", "human")]
        await wait_until(pilot, lambda: "DISCARDED" in app.activity.plain)


async def test_apply_and_discard_from_buttons() -> None:
    applied: list[str] = []
    session = stacked("bottom", "top", applied=applied)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#discard")
        await wait_until(pilot, lambda: session.store.count == 1)
        await pilot.click("#reason")
        await pilot.press(*"ship it")
        await pilot.click("#apply")
        await wait_until(pilot, lambda: session.store.count == 0)
        assert [r[:3] for r in session.resolutions] == [
            ("discard", "no reason given", "pa-2"),
            ("apply", "ship it", "pa-1"),
        ]
        assert applied == ["bottom"]


async def test_lifo_order() -> None:
    applied: list[str] = []
    session = stacked("a", "b", "c", applied=applied)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert [row.label for row in app.stack.rows] == ["c", "b", "a"]
        for remaining in (2, 1, 0):
            await pilot.press("y")
            await wait_until(
                pilot, lambda r=remaining: session.store.count == r and not app.inbox.busy
            )  # type: ignore[misc]
        assert applied == ["c", "b", "a"]
        assert app.check_action("apply_top", ()) is None


async def test_push_during_y_still_applies_the_action_shown() -> None:
    applied: list[str] = []
    session = stacked("seen", applied=applied)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert app.stack.top_id == "pa-1"
        # The agent pushes while the person presses y: y acts on what the screen showed.
        session.store.push(make_action("sneaky", applied=applied))
        app.inbox.action_apply_top()
        await wait_until(pilot, lambda: applied == ["seen"])
        assert session.resolutions[0][2] == "pa-1"
        await wait_until(pilot, lambda: app.stack.top_id == "pa-2")
        assert session.store.count == 1


async def test_stale_refusal_and_repreview() -> None:
    applied: list[str] = []
    session = stacked("edit app", applied=applied)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        watcher = FakeWatcher.instances[-1]
        assert watcher.started and watcher.root == session.cwd
        watcher.fire("src/app.py")
        await wait_until(pilot, lambda: bool(app.stack.rows) and app.stack.rows[0].stale)
        # y stays live on a stale action so that pressing it can say why nothing happened.
        assert app.check_action("apply_top", ()) is True
        assert app.query_one("#apply").disabled
        await pilot.press("y")
        await wait_until(
            pilot, lambda: any("was not applied" in str(n.message) for n in app._notifications)
        )
        assert session.resolutions == [] and applied == []
        # Staleness that lands after the app looked is refused by the session itself.
        app.inbox.busy = True
        app.inbox._resolve_worker("apply", "pa-1", "no reason given")
        await wait_until(pilot, lambda: "APPLY FAILED" in app.activity.plain)
        assert "stale" in app.activity.plain and applied == []
        await pilot.press("p")
        await wait_until(pilot, lambda: bool(app.stack.rows) and not app.stack.rows[0].stale)
        assert app.stack.top_id == "pa-2"
        await pilot.press("y")
        await wait_until(pilot, lambda: applied == ["edit app"])


async def test_failed_apply_keeps_action_and_says_why() -> None:
    session = FakeSession()
    session.push(make_action("will fail", fail_with="disk full"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("y")
        await wait_until(pilot, lambda: "APPLY FAILED" in app.activity.plain)
        assert "disk full" in app.activity.plain
        assert session.store.count == 1


async def test_undo_tells_session() -> None:
    session = FakeSession()
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("u")
        await wait_until(pilot, lambda: session.undos == 1 and "undone" in app.activity.plain)


async def test_stop_agent_drops_late_events() -> None:
    session = FakeSession(script=wait_for_abort_script)
    app = app_for(session, initial_prompt="go")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Working on it" in app.activity.plain)
        assert app.agent_state == "running"
        await pilot.press("ctrl+x")
        assert app.agent_state == "stopped"
        await wait_until(pilot, lambda: session.aborted.is_set())
        session.emit(MessageDelta(text="LATE TEXT"))
        await pilot.pause(0.05)
        assert "LATE TEXT" not in app.activity.plain
        assert app.agent_state == "stopped"
        assert session.prompts == ["go"]


async def test_quit_while_agent_runs_aborts_and_exits() -> None:
    session = FakeSession(script=wait_for_abort_script)
    app = app_for(session, initial_prompt="go")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.agent_state == "running" and session.running)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, timeout=60)
    assert session.aborted.is_set()


async def test_quit_never_hangs_on_a_stuck_agent() -> None:
    release = threading.Event()

    def stuck(session: FakeSession, _text: str | None) -> str:
        # Stuck far longer than the hang guard below: quitting must not wait for it.
        release.wait(600)
        return "done"

    session = FakeSession(script=stuck)
    app = app_for(session, initial_prompt="go")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: session.running, timeout=60)
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: not app.is_running, timeout=60)
    finally:
        release.set()


@pytest.mark.parametrize("answer", ["y", "ctrl+q"])
async def test_quit_with_pending_asks_first(answer: str) -> None:
    # ctrl+q on the question answers it: a second identical question never stacks.
    session = stacked("keep me")
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert app.is_running and not isinstance(app.screen, ConfirmScreen)
        await pilot.press("ctrl+q")
        await pilot.press(answer)
        await wait_until(pilot, lambda: not app.is_running)
    assert [action.label for action in session.store.snapshot()] == ["keep me"]


async def test_trust_question_then_prompt() -> None:
    session = FakeSession(untrusted_plugin_dir=Path("/workspace/demo/.redline/tools"))
    app = app_for(session, initial_prompt="hello")
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, TrustScreen)
        assert session.prompts == []
        await pilot.press("t")
        await wait_until(pilot, lambda: session.trusted and session.prompts == ["hello"])


async def test_declining_trust_still_runs() -> None:
    session = FakeSession(untrusted_plugin_dir=Path("/workspace/demo/.redline/tools"))
    app = app_for(session, initial_prompt="hello")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await wait_until(pilot, lambda: session.prompts == ["hello"])
        assert not session.trusted
        assert "not loaded" in app.activity.plain


async def test_plugin_errors_are_shown() -> None:
    session = FakeSession(
        plugin_errors=[
            PluginProblem(".redline/tools/bad.py", "SyntaxError: invalid syntax (line 3)")
        ]
    )
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert "PLUGIN ERROR" in app.activity.plain
        assert "bad.py" in app.activity.plain and "SyntaxError" in app.activity.plain
        session.emit(PluginFailed(path="tools/other.py", message="no factory", source="path"))
        await wait_until(pilot, lambda: "no factory" in app.activity.plain)


async def test_human_resolver_resumes_when_stack_empties() -> None:
    def propose(session: FakeSession, _text: str | None) -> str:
        session.emit(MessageDelta(text="Proposing a change.\n"))
        session.push(make_action("proposal"))
        return "awaiting_review"

    def finish(session: FakeSession, _text: str | None) -> str:
        session.emit(MessageDelta(text="All done."))
        return "done"

    session = FakeSession(script=propose, resume_script=finish)
    app = app_for(session, initial_prompt="fix it")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.agent_state == "waiting for review")
        await pilot.press("y")
        await wait_until(pilot, lambda: session.resumes == 1 and app.agent_state == "idle")
        assert "All done." in app.activity.plain


async def test_prompt_box_talks_to_agent() -> None:
    session = FakeSession()
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#prompt")
        await pilot.press(*"rename foo", "enter")
        await wait_until(
            pilot, lambda: session.prompts == ["rename foo"] and app.agent_state == "idle"
        )
        assert app.focused is app.stack


async def test_event_flood_is_batched() -> None:
    session = FakeSession()
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:

        def flood() -> None:
            for index in range(3000):
                session.emit(
                    ToolStart(tool_call_id=f"c{index}", name="read", args={"path": f"f{index}.py"})
                )

        thread = threading.Thread(target=flood)
        thread.start()
        thread.join()
        await wait_until(pilot, lambda: "f2999.py" in app.activity.plain)
        assert len(app.activity.lines) == 3000


async def test_preview_files_split_and_context() -> None:
    session = FakeSession()
    session.push(make_action("three files", preview=multi_file_preview(), source="batch_rename"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        diff = app.preview.diff_view
        assert any("x = 2" in line for line in diff.plain_lines())
        await pilot.press("right_square_bracket")
        assert app.preview.file_index == 1
        assert any("new file" in line for line in diff.plain_lines())
        await pilot.press("right_square_bracket")
        assert any("rename from docs/old.md" in line for line in diff.plain_lines())
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.preview.file_index == 0
        await pilot.press("s")
        assert diff.split and "│" in diff.plain_lines()[-1]
        await pilot.press("plus")
        assert diff.context == 10


async def test_non_file_action_shows_details_and_help_opens() -> None:
    session = FakeSession()
    session.push(
        make_action("notify team", details={"channel": "#dev", "text": "deploy"}, source="notify")
    )
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        assert any('"channel": "#dev"' in line for line in app.preview.diff_view.plain_lines())
        assert app.check_action("step_file", ()) is None
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_apply_all_stops_at_stale() -> None:
    applied: list[str] = []
    session = stacked("a", "b", "c", applied=applied)
    session.store.mark_stale("pa-2", "src/app.py changed")
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # let the first mount finish before driving actions directly
        app.inbox.action_apply_all()
        await wait_until(pilot, lambda: not app.inbox.busy and applied == ["c"])
        assert session.store.count == 2
        app.inbox.action_discard_all()
        await wait_until(pilot, lambda: not session.store.has_pending)


async def test_late_selection_after_shutdown_is_ignored() -> None:
    # A PendingStack.Selected still queued when the screens are gone must not raise
    # ScreenStackError from check_action (seen as a flaky failure at test shutdown).
    session = stacked("a", "b")
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.exit(0)
        assert app.check_action("apply_top", ()) is False
        app.inbox._stack_selected(PendingStack.Selected("pa-1"))
    assert app.screen_stack == []
    assert app.check_action("apply_top", ()) is False
    app.inbox._stack_selected(PendingStack.Selected("pa-1"))
    app.on_stack_changed(StackChanged())


async def test_a_queue_report_while_a_test_shuts_the_app_down_is_ignored() -> None:
    # run_test's end shuts the app down without app.exit(): it stops running first, then
    # removes the widgets while the screen is still on the stack. A StackChanged (the
    # queue's report of a decision's writes) handled then found the preview's header gone
    # (NoMatches, a flaky failure at test shutdown under load).
    session = stacked("a", "b")
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.top_id is not None)
        app._running = False  # as App._shutdown does first
        for child in list(app.preview.children):
            await child.remove()
        session.store.pop()  # the top decided meanwhile: the next is to be shown
        app.on_stack_changed(StackChanged())  # raised NoMatches before
        app.inbox.on_resolution_finished(
            ResolutionFinished("apply", "pa-2", "", ResolveOutcome("applied", "done"))
        )
        # The store's own report of the pop is still queued: handled by the shutdown, as
        # the queue's report was in the flaky runs.


async def test_refused_undo_is_logged_once() -> None:
    session = FakeSession()
    session.undo_refusal = "Nothing to undo in /workspace/demo."
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("u")
        # The session's notice arrives before the command's outcome clears the busy flag.
        await wait_until(
            pilot, lambda: "Nothing to undo" in app.activity.plain and not app.inbox.busy
        )
        await pilot.pause()
        assert app.activity.plain.count("Nothing to undo") == 1


async def test_keys_follow_reactive_state() -> None:
    session = stacked("only")
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.inbox.controls.has_top and app.check_action("apply_top", ()) is True
        await pilot.press("y")
        await wait_until(pilot, lambda: not session.store.has_pending and not app.inbox.busy)
        assert not app.inbox.controls.has_top
        assert app.check_action("apply_top", ()) is None
        assert app.check_action("stop_agent", ()) is None
