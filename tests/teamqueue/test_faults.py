"""Faults: the follower killed with SIGKILL at each step of an apply. The next follower
recovers through the journal and the database ends consistent: the change written exactly
once, the row `applied` (docs/team-queue.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from redline.teamqueue.follower import TeamFollower
from redline.teamqueue.remote import decide
from redline.teamqueue.settings import team_id, workspace_id
from redline.workspace.queue import WorkspaceQueue

from .helpers import make_workspace, open_queue, propose

pytestmark = pytest.mark.postgres

CHILD = """
import sys
from pathlib import Path
from redline.teamqueue.db import connect
from redline.teamqueue.follower import TeamFollower
from redline.workspace import transaction
from redline.workspace.queue import claims

root, url, ident, stop_at = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
seen = [0]

def hit(text):
    seen[0] += 1
    if seen[0] == stop_at:
        print("at " + text, flush=True)
        sys.stdin.readline()  # held here until the test kills this process

claims._step_hook = hit
transaction._step_hook = lambda number, text: hit(f"journal {number} {text}")
conn = connect(url, autocommit=True)
TeamFollower(root, url, ident).step(conn)
print("done", flush=True)
"""


def _child_gone(url: str, name: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
        ).fetchone()
    return row is not None and row[0] == 0


@pytest.mark.parametrize("stop_at", range(1, 11))  # every step of an apply (10)
def test_follower_killed_mid_apply_recovers(pg_url: str, tmp_path: Path, stop_at: int) -> None:
    open_queue(pg_url)
    ws = make_workspace(tmp_path / "ws")
    record = propose(ws)
    ident = workspace_id(ws)
    follower = TeamFollower(ws, pg_url, ident)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        follower.step(conn)  # mirrored
        team = team_id(ident, record.id)
        assert decide(conn, team, "apply").won
    name = f"crash-{stop_at}"
    env = dict(os.environ)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CHILD,
            str(ws),
            f"{pg_url}?application_name={name}",
            ident,
            str(stop_at),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("at "), line  # it really was stopped mid-apply
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # The killed follower's transaction ends when PostgreSQL sees its connection close.
    deadline = time.monotonic() + 60
    while not _child_gone(pg_url, name):
        if time.monotonic() > deadline:  # a hang guard, not a speed check
            raise AssertionError("the killed follower's session never ended")
        time.sleep(0.05)  # polling a condition (the server's view), not timing anything
    with psycopg.connect(pg_url, autocommit=True) as conn:
        follower.step(conn)  # the next start: the journal recovers, then the write-back
        state = conn.execute(
            "SELECT state FROM redline_actions WHERE team_id = %s", (team,)
        ).fetchone()
    assert state == ("applied",), (line, state)
    assert (ws / "a.txt").read_text() == "one\nmore\n"
    with WorkspaceQueue(ws) as queue:
        assert queue.list() == []
