"""The grants docs/team-queue.md shows work as written: a reviewer role decides and can do
nothing else; an agent-host role mirrors and carries out decisions."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import psycopg
import pytest

from redline.teamqueue.db import migrate
from redline.teamqueue.follower import TeamFollower
from redline.teamqueue.remote import decide
from redline.teamqueue.settings import team_id, workspace_id

from .conftest import PgServer
from .helpers import make_workspace, propose

pytestmark = pytest.mark.postgres

DOC = Path(__file__).resolve().parents[2] / "docs" / "team-queue.md"
ROLES = ("redline_agents", "redline_reviewers", "alice", "build01")


def _grants_sql(suffix: str) -> str:
    text = DOC.read_text(encoding="utf-8").split("## Roles and grants", 1)[1]
    sql = re.search(r"```sql\n(.*?)```", text, re.DOTALL)
    assert sql is not None, "docs/team-queue.md: no SQL block under 'Roles and grants'"
    body = sql.group(1)
    for role in ROLES:  # roles are per server: unique names for this test
        body = re.sub(rf"\b{role}\b", f"{role}_{suffix}", body)
    return body


def test_the_documented_grants(pg_server: PgServer, pg_url: str, tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate(conn)
        conn.execute(_grants_sql(suffix).encode())
        for role in ("alice", "build01"):
            conn.execute(f"ALTER ROLE {role}_{suffix} PASSWORD 'pw-{suffix}'".encode())
    database = pg_url.rsplit("/", 1)[1]
    agent_url = pg_server.url(database, user=f"build01_{suffix}", password=f"pw-{suffix}")
    reviewer_url = pg_server.url(database, user=f"alice_{suffix}", password=f"pw-{suffix}")

    ws = make_workspace(tmp_path / "ws")
    record = propose(ws)
    ident = workspace_id(ws)
    follower = TeamFollower(ws, agent_url, ident)
    with psycopg.connect(agent_url, autocommit=True) as conn:
        assert follower.step(conn).mirrored == [record.id]
    team = team_id(ident, record.id)
    with psycopg.connect(reviewer_url) as conn:
        assert decide(conn, team, "apply", reviewer=None).won
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE redline_actions SET result_text = 'forged'")
        conn.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO redline_workspaces (id, path, host) VALUES ('x', 'x', 'x')")
        conn.rollback()
    with psycopg.connect(agent_url, autocommit=True) as conn:
        (outcome,) = follower.step(conn).outcomes
        row = conn.execute(
            "SELECT state, decided_by, decided_role FROM redline_actions WHERE team_id = %s",
            (team,),
        ).fetchone()
    assert outcome.state == "applied"
    assert row == ("applied", f"alice_{suffix}", f"alice_{suffix}")
    assert (ws / "a.txt").read_text() == "one\nmore\n"


def test_a_reviewer_role_may_pick_hunks_and_edit(
    pg_server: PgServer, pg_url: str, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate(conn)
        conn.execute(_grants_sql(suffix).encode())
        for role in ("alice", "build01"):
            conn.execute(f"ALTER ROLE {role}_{suffix} PASSWORD 'pw-{suffix}'".encode())
    database = pg_url.rsplit("/", 1)[1]
    agent_url = pg_server.url(database, user=f"build01_{suffix}", password=f"pw-{suffix}")
    reviewer_url = pg_server.url(database, user=f"alice_{suffix}", password=f"pw-{suffix}")
    ws = make_workspace(tmp_path / "ws")
    first = propose(ws)
    (ws / "b.txt").write_text("b\n")
    second = propose(ws, name="b.txt")
    ident = workspace_id(ws)
    follower = TeamFollower(ws, agent_url, ident)
    with psycopg.connect(agent_url, autocommit=True) as conn:
        assert sorted(follower.step(conn).mirrored) == sorted([first.id, second.id])
    with psycopg.connect(reviewer_url) as conn:
        assert decide(conn, team_id(ident, first.id), "apply", reviewer=None, only=["a.txt#1"]).won
        assert decide(
            conn, team_id(ident, second.id), "edit", reviewer=None, edit=("b.txt", "b\nB\n")
        ).won
    with psycopg.connect(agent_url, autocommit=True) as conn:
        states = {o.team_id: o.state for o in follower.step(conn).outcomes}
    assert states == {team_id(ident, first.id): "applied", team_id(ident, second.id): "gone"}
    assert (ws / "a.txt").read_text() == "one\nmore\n"
