"""Pilot tests for the dashboard's decision flow: keys that must never apply by accident,
the selection when others resolve, marks, and the reasons refused keys give."""

from __future__ import annotations

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action

from redline.tui.app import RedlineApp

SIZE = (140, 40)


def app_for(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]


def notified(app: RedlineApp, text: str) -> bool:
    return any(text in str(note.message) for note in app._notifications)


async def test_tab_tab_enter_from_the_reason_field_never_applies() -> None:
    applied: list[str] = []
    session = FakeSession()
    for label in ("one", "two", "three", "four"):
        session.push(make_action(label, applied=applied))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.preview.action is not None)
        for tabs in (1, 2, 3):
            await pilot.press("r")
            await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "reason")
            await pilot.press(*"not now", *["tab"] * tabs)
            assert app.focused is None or app.focused.id not in ("apply", "discard")
            await pilot.press("enter")
            await pilot.press("escape")
            app.stack.focus()
            await pilot.pause()
        # However many Tabs came before Enter, nothing was applied.
        assert applied == []
        assert all(verb != "apply" for verb, *_ in session.resolutions)


async def test_enter_in_the_reason_field_discards_with_that_reason() -> None:
    applied: list[str] = []
    session = FakeSession()
    session.push(make_action("edit app", applied=applied))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r", *"wrong file", "enter")
        await wait_until(pilot, lambda: session.store.count == 0)
        assert session.resolutions == [("discard", "wrong file", "pa-1", "human")]
        assert applied == []
        await wait_until(pilot, lambda: app.resolve_bar.reason == "")
        assert app.focused is app.stack
