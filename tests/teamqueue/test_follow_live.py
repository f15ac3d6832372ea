"""The follower's loop: decisions heard by LISTEN/NOTIFY, catch-up after a reconnect, and a
PostgreSQL restart in the middle of a run (docs/team-queue.md)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from redline.teamqueue.follower import StepReport, TeamFollower
from redline.teamqueue.remote import decide
from redline.teamqueue.settings import team_id, workspace_id

from .conftest import PASSWORD, PgServer
from .helpers import make_workspace, open_queue, propose

pytestmark = pytest.mark.postgres
WAIT = 60.0  # an upper bound for a condition on a loaded machine, never a timing assertion


class Watched:
    """What a running follower reported, and a way to await a condition on it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.outcomes: dict[str, str] = {}
        self.mirrored: list[str] = []
        self._changed = threading.Condition()

    def log(self, line: str) -> None:
        with self._changed:
            self.lines.append(line)
            self._changed.notify_all()

    def step(self, report: StepReport) -> None:
        with self._changed:
            self.mirrored.extend(report.mirrored)
            self.outcomes.update({o.team_id: o.state for o in report.outcomes})
            self._changed.notify_all()

    def wait(self, what: str, predicate: Callable[[], bool]) -> None:
        with self._changed:
            assert self._changed.wait_for(predicate, timeout=WAIT), (
                f"never happened: {what}; log: {self.lines}"
            )


@contextmanager
def running(follower: TeamFollower, watched: Watched) -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(target=follower.run, args=(stop, watched.step), daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(WAIT)
        assert not thread.is_alive()


def _init(url: str) -> None:
    open_queue(url)


def test_a_decision_is_heard_at_once_by_notify(pg_url: str, tmp_path: Path) -> None:
    _init(pg_url)
    ws = make_workspace(tmp_path / "ws")
    record = propose(ws)
    ident = workspace_id(ws)
    watched = Watched()
    # Half an hour between looks at the queue: only a notification can wake it in time.
    follower = TeamFollower(ws, pg_url, ident, log=watched.log, poll_seconds=1800)
    team = team_id(ident, record.id)
    with running(follower, watched):
        watched.wait("the proposal mirrored", lambda: record.id in watched.mirrored)
        with psycopg.connect(pg_url) as conn:
            assert decide(conn, team, "apply").won
        watched.wait("the decision carried out", lambda: team in watched.outcomes)
    assert watched.outcomes[team] == "applied"
    assert (ws / "a.txt").read_text() == "one\nmore\n"


def test_decisions_made_while_away_are_caught_up(pg_url: str, tmp_path: Path) -> None:
    _init(pg_url)
    ws = make_workspace(tmp_path / "ws")
    first = propose(ws)
    second = propose(ws, name="b.txt") if (ws / "b.txt").write_text("b\n") else None
    assert second is not None
    ident = workspace_id(ws)
    watched = Watched()
    follower = TeamFollower(ws, pg_url, ident, log=watched.log, poll_seconds=1800)
    with running(follower, watched):
        watched.wait("both mirrored", lambda: len(watched.mirrored) == 2)
    # The follower is gone: these notifications reach no one.
    with psycopg.connect(pg_url) as conn:
        assert decide(conn, team_id(ident, first.id), "apply").won
        assert decide(conn, team_id(ident, second.id), "discard").won
    again = Watched()
    follower = TeamFollower(ws, pg_url, ident, log=again.log, poll_seconds=1800)
    with running(follower, again):
        again.wait("both caught up", lambda: len(again.outcomes) == 2)
    assert set(again.outcomes.values()) == {"applied", "discarded"}
    assert (ws / "a.txt").read_text() == "one\nmore\n" and (ws / "b.txt").read_text() == "b\n"


def test_postgresql_restarted_mid_run_nothing_lost(
    pg_server: PgServer, pg_url: str, tmp_path: Path
) -> None:
    _init(pg_url)
    ws = make_workspace(tmp_path / "ws")
    first = propose(ws)
    ident = workspace_id(ws)
    watched = Watched()
    follower = TeamFollower(ws, pg_url, ident, log=watched.log, poll_seconds=0.2)
    with running(follower, watched):
        watched.wait("mirrored", lambda: first.id in watched.mirrored)
        pg_server.stop("fast")
        watched.wait("offline", lambda: any(line.startswith("offline") for line in watched.lines))
        # Offline: the agent goes on proposing into the local queue.
        later = propose(ws, add="later\n")
        assert later.id == "pa-2"
        pg_server.start()
        watched.wait("the later proposal synced", lambda: later.id in watched.mirrored)
        with psycopg.connect(pg_url) as conn:
            assert decide(conn, team_id(ident, later.id), "discard").won
            assert decide(conn, team_id(ident, first.id), "apply").won
        watched.wait("both carried out", lambda: len(watched.outcomes) == 2)
    assert watched.outcomes == {
        team_id(ident, later.id): "discarded",
        team_id(ident, first.id): "applied",
    }
    assert (ws / "a.txt").read_text() == "one\nmore\n"
    assert all(PASSWORD not in line for line in watched.lines)
    assert any("***@127.0.0.1" in line for line in watched.lines)


def test_a_running_follower_mirrors_new_proposals_and_local_decisions(
    pg_url: str, tmp_path: Path
) -> None:
    _init(pg_url)
    ws = make_workspace(tmp_path / "ws")
    ident = workspace_id(ws)
    watched = Watched()
    follower = TeamFollower(ws, pg_url, ident, log=watched.log, poll_seconds=0.1)
    with running(follower, watched):
        watched.wait("online", lambda: any(line.startswith("online") for line in watched.lines))
        record = propose(ws)  # proposed while it runs: found by a quick pass
        watched.wait("mirrored", lambda: record.id in watched.mirrored)
        from redline.cli import main

        assert main(["pending", "discard", record.id, "-C", str(ws)]) == 0  # decided locally
        team = team_id(ident, record.id)

        def closed() -> bool:
            with psycopg.connect(pg_url) as conn:
                row = conn.execute(
                    "SELECT state, closed_by FROM redline_actions WHERE team_id = %s", (team,)
                ).fetchone()
            return row == ("discarded", "local person")

        watched.wait("the row closed", closed)


def test_a_failure_of_the_local_queue_does_not_stop_the_follower(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workspace's queue failing once (it was being created by another thread) is said
    and retried; the follower used to die with it and never mirror again."""
    from redline.teamqueue import follower as follower_module
    from redline.workspace.queue import QueueUnavailable

    _init(pg_url)
    ws = make_workspace(tmp_path / "ws")
    record = propose(ws)
    real = follower_module.mirror
    calls: list[int] = []

    def failing_once(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise QueueUnavailable("The review queue folder .redline/queue cannot be opened")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(follower_module, "mirror", failing_once)
    watched = Watched()
    follower = TeamFollower(ws, pg_url, workspace_id(ws), log=watched.log, poll_seconds=0.1)
    with running(follower, watched):
        watched.wait("mirrored after the failure", lambda: record.id in watched.mirrored)
    assert any("the workspace's queue failed" in line for line in watched.lines)
