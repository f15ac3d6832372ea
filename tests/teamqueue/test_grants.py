"""The setup docs/team-queue.md gives — `redline queue init` as the tables' owner (not a
superuser), then `redline queue grant` — works as written; `queue revoke` and `queue
status`; and an old-schema queue with hand-written grants and a forged decision upgraded
by `queue init`."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path

import psycopg
import pytest

from redline.teamqueue.db import MIGRATIONS
from redline.teamqueue.follower import TeamFollower
from redline.teamqueue.remote import decide
from redline.teamqueue.settings import TeamQueueError, team_id, workspace_id

from .conftest import PASSWORD, PgServer, Team
from .helpers import cli, make_workspace, propose

pytestmark = pytest.mark.postgres


def test_grant_then_review_and_host(
    team: Team, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    alice, build = team.role("alice"), team.role("build")
    url = team.owner_url
    code, out, err = cli(capfd, "queue", "init", "--queue", url)
    assert code == 0 and "is up to date" in out, err
    code, out, err = cli(
        capfd, "queue", "grant", alice, "--reviewer", "--name", "Alice A", "--email", "a@x",
        "--queue", url,
    )  # fmt: skip
    assert code == 0 and f"{alice} is a reviewer (decisions name Alice A <a@x>)" in out, err
    ws = make_workspace(tmp_path / "ws")
    first = propose(ws)
    (ws / "b.txt").write_text("b\n")
    second = propose(ws, name="b.txt")
    ident = workspace_id(ws)
    code, out, err = cli(
        capfd, "queue", "grant", build, "--agent-host", "--workspace", ident, "--queue", url
    )
    assert code == 0 and f"workspace {ident} belongs to {build}" in out, err
    follower = TeamFollower(ws, team.url(build), ident)
    with psycopg.connect(team.url(build), autocommit=True) as conn:
        assert sorted(follower.step(conn).mirrored) == sorted([first.id, second.id])
    with psycopg.connect(team.url(alice)) as conn:
        assert decide(conn, team_id(ident, first.id), "apply", only=["a.txt#1"]).won
        assert decide(conn, team_id(ident, second.id), "edit", edit=("b.txt", "b\nB\n")).won
    with psycopg.connect(team.url(build), autocommit=True) as conn:
        states = {o.team_id: o.state for o in follower.step(conn).outcomes}
    assert states == {team_id(ident, first.id): "applied", team_id(ident, second.id): "gone"}
    assert (ws / "a.txt").read_text() == "one\nmore\n"
    # status, as the owner: who has which rights; only the password hidden.
    code, out, err = cli(capfd, "queue", "status", "-C", str(ws), "--queue", url)
    assert code == 0, err
    assert f"{alice}: reviewer (decisions name Alice A <a@x>)" in out
    assert f"{build}: agent-host (workspaces: {ident})" in out
    assert f"connected as: {team.owner}" in out
    assert f"{team.owner}:***@127.0.0.1" in out and f"pw-{team.suffix}" not in out + err
    code, out, err = cli(capfd, "queue", "status", "-C", str(ws), "--queue", url, "--json")
    data = json.loads(out)
    assert {"role": alice, "right": "reviewer", "name": "Alice A", "email": "a@x",
            "shown": "Alice A <a@x>"} in data["rights"]  # fmt: skip


def test_grant_and_revoke_refusals(team: Team, capfd: pytest.CaptureFixture[str]) -> None:
    url = team.owner_url
    missing = f"nobody_{team.suffix}"
    code, _out, err = cli(capfd, "queue", "grant", missing, "--reviewer", "--queue", url)
    assert code == 2 and "does not exist (queue grant never creates login roles" in err
    code, _out, err = cli(capfd, "queue", "grant", missing, "--queue", url)
    assert code == 2  # neither --reviewer nor --agent-host
    bob, bob_url = team.reviewer("bob")
    for args in (["init"], ["grant", bob, "--agent-host"], ["revoke", bob]):
        code, _out, err = cli(capfd, "queue", *args, "--queue", bob_url)
        assert code == 1 and "must be run as the owner of the redline tables" in err, args
    code, out, err = cli(capfd, "queue", "revoke", bob, "--agent-host", "--queue", url)
    assert code == 2 and "has no agent-host right" in err
    code, out, err = cli(capfd, "queue", "revoke", bob, "--queue", url)
    assert code == 0 and f"{bob} is no longer a reviewer" in out, err
    with psycopg.connect(bob_url) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT count(*) FROM redline_actions")


def test_status_warns_of_a_superuser_and_public_create(
    pg_url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert cli(capfd, "queue", "init", "--queue", pg_url)[0] == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
    code, out, err = cli(capfd, "queue", "status", "--queue", pg_url)
    assert code == 0, err
    assert "warning: you are connected as redline_admin, a superuser" in out
    assert "warning: PUBLIC may create objects in the schema public" in out
    assert "redline_admin:***@127.0.0.1" in out and PASSWORD not in out


#: What docs/team-queue.md told administrators to run before schema 3.
OLD_GRANTS = """
CREATE ROLE redline_agents NOLOGIN;
CREATE ROLE redline_reviewers NOLOGIN;
GRANT USAGE ON SCHEMA public TO redline_agents, redline_reviewers;
GRANT SELECT ON redline_schema TO redline_agents, redline_reviewers;
GRANT SELECT, INSERT, UPDATE ON redline_workspaces, redline_actions TO redline_agents;
GRANT SELECT ON redline_workspaces, redline_actions TO redline_reviewers;
GRANT UPDATE (state, decision, decision_hash, decided_by, decided_role, reason, decided_at,
               only_parts, edit_path, edit_text)
    ON redline_actions TO redline_reviewers;
