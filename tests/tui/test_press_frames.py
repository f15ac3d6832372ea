"""Pilot: a press's states each show in one step -- the footer's keys grey and light in the
handler that changed them (with the resolve bar's buttons), and a diff whose lexer is at
hand paints coloured at once (issue 44's `y`, sixth pass)."""

from __future__ import annotations

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from redline.tui.app import RedlineApp

SIZE = (160, 40)


def app_for(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]


def footer_state(app: RedlineApp) -> dict[str, bool]:
    """The inbox footer's keys by action: True while greyed out."""
    return {key.action: key.disabled for key in app.inbox.query(FooterKey) if key.action}


async def test_the_footers_keys_follow_the_busy_state_in_the_same_step_as_the_buttons() -> None:
    session = FakeSession()
    session.push(make_action("fresh edit"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        # Settled: the diff's keys (`s`, context) come with its file, a step after the action.
        await wait_until(pilot, lambda: "toggle_split" in footer_state(app))
        await pilot.pause()
        inbox = app.inbox
        apply = inbox.query_one("#apply", Button)
        idle = footer_state(app)
        assert not apply.disabled
        for busy in (True, False):
            # No await between the change and the look: nothing waits for a message hop.
            inbox.busy = busy
            inbox._update_controls()
            at_once = footer_state(app)
            assert apply.disabled is busy
            await pilot.pause()
            assert footer_state(app) == at_once  # what it settles to, shown at once
            if busy:
                assert at_once != idle  # busy greys some keys


async def test_a_diff_paints_coloured_once_the_first_lexer_lookup_is_done() -> None:
    session = FakeSession()
    session.push(make_action("first", path="src/one.py"))
    session.push(make_action("second", path="src/two.py", old="b = 1\n", new="b = 'x'\n"))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        diff = app.preview.diff_view
        await wait_until(pilot, lambda: diff.first_paint_at is not None)
        # The process's first diff: plain, then coloured after the frame.
        await wait_until(pilot, lambda: not diff._wanted and not diff._highlight_scheduled)
        coloured_first = [line for line in diff._highlighted.values() if line.spans]
        assert coloured_first
        shown = app.preview.action
        await pilot.press("j")  # the next action
        await wait_until(pilot, lambda: app.preview.action is not shown)
        await wait_until(pilot, lambda: diff.first_paint_at is not None)
        # Its lines painted afresh (no await): coloured in that paint, none left for later.
        diff._strips.clear()
        diff._highlighted.clear()
        for y in range(diff.row_count):
            diff.render_line(y)
        assert not diff._wanted and not diff._highlight_scheduled
        assert any(line.spans for line in diff._highlighted.values())
