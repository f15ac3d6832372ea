"""The team dashboard: the dashboard's one screen (the inbox) over the team queue's review
source, fed through a small fake of the team queue (no PostgreSQL: the behaviour against a
real server is tests/teamqueue/test_team_dashboard.py). Regenerate the picture with
``--snapshot-update``."""

from __future__ import annotations

from typing import Any

from tests.tui.conftest import wait_until
from tests.tui.team_fakes import ROWS, FakeTeamQueue, action
from textual.pilot import Pilot

from redline.tui.team.app import TeamApp
from redline.tui.widgets.reason_input import ReasonInput

SIZE = (130, 30)


def status(app: TeamApp) -> str:
    return str(app.inbox.status_line.render())


def told(app: TeamApp, text: str) -> bool:
    """Whether a notification or the activity log says ``text``."""
    return any(text in str(n.message) for n in app._notifications) or text in activity(app)


def activity(app: TeamApp) -> str:
    return app.inbox.activity.plain


def header(app: TeamApp) -> str:
    return str(app.inbox.query_one("#preview-header").render())


def diff(app: TeamApp) -> str:
    return "\n".join(app.inbox.preview.diff_view.plain_lines())


def test_the_team_dashboard_look(snap_compare: Any) -> None:
    app = TeamApp(FakeTeamQueue(ROWS), reviewer="alice")

    async def shown(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.shown_id == ROWS[0]["id"])
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=shown)


async def test_offline_is_said_and_nothing_can_be_decided() -> None:
    queue = FakeTeamQueue(ROWS, online=False)
    app = TeamApp(queue, reviewer="alice")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "offline: cannot connect" in status(app))
        assert "(retrying)" in status(app) and app.inbox.stack.selected_id is None
        await pilot.press("y")
        assert told(app, "Nothing is pending") and queue.decided == []
    assert app.watch_stopped.wait(30), "the watch thread outlived the dashboard"


async def test_untrusted_text_from_the_database_is_drawn_escaped() -> None:
    evil = action(1, "g1", "/tmp/\x1b[2Jws", "Edit \x1b]0;pwned\x07 a.txt")
    app = TeamApp(FakeTeamQueue([evil]), reviewer="alice")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.shown_id == "pa-1@g1")
        await pilot.pause()
        drawn = "".join(
            segment.text for y in range(2) for segment in app.inbox.stack.render_line(y)
        )
        assert "\x1b" not in drawn and "\\x1b]0;pwned" in drawn
        assert "\x1b" not in header(app) and "\\x1b]0;pwned\\x07" in header(app)
        assert "/tmp/\\x1b[2Jws" in header(app)


async def test_y_applies_the_selected_with_the_reason_and_j_moves() -> None:
    queue = FakeTeamQueue(ROWS)
    app = TeamApp(queue, reviewer="alice")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.shown_id == ROWS[0]["id"])
        assert "-print('hi')" in diff(
            app
        ) and "workspace ⌂ api  g1a2b3c4d5e6  /home/ann/api" in header(app)
        await pilot.press("enter")  # Enter on the list decides nothing
        assert queue.decided == []
        await pilot.press("j")
        await wait_until(pilot, lambda: app.shown_id == ROWS[1]["id"])
        await pilot.press("r", *"ok", "escape", "y")
        await wait_until(pilot, lambda: told(app, "Decided:"))
        assert queue.decided == [(ROWS[1]["id"], "apply", "ok")]
        # The decision carries the hash of the view the person read.
        assert queue.view_hashes == [f"view-of-{ROWS[1]['id']}"]
        # The reason went with that decision: the field is empty for the next.
        assert app.inbox.resolve_bar.reason == ""


async def test_keys_the_team_queue_cannot_serve_are_greyed_and_say_why() -> None:
    queue = FakeTeamQueue(ROWS)
    app = TeamApp(queue, reviewer="alice")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.shown_id == ROWS[0]["id"])
        inbox = app.inbox
        for key, name, why in (
            ("u", "undo", "redline undo"),
            ("e", "edit", "keeps no file contents"),
            ("space", "toggle_mark", "one action at a time"),
            ("i", "focus_prompt", "runs no agent"),
            ("c", "run_checks", "Checks run in the action's workspace"),
            ("s", "toggle_split", "the diff its workspace mirrored"),
        ):
            assert inbox.check_action(name, ()) is None, name  # greyed, shown in the footer
            await pilot.press(key)
            await wait_until(pilot, lambda why=why: told(app, why))
        # m (review conversation, not in the footer) says where comments are not kept.
        await pilot.press("m")
        await wait_until(pilot, lambda: told(app, "Comments are not kept in the team queue"))
        assert queue.decided == [] and inbox.stack.has_focus


