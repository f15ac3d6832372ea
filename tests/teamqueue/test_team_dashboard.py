"""The team dashboard (`redline --queue URL`) driven with Pilot against a real PostgreSQL:
actions of several workspaces, apply and discard from the dashboard carried out by each
workspace's follower, two reviewers racing, and a proposal arriving live
(docs/team-queue.md)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
from tests.tui.conftest import wait_until
from textual.pilot import Pilot

from redline.teamqueue.client import TeamClient
from redline.teamqueue.follower import StepReport, TeamFollower
from redline.teamqueue.settings import team_id, workspace_id
from redline.tui.team.app import TeamApp

from .conftest import Team
from .helpers import make_workspace, open_queue, propose

pytestmark = pytest.mark.postgres
SIZE = (150, 40)


@dataclass
class Queue:
    """A team queue with one agent-host role (every workspace's follower) and a reviewer
    role per name, each granted with ``--name NAME`` (so decisions say ``by alice``)."""

    team: Team
    host_url: str
    reviewers: dict[str, str] = field(default_factory=dict)

    def url(self, name: str) -> str:
        if name not in self.reviewers:
            self.reviewers[name] = self.team.reviewer(name, name=name)[1]
        return self.reviewers[name]


@pytest.fixture
def q(team: Team) -> Queue:
    return Queue(team, team.host()[1])


def mirrored(ws: Path, url: str) -> None:
    """One pass of the workspace's follower: its proposals reach the team queue."""
    follow(ws, url)


def follow(ws: Path, url: str) -> list[tuple[str, str]]:
    """One pass of the workspace's own follower; (team id, state) of what it carried out.

    On a thread of its own, as `redline pending follow` runs: its apply runs an event loop,
    and these tests' own loop is running."""

    def one_pass() -> list[tuple[str, str]]:
        follower = TeamFollower(ws, url, workspace_id(ws))
        with psycopg.connect(url, autocommit=True) as conn:
            report = follower.step(conn)
        return [(o.team_id, o.state) for o in report.outcomes]

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(one_pass).result()


def row(q: Queue, team: str) -> dict[str, object]:
    with psycopg.connect(q.team.owner_url) as conn:
        cur = conn.execute(
            "SELECT a.*, d.decision, d.decided_name AS decided_by, d.reason"
            " FROM redline_actions a LEFT JOIN redline_decisions d ON d.id = a.decision_id"
            " WHERE a.team_id = %s",
            (team,),
        )
        found = cur.fetchone()
        assert found is not None, f"no row {team}"
        names = [d.name for d in cur.description or []]
        return dict(zip(names, found, strict=True))


def status_text(app: TeamApp) -> str:
    """The top line, the notifications and the activity log: what the person was told."""
    notes = [str(n.message) for n in app._notifications]
    return "\n".join([str(app.inbox.status_line.render()), *notes, app.inbox.activity.plain])


def listed(app: TeamApp) -> list[str]:
    return app.listed_ids


def shown_text(app: TeamApp) -> str:
    """What the preview shows: the diff, or the note in its place."""
    return "\n".join(app.inbox.preview.diff_view.plain_lines())


@asynccontextmanager
async def dashboard(q: Queue, reviewer: str) -> AsyncIterator[tuple[TeamApp, Pilot[int]]]:
    # Half an hour between full re-reads: whatever shows up live came by NOTIFY.
    client = TeamClient(q.url(reviewer), poll_seconds=1800)
    app = TeamApp(client, reviewer=client.whoami())
    async with app.run_test(size=SIZE) as pilot:
        yield app, pilot
    # The watch thread ends with the app (it checks its stop flag between waits).
    assert app.watch_stopped.wait(30), "the watch thread outlived the dashboard"


async def test_lists_two_workspaces_and_applies_through_the_follower(
    q: Queue, tmp_path: Path
) -> None:
    ws1 = make_workspace(tmp_path / "one")
    ws2 = make_workspace(tmp_path / "two", text="two\n")
    propose(ws1)
    propose(ws2)
    mirrored(ws1, q.host_url)
    mirrored(ws2, q.host_url)
    team1, team2 = team_id(workspace_id(ws1), "pa-1"), team_id(workspace_id(ws2), "pa-1")
    async with dashboard(q, "alice") as (app, pilot):
        await wait_until(pilot, lambda: set(listed(app)) == {team1, team2})
        assert "2 pending" in status_text(app)
        assert "connected as alice" in status_text(app)
        # Each row carries its workspace (badged by its folder) and its source.
        spaces = {row.id: (row.workspace, row.source) for row in app.rows()}
        assert spaces[team1][0] is not None and spaces[team1][0].path == str(ws1)
        assert spaces[team2][0] is not None and spaces[team2][0].path == str(ws2)
        assert spaces[team1][1].startswith("exec")
        drawn = "".join(
            segment.text for y in range(4) for segment in app.inbox.stack.render_line(y)
        )
        assert "⌂ one" in drawn and "⌂ two" in drawn and "‹exec" in drawn
        title = app.inbox.query_one("#stack-panel")
        # f: only the first workspace (by path), then the next, then all again.
        await pilot.press("f")
        assert listed(app) == [team1] and "1 of 2" in str(title.border_title)
        await pilot.press("f")
        assert listed(app) == [team2]
        await pilot.press("f")
        assert set(listed(app)) == {team1, team2}
        await pilot.press("f")  # back to workspace one, its action selected and shown
        await wait_until(pilot, lambda: app.shown_id == team1)
        diff = shown_text(app)
        assert "+more" in diff and "a.txt" in diff
        await pilot.press("r")
        await pilot.press(*"looks right")
        await pilot.press("escape")  # back to the list, the reason kept
        await pilot.press("y")
        await wait_until(pilot, lambda: "Decided:" in status_text(app))
        assert "by alice" in status_text(app)
        # The decision leaves the list live (its row is decided) ...
        await wait_until(pilot, lambda: team1 not in [r.id for r in app.rows()])
    got = row(q, team1)
    assert got["decision"] == "apply" and got["decided_by"] == "alice"
    assert got["reason"] == "looks right"
    # ... and only the workspace's own follower writes it, once.
    assert (ws1 / "a.txt").read_text() == "one\n"
    assert follow(ws1, q.host_url) == [(team1, "applied")]
    assert (ws1 / "a.txt").read_text() == "one\nmore\n"
    assert follow(ws2, q.host_url) == []  # nothing for the other workspace
    assert (ws2 / "a.txt").read_text() == "two\n"
    assert follow(ws1, q.host_url) == [] and (ws1 / "a.txt").read_text() == "one\nmore\n"


async def test_enter_in_the_reason_field_discards_with_the_reason(q: Queue, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    propose(ws)
    mirrored(ws, q.host_url)
    team = team_id(workspace_id(ws), "pa-1")
    async with dashboard(q, "carol") as (app, pilot):
        await wait_until(pilot, lambda: app.shown_id == team)
        # Tab from the reason field never reaches Apply: the buttons take no focus.
        assert not app.inbox.query_one("#apply").can_focus
        await pilot.press("r")
        await pilot.press(*"not needed")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Decided:" in status_text(app))
        assert "to be discarded, by carol" in status_text(app)
    got = row(q, team)
    assert (got["decision"], got["decided_by"], got["reason"]) == ("discard", "carol", "not needed")
    assert follow(ws, q.host_url) == [(team, "discarded")]
    assert (ws / "a.txt").read_text() == "one\n"


async def test_two_dashboards_racing_one_wins_the_other_is_told_who(
    q: Queue, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path / "ws")
    propose(ws)
    mirrored(ws, q.host_url)
    team = team_id(workspace_id(ws), "pa-1")
    async with dashboard(q, "alice") as (a, pa), dashboard(q, "bob") as (b, pb):
        await wait_until(pa, lambda: a.shown_id == team)
        await wait_until(pb, lambda: b.shown_id == team)
        # Both decide before either hears of the other.
        a.inbox.action_apply_top()
        b.inbox.action_discard_top()

        def settled(app: TeamApp) -> bool:
            text = status_text(app)
            return "Decided:" in text or "already decided" in text

        await wait_until(pa, lambda: settled(a))
        await wait_until(pb, lambda: settled(b))
        got = row(q, team)
        winner, loser = (a, b) if got["decided_by"] == "alice" else (b, a)
        assert "Decided:" in status_text(winner)
        how = f"already decided: {got['decision']} by {got['decided_by']} at "
        assert how in status_text(loser)
        # The loser's dashboard selects nothing rather than the next action.
        assert loser.inbox.stack.selected_id is None
        assert how in shown_text(loser)
    assert got["decided_by"] in ("alice", "bob")
    assert follow(ws, q.host_url) == [
        (team, "applied" if got["decision"] == "apply" else "discarded")
    ]


async def test_a_new_proposal_appears_without_a_key_press(q: Queue, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    async with dashboard(q, "alice") as (app, pilot):
        await wait_until(pilot, lambda: app.rows_seen >= 1 and "online" in status_text(app))
        assert listed(app) == [] and "Nothing is pending" in shown_text(app)
        seen = app.rows_seen
        # The workspace's follower mirrors a new proposal; its NOTIFY redraws the list.
        done = threading.Thread(target=lambda: (propose(ws), mirrored(ws, q.host_url)))
        done.start()
        await wait_until(pilot, lambda: len(listed(app)) == 1)
        done.join(30)
        assert app.rows_seen > seen
        team = team_id(workspace_id(ws), "pa-1")
        await wait_until(pilot, lambda: app.shown_id == team)  # the top is selected


async def test_decided_elsewhere_while_reading_it_says_who(q: Queue, tmp_path: Path) -> None:
    from redline.teamqueue.remote import decide

    ws = make_workspace(tmp_path / "ws")
    propose(ws)
    (ws / "b.txt").write_text("b\n")
    propose(ws, name="b.txt")
    mirrored(ws, q.host_url)
    ident = workspace_id(ws)
    async with dashboard(q, "alice") as (app, pilot):
        await wait_until(pilot, lambda: len(listed(app)) == 2)
        await wait_until(pilot, lambda: app.shown_id is not None)
        selected = app.inbox.stack.selected_id
        assert selected is not None
        with psycopg.connect(q.url("dave")) as conn:
            assert decide(conn, selected, "discard").won
        await wait_until(pilot, lambda: "already decided: discard by dave" in status_text(app))
        # Nothing selected: y now does nothing rather than act on the other action.
        assert app.inbox.stack.selected_id is None
        await pilot.press("y")
        await wait_until(pilot, lambda: "Nothing is selected" in status_text(app))
        other = ({team_id(ident, "pa-1"), team_id(ident, "pa-2")} - {selected}).pop()
        assert row(q, other)["state"] == "pending"
        await pilot.press("j")
        await wait_until(pilot, lambda: app.shown_id == other)


def test_the_watch_catches_up_after_losing_its_connection(pg_url: str, tmp_path: Path) -> None:
    """A proposal announced while the dashboard's watch is disconnected (its NOTIFY reaches
    no one) is in the first list after the reconnect."""
    open_queue(pg_url)
    ws = make_workspace(tmp_path / "ws")
    team = team_id(workspace_id(ws), "pa-1")
    lists: list[list[str]] = []
    states: list[bool] = []
    changed = threading.Condition()
    stop = threading.Event()

    def on_rows(rows: list[dict[str, object]]) -> None:
        with changed:
            lists.append([str(r["id"]) for r in rows])
            changed.notify_all()

    def on_status(online: bool, _text: str) -> None:
        if not online and states[-1:] != [False]:
            # Called on the watch's thread before it reconnects: the proposal and its
            # NOTIFY happen while nobody listens.
            propose(ws)
            mirrored(ws, pg_url)
        with changed:
            states.append(online)
            changed.notify_all()

    client = TeamClient(pg_url)
    # Half an hour between full re-reads: only the reconnect's catch-up can find it in time.
    thread = threading.Thread(
        target=client.watch,
        args=(stop, on_rows, on_status),
        kwargs={"poll_seconds": 1800},
        daemon=True,
    )
    thread.start()
    try:
        with changed:
            assert changed.wait_for(lambda: lists == [[]], timeout=60)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        with changed:
            assert changed.wait_for(lambda: [team] in lists, timeout=60), (lists, states)
        assert states[:3] == [True, False, True]
    finally:
        stop.set()
        thread.join(60)
        assert not thread.is_alive()


def test_redline_queue_url_opens_the_team_dashboard_from_any_folder(
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    from .conftest import PASSWORD
    from .helpers import cli

    opened: list[tuple[str, str | None]] = []

    def run(self: TeamApp) -> int:
        opened.append((self.reviewer, self.filter_workspace))
        return 0

    monkeypatch.setattr(TeamApp, "run", run)
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)  # a plain folder: not a workspace anyone mirrored
    code, _out, err = cli(capfd, "--queue", pg_url)
    assert code == 1 and "redline queue init" in err and PASSWORD not in err  # no schema yet
    code, _out, err = cli(capfd, "queue", "init", "--queue", pg_url)
    assert code == 0, err
    code, _out, err = cli(capfd, "--queue", pg_url)
    assert code == 0, err
    assert opened == [("redline_admin (not a reviewer here)", None)]  # every workspace
    open_queue(pg_url, name="Admin A")
    monkeypatch.setenv("REDLINE_REVIEWER", "erin")  # no longer names who decides
    code, _out, err = cli(capfd, "--queue", pg_url)
    assert code == 0 and opened[-1] == ("Admin A", None)
    assert "warning: $REDLINE_REVIEWER is ignored" in err
    # Only an explicit -C filters to that workspace.
    ws = make_workspace(tmp_path / "ws")
    code, _out, err = cli(capfd, "-C", str(ws), "--queue", pg_url)
    assert code == 0 and opened[-1] == ("Admin A", workspace_id(ws.resolve()))


async def test_two_reviewers_three_workspaces_each_change_written_once_where_it_was_made(
    q: Queue, tmp_path: Path
) -> None:
    """The issue's done-when: two dashboards as different reviewers, agents in three
    workspaces each followed live; every change is written only in its own workspace,
    exactly once."""
    spaces = [make_workspace(tmp_path / name, text=f"{name}\n") for name in ("w1", "w2", "w3")]
    (spaces[2] / "b.txt").write_text("b\n")
    for ws in spaces:
        propose(ws)
    propose(spaces[2], name="b.txt")
    ids = {ws: workspace_id(ws) for ws in spaces}
    plan = {  # team id → (reviewer, key)
        team_id(ids[spaces[0]], "pa-1"): ("alice", "y"),
        team_id(ids[spaces[1]], "pa-1"): ("bob", "y"),
        team_id(ids[spaces[2]], "pa-1"): ("alice", "n"),
        team_id(ids[spaces[2]], "pa-2"): ("bob", "y"),
    }
    outcomes: list[tuple[str, str]] = []
    lock = threading.Lock()

    def record(report: StepReport) -> None:
        with lock:
            outcomes.extend((o.team_id, o.state) for o in report.outcomes)

    stop = threading.Event()
    followers = [
        threading.Thread(
            target=TeamFollower(ws, q.host_url, ids[ws], poll_seconds=1800).run,
            args=(stop, record),
            daemon=True,
        )
        for ws in spaces
    ]
    for thread in followers:
        thread.start()
    try:
        async with dashboard(q, "alice") as (a, pa), dashboard(q, "bob") as (b, pb):
            apps = {"alice": (a, pa), "bob": (b, pb)}
            for app, pilot in apps.values():
                await wait_until(pilot, lambda app=app: set(listed(app)) == set(plan))
            for team, (who, key) in plan.items():
                app, pilot = apps[who]
                await wait_until(pilot, lambda app=app, team=team: team in listed(app))
                assert app.select(team)
                await wait_until(pilot, lambda app=app, team=team: app.shown_id == team)
                await pilot.press(key)
                await wait_until(
                    pilot, lambda app=app, team=team: f"Decided: {team}" in status_text(app)
                )
            await wait_until(pa, lambda: len(outcomes) == len(plan))
            await wait_until(pa, lambda: listed(a) == [] and listed(b) == [])
    finally:
        stop.set()
        for thread in followers:
            thread.join(60)
    assert sorted(outcomes) == sorted(
        (team, "applied" if key == "y" else "discarded") for team, (_who, key) in plan.items()
    )
    assert (spaces[0] / "a.txt").read_text() == "w1\nmore\n"
    assert (spaces[1] / "a.txt").read_text() == "w2\nmore\n"
    assert (spaces[2] / "a.txt").read_text() == "w3\n"  # discarded by alice
    assert (spaces[2] / "b.txt").read_text() == "b\nmore\n"
    for team, (who, _key) in plan.items():
        assert row(q, team)["decided_by"] == who
    for ws in spaces:  # nothing left to carry out anywhere: none is written twice
        assert follow(ws, q.host_url) == []
