"""Pilot: what is greyed follows the selection and stays right under dialogs — the footer's
keys, the resolve bar's buttons, and the preview when nothing is selected."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action
from tests.tui.test_decision_flow import push_elsewhere, queued_session, resolve_elsewhere
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from redline.tui.app import RedlineApp
from redline.tui.screens.help import HelpScreen
from redline.tui.screens.quit import QuitScreen

SIZE = (120, 40)


def app_for(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]


def footer_keys(app: RedlineApp) -> dict[str, bool]:
    """The inbox footer's keys by action: True when live, False when greyed out."""
    return {
        key.action: not key.has_class("-disabled")
        for key in app.inbox.query(FooterKey)
        if key.action
    }


async def test_a_dialog_keeps_the_footers_greyed_and_hidden_keys() -> None:
    session = FakeSession()
    session.push(make_action("fresh edit"))
    session.undo_available = False
    app = app_for(session)
    # Wide enough for every footer key to fit.
    async with app.run_test(size=(240, 40)) as pilot:
        await wait_until(pilot, lambda: app.preview.action is not None)
        await wait_until(pilot, lambda: footer_keys(app).get("undo") is False)
        before = footer_keys(app)
        # Nothing is stale, nothing to undo, no run to stop: those keys are greyed.
        assert before["apply_top"] is True
        assert before["repreview"] is False and before["undo"] is False
        assert "search_step(1)" not in before  # only while searching
        for dialog, key in ((HelpScreen, "question_mark"), (QuitScreen, "ctrl+q")):
            await pilot.press(key)
            await wait_until(pilot, lambda d=dialog: isinstance(app.screen, d))  # type: ignore[misc]
            await pilot.pause()
            assert app.inbox.check_action("repreview", ()) is None
            assert app.inbox.check_action("search_step", (1,)) is False
            assert app.check_action("stop_agent", ()) is None
            assert footer_keys(app) == before
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.inbox)
        await pilot.pause()
        assert footer_keys(app) == before


async def test_the_resolve_buttons_are_grey_while_nothing_is_selected() -> None:
    session = FakeSession()
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        apply = app.resolve_bar.query_one("#apply", Button)
        discard = app.resolve_bar.query_one("#discard", Button)
        await wait_until(pilot, lambda: apply.disabled and discard.disabled)
        await pilot.pause()
        grey = (apply.rich_style.bgcolor, discard.rich_style.bgcolor)
        session.push(make_action("edit"))
        await wait_until(pilot, lambda: not apply.disabled and not discard.disabled)
        await pilot.pause()
        live = (apply.rich_style.bgcolor, discard.rich_style.bgcolor)
        # Live, the two buttons have their own colours; greyed, both take the panel's.
        assert live[0] != live[1]
        assert grey[0] == grey[1]
        assert grey[0] not in live and grey[1] not in live
        # Under a dialog they stay as they were.
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert not apply.disabled and not discard.disabled


async def test_the_preview_says_nothing_is_selected_while_others_wait(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\n")
    session, queue = queued_session(tmp_path)
    lower = push_elsewhere(tmp_path, "lower edit")
    push_elsewhere(tmp_path, "upper edit")
    app = app_for(session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stack.rows) == 2)
            # Moved off the top, the selection stays on its action; when that one goes,
            # nothing is selected.
            await pilot.press("j")
            await wait_until(pilot, lambda: app.stack.selected_id == lower)
            await resolve_elsewhere(tmp_path, lower, "discard", "")
            await wait_until(pilot, lambda: app.stack.selected_id is None)
            shown = "\n".join(app.preview.diff_view.plain_lines())
            assert "Nothing is selected (1 pending): pick an action with j / k" in shown
            assert "No pending actions" not in shown
            assert app.resolve_bar.query_one("#apply", Button).disabled
            await pilot.press("k")
            await wait_until(pilot, lambda: app.preview.action is not None)
            assert not app.resolve_bar.query_one("#apply", Button).disabled
    finally:
        queue.close()