async def test_a_lost_race_selects_nothing_and_says_who_decided() -> None:
    queue = FakeTeamQueue([ROWS[0]])
    team = ROWS[0]["id"]
    queue.taken[team] = f"{team} was already decided: apply by alice at 2026-12-05 10:00"
    app = TeamApp(queue, reviewer="bob")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.shown_id == team)
        await pilot.press("y")
        await wait_until(pilot, lambda: app.inbox.stack.selected_id is None)
        assert "already decided: apply by alice" in diff(app)
        assert told(app, "already decided: apply by alice")


async def test_enter_in_the_reason_field_discards_and_the_next_key_is_a_key_again() -> None:
    """After Enter discards, the list has the focus: a y applies the next action rather than
    going into the reason field."""
    queue = FakeTeamQueue(ROWS)
    app = TeamApp(queue, reviewer="alice")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.shown_id == ROWS[0]["id"])
        await pilot.press("r")
        assert isinstance(app.focused, ReasonInput)
        await pilot.press(*"not now", "enter")
        await wait_until(pilot, lambda: told(app, "Decided:"))
        assert queue.decided == [(ROWS[0]["id"], "discard", "not now")]
        assert app.inbox.stack.has_focus
        await wait_until(pilot, lambda: not app.inbox.busy)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(queue.decided) == 2)
        assert queue.decided[1][1] == "apply" and app.inbox.resolve_bar.reason == ""


async def test_a_narrow_terminal_shows_the_list_and_the_diff() -> None:
    app = TeamApp(FakeTeamQueue(ROWS), reviewer="alice")
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: app.shown_id == ROWS[0]["id"])
        await pilot.pause()
        stack, preview = app.inbox.stack.region, app.inbox.preview.region
        assert stack.height > 0 and preview.height > 0 and preview.width >= 50


async def test_opened_on_one_workspace_it_shows_that_one_until_f() -> None:
    """`redline -C PATH --queue URL`: the workspace's own actions first; f cycles on."""
    app = TeamApp(FakeTeamQueue(ROWS), reviewer="alice", workspace="w9f8e7d6c5b4")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.shown_id == ROWS[2]["id"])
        assert app.listed_ids == [ROWS[2]["id"]]
        assert "w9f8e7d6c5b4" in str(app.inbox.query_one("#stack-panel").border_title)
        # /srv/ci/web is the last workspace by path: f goes on (through the sources, where
        # the source steps through them too) until every action is listed again.
        for _press in range(5):
            await pilot.press("f")
            await pilot.pause()
            if len(app.listed_ids) == 3:
                break
        assert len(app.listed_ids) == 3
        await pilot.press("f")  # the first by path: /home/ann/api
        await wait_until(pilot, lambda: app.listed_ids == [ROWS[0]["id"], ROWS[1]["id"]])


async def test_nothing_is_decided_before_it_is_shown() -> None:
    """A decision binds the view the person read: an action whose diff never reached the
    screen is not sent."""
    queue = FakeTeamQueue(ROWS)
    queue.shows = set()
    app = TeamApp(queue, reviewer="alice")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Cannot show" in diff(app))
        await pilot.press("y")
        await wait_until(pilot, lambda: told(app, "is not shown yet"))
        assert queue.decided == []


async def test_the_top_line_says_who_you_are_connected_as() -> None:
    app = TeamApp(FakeTeamQueue(ROWS), reviewer="Alice A <a@x>")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.shown_id == ROWS[0]["id"])
        assert "connected as Alice A <a@x>" in status(app) and "online" in status(app)


async def test_the_help_greys_out_what_the_team_queue_cannot_do_and_says_why() -> None:
    from textual.widgets import Static

    from redline.tui.screens.help import HelpScreen

    app = TeamApp(FakeTeamQueue(ROWS), reviewer="alice")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.shown_id == ROWS[0]["id"])
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        cells = [str(cell.render()) for cell in app.screen.query(".what").results(Static)]
        assert any(text.startswith("not here: The team queue carries") for text in cells)
        assert any("runs no agent" in text for text in cells)
        assert any(text.startswith("apply the marked actions") for text in cells)  # y is live