GRANT redline_reviewers TO {alice};
GRANT redline_agents TO {build};
"""


def _old_queue(server: PgServer, suffix: str) -> tuple[str, str, str, str]:
    """A database at schema 2 owned by a non-superuser, with the old grants; (database,
    owner, alice, build)."""
    owner, alice, build = (f"{n}_{suffix}" for n in ("owner", "alice", "build"))
    database = f"t_{suffix}"
    with server.admin() as conn:
        for role in (owner, alice, build):
            conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-{suffix}'".encode())
        conn.execute(f"CREATE DATABASE {database} OWNER {owner}".encode())
    url = server.url(database, user=owner, password=f"pw-{suffix}")
    with psycopg.connect(url) as conn:
        conn.execute(
            "CREATE TABLE redline_schema (version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version, step in MIGRATIONS[:2]:
            assert isinstance(step, str)
            conn.execute(step.encode())
            conn.execute("INSERT INTO redline_schema (version) VALUES (%s)", (version,))
    with psycopg.connect(server.url(database), autocommit=True) as conn:  # the superuser
        conn.execute(OLD_GRANTS.format(alice=alice, build=build).encode())
    return database, owner, alice, build


def test_an_old_queue_with_hand_written_grants_is_upgraded(
    pg_server: PgServer, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    suffix = uuid.uuid4().hex[:8]
    database, owner, alice, build = _old_queue(pg_server, suffix)
    try:
        url = pg_server.url(database, user=owner, password=f"pw-{suffix}")
        build_url = pg_server.url(database, user=build, password=f"pw-{suffix}")
        with psycopg.connect(build_url) as conn:  # an old agent host mirrors two proposals
            conn.execute("INSERT INTO redline_workspaces (id, path, host) VALUES ('w1', '/w', 'h')")
            for n in (1, 2):
                conn.execute(
                    "INSERT INTO redline_actions (team_id, workspace, local_id, label, source,"
                    " applied_by, files, base_hash, patch_hash)"
                    " VALUES (%s, 'w1', %s, 'Edit a.txt', 'exec', 'preview', '[\"a.txt\"]',"
                    " 'b', 'p')",
                    (f"pa-{n}@w1", f"pa-{n}"),
                )
            # ... and forges a decision signed by alice (the old grants allowed it).
            conn.execute(
                "UPDATE redline_actions SET state = 'decided', decision = 'apply',"
                " decision_hash = patch_hash, decided_by = 'alice', decided_role = %s"
                " WHERE team_id = 'pa-1@w1'",
                (alice,),
            )
        code, out, err = cli(capfd, "queue", "init", "--queue", url)
        assert code == 0, err
        assert "applied: [3]" in out
        assert "revoked UPDATE (decided_by" in out or "revoked UPDATE (decided_at" in out
        assert "on redline_actions from redline_reviewers" in out
        assert "revoked INSERT on redline_actions from redline_agents" in out
        assert f"member: {alice} is a reviewer (was in the group role redline_reviewers)" in out
        assert f"member: {build} is an agent-host" in out
        assert "voided: pa-1@w1 (apply by alice): decision voided by the schema upgrade" in out
        assert "workspace w1 (/w) has no owner yet" in out
        with psycopg.connect(url) as conn:
            for group in ("redline_agents", "redline_reviewers"):
                for privilege in ("SELECT", "INSERT", "UPDATE"):
                    assert conn.execute(
                        "SELECT has_table_privilege(%s, 'redline_actions', %s)",
                        (group, privilege),
                    ).fetchone() == (False,), (group, privilege)
            rows = conn.execute(
                "SELECT team_id, state, result_text, label FROM redline_actions ORDER BY 1"
            ).fetchall()
        assert rows == [
            ("pa-1@w1", "pending", "decision voided by the schema upgrade; decide again",
             "Edit a.txt"),
            ("pa-2@w1", "pending", "", "Edit a.txt"),
        ]  # fmt: skip
        # The old host writes nothing into the now unowned workspace until it is assigned.
        with psycopg.connect(build_url) as conn:
            assert conn.execute("UPDATE redline_actions SET state = 'applied'").rowcount == 0
            assert conn.execute("UPDATE redline_workspaces SET path = '/x'").rowcount == 0
        # alice decides again, through the server now.
        with psycopg.connect(pg_server.url(database, user=alice, password=f"pw-{suffix}")) as c:
            decided = decide(c, "pa-2@w1", "discard")
        assert decided.won and f"by {alice} (team queue role)" in decided.text
    finally:
        with pg_server.admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)".encode())
            for role in ("redline_agents", "redline_reviewers", owner, alice, build):
                conn.execute(f"DROP ROLE IF EXISTS {role}".encode())


def test_the_upgrade_waits_for_no_follower(
    pg_server: PgServer, capfd: pytest.CaptureFixture[str]
) -> None:
    """A follower holding a row: the upgrade says so and changes nothing, rather than wait."""
    suffix = uuid.uuid4().hex[:8]
    database, owner, alice, build = _old_queue(pg_server, suffix)
    try:
        url = pg_server.url(database, user=owner, password=f"pw-{suffix}")
        holding = threading.Event()
        release = threading.Event()

        def follower() -> None:
            with psycopg.connect(url) as conn:
                conn.execute("SELECT * FROM redline_actions FOR UPDATE").fetchall()
                holding.set()
                release.wait(120)

        thread = threading.Thread(target=follower)
        thread.start()
        try:
            assert holding.wait(60)
            code, _out, err = cli(capfd, "queue", "init", "--queue", url)
        finally:
            release.set()
            thread.join(60)
        assert code == 1 and "followers are holding rows: retry, or stop them" in err
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT max(version) FROM redline_schema").fetchone() == (2,)
    finally:
        with pg_server.admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)".encode())
            for role in ("redline_agents", "redline_reviewers", owner, alice, build):
                conn.execute(f"DROP ROLE IF EXISTS {role}".encode())


def test_a_newer_schema_stops_the_follower(
    team: Team, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """What an older redline does with schema 3 — this one with a schema after its own:
    it refuses, and its follower carries nothing out (fail closed)."""
    _role, host_url = team.host()
    ws = make_workspace(tmp_path / "ws")
    propose(ws)
    with psycopg.connect(team.owner_url) as conn:
        conn.execute("INSERT INTO redline_schema (version) VALUES (99)")
    code, _out, err = cli(capfd, "pending", "follow", "--once", "-C", str(ws), "--queue", host_url)
    assert code == 1 and "newer than this redline knows" in err and "upgrade redline" in err
    code, _out, err = cli(capfd, "queue", "init", "--queue", team.owner_url)
    assert code == 1 and "newer than this redline knows" in err


def test_revoke_one_workspace(
    team: Team, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    build, host_url = team.host()
    ws = make_workspace(tmp_path / "ws")
    propose(ws)
    ident = workspace_id(ws)
    follower = TeamFollower(ws, host_url, ident)
    with psycopg.connect(host_url, autocommit=True) as conn:
        follower.step(conn)
    code, out, err = cli(
        capfd, "queue", "revoke", build, "--workspace", ident, "--queue", team.owner_url
    )
    assert code == 0 and f"workspace {ident} no longer belongs to {build}" in out, err
    propose(ws, add="again\n")
    refused = pytest.raises(TeamQueueError, match="has no owner in the team queue yet")
    with psycopg.connect(host_url, autocommit=True) as conn, refused:
        follower.step(conn)
    code, _out, err = cli(
        capfd, "queue", "revoke", build, "--workspace", ident, "--queue", team.owner_url
    )
    assert code == 2 and f"does not belong to {build}" in err
