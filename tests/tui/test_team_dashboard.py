"""The team dashboard's look and its offline state, fed through a small fake of the team
queue (no PostgreSQL: the behaviour against a real server is tests/teamqueue/
test_team_dashboard.py). Regenerate the picture with ``--snapshot-update``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.tui.conftest import wait_until
from textual.pilot import Pilot

from redline.tui.team.app import TeamApp
from redline.tui.team.status import TeamStatus
from redline.tui.widgets.reason_input import ReasonInput

SIZE = (130, 30)
DIFF = (
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n import os\n"
    "-print('hi')\n+log.info('hi')\n x = 1\n"
)


def action(number: int, ws: str, path: str, label: str, source: str = "exec") -> dict[str, Any]:
    return {
        "id": f"pa-{number}@{ws}",
        "workspace": {"id": ws, "path": path},
        "local_id": f"pa-{number}",
        "label": label,
        "source": source,
        "applied_by": "safe_apply",
        "files": ["src/app.py"],
        "added": 1,
        "removed": 1,
        "created_at": "2026-01-02T03:04:05+00:00",
        "state": "pending",
        "decision": None,
        "decided_by": None,
        "decided_at": None,
        "reason": "",
        "result": "",
        "finished_at": None,
        "patch_hash": "p",
        "base_hash": "b",
    }


@dataclass(frozen=True)
class Outcome:
    won: bool
    text: str


class FakeTeamQueue:
    """Rows in memory; ``watch`` reports once, then waits to be stopped. ``online`` False:
    the watch reports the database unreachable instead."""

    url = "postgresql://***@db.example/team"

    def __init__(self, rows: list[dict[str, Any]], *, online: bool = True) -> None:
        self.rows = rows
        self.online = online
        self.decided: list[tuple[str, str, str]] = []
        self.view_hashes: list[str] = []
        self.shows: set[str] | None = None  # None: every action can be shown

    def actions(self) -> list[dict[str, Any]]:
        return list(self.rows)

    def show(self, team_id: str) -> dict[str, Any]:
        from redline.teamqueue.settings import TeamQueueError

        if self.shows is not None and team_id not in self.shows:
            raise TeamQueueError(f"cannot read {team_id}")
        found = next(r for r in self.rows if r["id"] == team_id)
        return found | {"diff": DIFF, "view_hash": f"view-of-{team_id}"}

    def decide(self, team_id: str, verb: str, reason: str, view_hash: str) -> Outcome:
        self.decided.append((team_id, verb, reason))
        self.view_hashes.append(view_hash)
        return Outcome(True, f"Decided: {team_id} is to be {verb}ed, by alice")

    def watch(
        self,
        stop: threading.Event,
        on_rows: Callable[[list[dict[str, Any]]], object],
        on_status: Callable[[bool, str], object],
    ) -> None:
        if self.online:
            on_status(True, "")
            on_rows(self.actions())
        else:
            on_status(False, "cannot connect to the team queue (postgresql://***@db/team)")
        stop.wait()

    def close(self) -> None:
        pass


ROWS = [
    action(2, "g1a2b3c4d5e6", "/home/ann/api", "Rename print to log.info", "acp:gemini"),
    action(1, "g1a2b3c4d5e6", "/home/ann/api", "Edit src/app.py"),
    action(1, "w9f8e7d6c5b4", "/srv/ci/web", "Fix the build", "mcp:cursor"),
]


def status(app: TeamApp) -> str:
    return str(app.query_one(TeamStatus).render())


def test_the_team_dashboard_look(snap_compare: Any) -> None:
    app = TeamApp(FakeTeamQueue(ROWS), reviewer="alice")  # type: ignore[arg-type]

    async def shown(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.detail.team_id == ROWS[0]["id"])
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=shown)


async def test_offline_is_said_and_nothing_can_be_decided() -> None:
    queue = FakeTeamQueue(ROWS, online=False)
    app = TeamApp(queue, reviewer="alice")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "offline: cannot connect" in status(app))
        assert "(retrying)" in status(app) and app.action_list.selected_id is None
        await pilot.press("y")
        assert "Nothing selected" in status(app) and queue.decided == []
    assert app.watch_stopped.wait(30), "the watch thread outlived the dashboard"


async def test_untrusted_text_from_the_database_is_drawn_escaped() -> None:
    evil = action(1, "g1", "/tmp/\x1b[2Jws", "Edit \x1b]0;pwned\x07 a.txt")
    app = TeamApp(FakeTeamQueue([evil]), reviewer="alice")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.detail.team_id == "pa-1@g1")
        prompt = str(app.action_list.options[0].prompt)
        assert "\x1b" not in prompt and "\\x1b]0;pwned\\x07" in prompt
        header = str(app.query_one("#team-header").render())
        assert "\x1b" not in header and "/tmp/\\x1b[2Jws" in header


async def test_y_applies_the_selected_with_the_reason_and_j_moves() -> None:
    queue = FakeTeamQueue(ROWS)
    app = TeamApp(queue, reviewer="alice")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.detail.team_id == ROWS[0]["id"])
        await pilot.press("enter")  # Enter on the list decides nothing
        assert queue.decided == []
        # Tab from the list reaches the reason field, never the Apply button.
        await pilot.press("tab")
        assert isinstance(app.focused, ReasonInput)
        await pilot.press("escape")
        assert app.action_list.has_focus
        await pilot.press("j")
        await wait_until(pilot, lambda: app.detail.team_id == ROWS[1]["id"])
        await pilot.press("r", *"ok", "escape", "y")
        await wait_until(pilot, lambda: "Decided:" in status(app))
        assert queue.decided == [(ROWS[1]["id"], "apply", "ok")]
        # The decision carries the hash of the view the person read.
        assert queue.view_hashes == [f"view-of-{ROWS[1]['id']}"]
        # The reason went with that decision: the field is empty for the next.
        assert app.bar.reason == ""


async def test_a_late_highlight_after_a_lost_race_keeps_saying_who_decided() -> None:
    """The order a loaded machine produced: the list's highlight message for the action is
    handled after the lost decision deselected it, then the list empties. The header keeps
    saying who decided (it said "Nothing is pending" before the fix)."""
    from textual.widgets import OptionList

    from redline.tui.team.messages import DecisionMade, RowsArrived

    only = [ROWS[0]]
    app = TeamApp(FakeTeamQueue(only), reviewer="bob")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        team = only[0]["id"]
        await wait_until(pilot, lambda: app.detail.team_id == team)
        option = app.action_list.get_option_at_index(0)
        lost = f"{team} was already decided: apply by alice at 2026-12-05 10:00"
        app.deciding = team
        app.post_message(DecisionMade(team, False, lost))
        app.action_list.post_message(OptionList.OptionHighlighted(app.action_list, option, 0))
        app.post_message(RowsArrived([]))
        await wait_until(pilot, lambda: app.rows_seen >= 2)
        await pilot.pause()
        assert app.action_list.selected_id is None
        assert "already decided: apply by alice" in str(app.query_one("#team-header").render())


async def test_enter_in_the_reason_field_discards_and_the_next_key_is_a_key_again() -> None:
    """After Enter discards, the list has the focus: a y applies the next action rather than
    going into the reason field (it did: the field kept the focus)."""
    queue = FakeTeamQueue(ROWS)
    app = TeamApp(queue, reviewer="alice")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.detail.team_id == ROWS[0]["id"])
        await pilot.press("r", *"not now", "enter")
        await wait_until(pilot, lambda: "Decided:" in status(app))
        assert queue.decided == [(ROWS[0]["id"], "discard", "not now")]
        assert app.action_list.has_focus
        await wait_until(pilot, lambda: app.deciding is None)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(queue.decided) == 2)
        assert queue.decided[1][1] == "apply" and app.bar.reason == ""


async def test_a_narrow_terminal_stacks_the_list_above_the_diff() -> None:
    app = TeamApp(FakeTeamQueue(ROWS), reviewer="alice")  # type: ignore[arg-type]
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: app.detail.team_id == ROWS[0]["id"])
        await pilot.pause()
        listed_at, detail_at = app.action_list.region, app.detail.region
        assert detail_at.y >= listed_at.bottom and detail_at.width >= 50
        await pilot.resize_terminal(120, 30)
        await wait_until(pilot, lambda: app.detail.region.x >= app.action_list.region.right)


async def test_opened_on_one_workspace_it_shows_that_one_until_f() -> None:
    """`redline -C PATH --queue URL`: the workspace's own actions first; f cycles on."""
    app = TeamApp(FakeTeamQueue(ROWS), reviewer="alice", workspace="w9f8e7d6c5b4")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.detail.team_id == ROWS[2]["id"])
        assert [r["id"] for r in app.action_list.rows] == [ROWS[2]["id"]]
        assert "workspace w9f8e7d6c5b4" in status(app)
        await pilot.press("f")  # the next workspace by path: /srv/ci/web is the last
        await wait_until(pilot, lambda: len(app.action_list.rows) == 3)


async def test_nothing_is_decided_before_it_is_shown() -> None:
    """A decision binds the view the person read: an action whose diff never reached the
    screen is not sent."""
    queue = FakeTeamQueue(ROWS)
    queue.shows = set()
    app = TeamApp(queue, reviewer="alice")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, lambda: "Cannot show" in str(app.query_one("#team-header").render())
        )
        await pilot.press("y")
        assert "is not shown yet" in status(app) and queue.decided == []


async def test_the_top_line_says_who_you_are_connected_as() -> None:
    app = TeamApp(FakeTeamQueue(ROWS), reviewer="Alice A <a@x>")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.detail.team_id == ROWS[0]["id"])
        assert "connected as Alice A <a@x>" in status(app)
