"""The team queue against its own users (issue 40): every attack as the least-privileged
role, with roles made by ``redline queue grant`` and tables owned by a non-superuser.
None changes a file or records a false reviewer; reviewers decide as before."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from redline.teamqueue.follower import TeamFollower
from redline.teamqueue.remote import ViewChanged, decide, show_action
from redline.teamqueue.settings import TeamQueueError, team_id, workspace_id

from .conftest import Team
from .helpers import make_workspace, propose

pytestmark = pytest.mark.postgres


def _mirrored(team: Team, tmp_path: Path, name: str = "ws", host: str = "build"):  # type: ignore[no-untyped-def]
    role, url = team.host(host)
    ws = make_workspace(tmp_path / name)
    record = propose(ws)
    ident = workspace_id(ws)
    follower = TeamFollower(ws, url, ident)
    with psycopg.connect(url, autocommit=True) as conn:
        assert follower.step(conn).mirrored == [record.id]
    return ws, follower, team_id(ident, record.id), url, role


def _step(follower: TeamFollower, url: str):  # type: ignore[no-untyped-def]
    with psycopg.connect(url, autocommit=True) as conn:
        return follower.step(conn)


def test_a_reviewer_decides_and_the_server_names_them(team: Team, tmp_path: Path) -> None:
    ws, follower, team_action, host_url, _host = _mirrored(team, tmp_path)
    alice, alice_url = team.reviewer("alice", name="Alice A", email="a@x")
    with psycopg.connect(alice_url) as conn:
        decided = decide(conn, team_action, "apply", reason="ok")
    assert decided.won and "by Alice A <a@x>" in decided.text
    (outcome,) = _step(follower, host_url).outcomes
    assert outcome.state == "applied", outcome.text
    assert (ws / "a.txt").read_text() == "one\nmore\n"
    with psycopg.connect(team.owner_url) as conn:
        row = conn.execute(
            "SELECT d.decided_by, d.decided_name FROM redline_decisions d"
            " JOIN redline_actions a ON a.decision_id = d.id WHERE a.team_id = %s",
            (team_action,),
        ).fetchone()
    assert row == (alice, "Alice A <a@x>")


def _denied(conn: psycopg.Connection, sql: str, *params: object) -> None:  # type: ignore[type-arg]
    """``sql`` is refused by the server (privileges or row-level security)."""
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(sql.encode(), params or None)
    conn.rollback()


def _state(team: Team, team_action: str) -> tuple[object, ...]:
    with psycopg.connect(team.owner_url) as conn:
        row = conn.execute(
            "SELECT state, decision_id, label FROM redline_actions WHERE team_id = %s",
            (team_action,),
        ).fetchone()
    assert row is not None
    return tuple(row)


def test_a_host_cannot_decide_its_own_action(team: Team, tmp_path: Path) -> None:
    ws, follower, mine, host_url, _host = _mirrored(team, tmp_path)
    with psycopg.connect(host_url) as conn:
        with pytest.raises(TeamQueueError, match="refused: permission denied"):
            decide(conn, mine, "apply")
        conn.rollback()
        _denied(
            conn,
            "INSERT INTO redline_decisions (team_id, workspace, decision, view_hash,"
            " patch_hash, decided_by, decided_name) SELECT team_id, workspace, 'apply',"
            " view_hash, patch_hash, 'alice', 'alice' FROM redline_actions",
        )
        _denied(conn, "UPDATE redline_actions SET state = 'decided'")  # row-level security
        _denied(conn, "UPDATE redline_actions SET decision_id = 1")
        _denied(conn, "UPDATE redline_decisions SET decision = 'apply'")
    assert _step(follower, host_url).outcomes == []
    assert (ws / "a.txt").read_text() == "one\n"
    assert _state(team, mine)[:2] == ("pending", None)


def test_a_host_cannot_touch_another_workspace(team: Team, tmp_path: Path) -> None:
    ws, _follower, theirs, _url, owner_host = _mirrored(team, tmp_path, "one", "build1")
    other = make_workspace(tmp_path / "two")
    propose(other)
    _intruder, intruder_url = team.host("build2")
    ident = workspace_id(ws)
    with psycopg.connect(intruder_url) as conn:
        # It cannot even read the other workspace's actions or decisions.
        assert conn.execute("SELECT count(*) FROM redline_actions").fetchone() == (0,)
        conn.rollback()
        assert (
            conn.execute(
                "UPDATE redline_actions SET state = 'applied' WHERE team_id = %s", (theirs,)
            ).rowcount
            == 0
        )
        conn.rollback()
        with pytest.raises(TeamQueueError, match="no action"):  # it cannot see it
            decide(conn, theirs, "apply")
        conn.rollback()
        _denied(conn, "SELECT * FROM redline_decide(%s, 'apply', '', NULL, NULL, NULL, '')", theirs)
        # Register, relabel, or mirror into it: refused.
        _denied(
            conn,
            "INSERT INTO redline_workspaces (id, path, host) VALUES (%s, '/evil', 'h')"
            " ON CONFLICT (id) DO UPDATE SET path = excluded.path",
            ident,
        )
        assert (
            conn.execute(
                "UPDATE redline_workspaces SET path = '/evil' WHERE id = %s", (ident,)
            ).rowcount
            == 0
        )
        conn.rollback()
        _denied(
            conn,
            "INSERT INTO redline_workspaces (id, path, host, owner) VALUES ('new1', 'p', 'h', %s)",
            owner_host,
        )
        _denied(
            conn,
            "INSERT INTO redline_actions (team_id, workspace, local_id, label, source,"
            " applied_by, files, base_hash, patch_hash, view_hash)"
            " VALUES (%s, %s, 'pa-9', 'Fix typo', 'exec', 'preview', '[]', '', '', '')",
            f"pa-9@{ident}",
            ident,
        )
    # A follower that claims the other workspace's id is told whose it is.
    impostor = TeamFollower(other, intruder_url, ident)
    with (
        psycopg.connect(intruder_url, autocommit=True) as conn,
        pytest.raises(TeamQueueError, match=f"belongs to another agent host \\({owner_host}\\)"),
    ):
        impostor.step(conn)
    with psycopg.connect(team.owner_url) as conn:
        assert conn.execute(
            "SELECT path, owner FROM redline_workspaces WHERE id = %s", (ident,)
        ).fetchone() == (str(ws), owner_host)
        assert conn.execute("SELECT count(*) FROM redline_actions").fetchone() == (1,)


def test_rewriting_a_row_after_mirroring_or_after_a_decision(team: Team, tmp_path: Path) -> None:
    ws, follower, mine, host_url, _host = _mirrored(team, tmp_path)
    _alice, alice_url = team.reviewer("alice")
    with psycopg.connect(host_url) as conn:
        for column, value in (("label", "Fix typo in README"), ("diff", ""), ("files", "[]")):
            _denied(conn, f"UPDATE redline_actions SET {column} = %s", value)
    with psycopg.connect(alice_url) as conn:
        _denied(conn, "UPDATE redline_actions SET label = 'Fix typo in README'")
        shown = show_action(conn, mine)
    # Someone past the privileges (the owner here) relabels the row while alice reads it:
    # the server refuses the decision made on the old view ...
    with psycopg.connect(team.owner_url) as conn:
        conn.execute(
            "UPDATE redline_actions SET label = 'Fix typo in README' WHERE team_id = %s", (mine,)
        )
    with psycopg.connect(alice_url) as conn:
        with pytest.raises(ViewChanged, match="the action changed while you read it; show it"):
            decide(conn, mine, "apply", view_hash=shown["view_hash"])
        conn.rollback()
        # ... and when the forger fixes the row's hash too, the follower refuses it: the
        # view it was decided on is not the proposal this workspace made.
        again = show_action(conn, mine)
        assert again["label"] == "Fix typo in README"
    with psycopg.connect(team.owner_url) as conn:
        conn.execute(
            "UPDATE redline_actions SET view_hash = %s WHERE team_id = %s",
            (again["view_hash"], mine),
        )
    with psycopg.connect(alice_url) as conn:
        assert decide(conn, mine, "apply", view_hash=again["view_hash"]).won
    # After the decision the host cannot rewrite it.
    with psycopg.connect(host_url) as conn:
        _denied(conn, "UPDATE redline_decisions SET decision = 'discard'")
        _denied(conn, "UPDATE redline_actions SET state = 'decided'")
    (outcome,) = _step(follower, host_url).outcomes
    assert outcome.state == "refused"
    assert "the reviewed view does not match this workspace's proposal" in outcome.text
    assert (ws / "a.txt").read_text() == "one\n"


def test_a_reviewer_cannot_forge_who_decided(team: Team, tmp_path: Path, pg_server) -> None:  # type: ignore[no-untyped-def]
    ws, follower, mine, host_url, _host = _mirrored(team, tmp_path)
    alice, alice_url = team.reviewer("alice")
    bob, _bob_url = team.reviewer("bob", name="Bob B", email="b@x")
    with pg_server.admin() as admin:
        admin.execute(f"GRANT {bob} TO {alice}".encode())  # alice may even SET ROLE bob
    with psycopg.connect(alice_url) as conn:
        _denied(
            conn,
            "INSERT INTO redline_decisions (team_id, workspace, decision, view_hash,"
            " patch_hash, decided_by, decided_name) VALUES (%s, 'w', 'apply', '', '', %s, %s)",
            mine,
            bob,
            "Bob B <b@x>",
        )
        _denied(conn, "UPDATE redline_actions SET state = 'decided'")
        conn.execute(f"SET ROLE {bob}".encode())
        decided = decide(conn, mine, "apply")
    assert decided.won and f"by {alice} (team queue role)" in decided.text
    (outcome,) = _step(follower, host_url).outcomes
    assert outcome.state == "applied"
    with psycopg.connect(team.owner_url) as conn:
        assert conn.execute(
            "SELECT decided_by FROM redline_decisions WHERE team_id = %s", (mine,)
        ).fetchone() == (alice,)
    # The decisions log names the reviewer the server recorded, not this machine's user.
    from redline.workspace.decisions import read

    (entry,) = [e for e in read(ws)[0] if e.id == "pa-1"]
    assert entry.reviewer == f"{alice} (team queue role)"


def test_a_revoked_reviewer(team: Team, tmp_path: Path) -> None:
    from redline.teamqueue.members import revoke

    ws, follower, mine, host_url, _host = _mirrored(team, tmp_path)
    alice, alice_url = team.reviewer("alice")
    with psycopg.connect(alice_url) as conn:
        assert decide(conn, mine, "apply").won
    with psycopg.connect(team.owner_url) as conn:
        said = revoke(conn, alice, "reviewer")
    assert f"{alice} is no longer a reviewer" in said
    assert any(line.startswith(f"voided: {mine} (apply by {alice})") for line in said)
    assert _step(follower, host_url).outcomes == []
    assert (ws / "a.txt").read_text() == "one\n"
    with psycopg.connect(team.owner_url) as conn:
        state, result = conn.execute(
            "SELECT state, result_text FROM redline_actions WHERE team_id = %s", (mine,)
        ).fetchone()  # type: ignore[misc]
    assert state == "pending" and "its reviewer right was revoked; decide again" in result
    # No privilege is left at all.
    with psycopg.connect(alice_url) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        decide(conn, mine, "apply")


def test_notifications_are_wake_ups_floods_and_forgeries_change_nothing(
    team: Team, tmp_path: Path
) -> None:
    import threading

    from redline.teamqueue.db import DECISIONS_CHANNEL
    from redline.teamqueue.follower import StepReport

    ws, _first, mine, _host_url, _host = _mirrored(team, tmp_path, "one", "build1")
    other = make_workspace(tmp_path / "two")
    propose(other)
    _intruder, intruder_url = team.host("build2")
    _alice, alice_url = team.reviewer("alice")
    # What a decision announces: nothing about which action, or which workspace.
    with psycopg.connect(alice_url, autocommit=True) as listener:
        listener.execute(f"LISTEN {DECISIONS_CHANNEL}".encode())
        with psycopg.connect(alice_url) as conn:
            shown = show_action(conn, mine)
        with psycopg.connect(alice_url) as conn:
            assert decide(conn, mine, "discard", view_hash=shown["view_hash"]).won
        (note,) = list(listener.notifies(timeout=30, stop_after=1))
    assert note.payload == ""
    with psycopg.connect(intruder_url) as conn:  # a host reads no other workspace's decision
        assert conn.execute("SELECT count(*) FROM redline_decisions").fetchone() == (0,)
    with psycopg.connect(team.owner_url) as conn:  # back to pending, for the flood below
        conn.execute(
            "UPDATE redline_actions SET state = 'pending', decision_id = NULL WHERE team_id = %s",
            (mine,),
        )
    steps: list[StepReport] = []
    seen = threading.Condition()

    def on_step(report: StepReport) -> None:
        with seen:
            steps.append(report)
            seen.notify_all()

    follower = TeamFollower(other, intruder_url, workspace_id(other), poll_seconds=1800)
    stop = threading.Event()
    thread = threading.Thread(target=follower.run, args=(stop, on_step), daemon=True)
    thread.start()
    try:
        with seen:
            assert seen.wait_for(lambda: len(steps) >= 1, timeout=60)  # the catch-up
        # Anyone may NOTIFY: a flood naming the other workspace's action, in one burst.
        with psycopg.connect(intruder_url) as conn:
            for n in range(2000):
                conn.execute("SELECT pg_notify(%s, %s)", (DECISIONS_CHANNEL, f"{mine} {n}"))
        with seen:
            assert seen.wait_for(lambda: len(steps) >= 2, timeout=60)
        # A real decision on its own action still goes through.
        with psycopg.connect(alice_url) as conn:
            theirs = team_id(workspace_id(other), "pa-1")
            assert decide(conn, theirs, "apply").won
        with seen:
            assert seen.wait_for(lambda: any(s.outcomes for s in steps), timeout=60)
    finally:
        stop.set()
        thread.join(60)
    assert len(steps) < 100  # 2000 notifications: a handful of passes, not one each
    outcomes = [o for s in steps for o in s.outcomes]
    assert [(o.team_id, o.state) for o in outcomes] == [(theirs, "applied")]
    assert (other / "a.txt").read_text() == "one\nmore\n"
    assert (ws / "a.txt").read_text() == "one\n"  # the flood named it; nothing happened there
    assert _state(team, mine)[0] == "pending"


def test_the_commit_names_the_reviewer_the_server_recorded(
    team: Team,
    tmp_path: Path,
    isolated_user_config: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    import subprocess

    (isolated_user_config / "config.toml").write_text('[git]\non_apply = "commit"\n')
    _role, url = team.host()
    ws = make_workspace(tmp_path / "ws", git=True)
    record = propose(ws)
    ident = workspace_id(ws)
    follower = TeamFollower(ws, url, ident)
    _step(follower, url)
    _alice, alice_url = team.reviewer("alice", name="Alice A", email="a@x")
    monkeypatch.setenv("REDLINE_REVIEWER", "mallory")  # says nothing about who decided
    with psycopg.connect(alice_url) as conn:
        assert decide(conn, team_id(ident, record.id), "apply").won
    (outcome,) = _step(follower, url).outcomes
    assert outcome.state == "applied", outcome.text
    message = subprocess.run(
        ["git", "-C", str(ws), "log", "-1", "--format=%B"], capture_output=True, text=True
    ).stdout
    assert "Redline-Reviewer: Alice A <a@x>" in message and "mallory" not in message
    import json

    from .helpers import cli

    code, out, err = cli(capfd, "log", "-C", str(ws), "--json")
    assert code == 0, err
    logged = json.loads(out)["decisions"]
    assert [d["reviewer"] for d in logged if d["id"] == record.id] == ["Alice A <a@x>"]


def test_the_list_is_newest_proposal_first_with_the_proposals_time(
    team: Team, tmp_path: Path
) -> None:
    from datetime import datetime

    from redline.teamqueue.remote import list_actions

    _role, url = team.host()
    ws = make_workspace(tmp_path / "ws")
    records = [propose(ws, add=f"{n}\n") for n in range(12)]
    follower = TeamFollower(ws, url, workspace_id(ws))
    _step(follower, url)
    _alice, alice_url = team.reviewer("alice")
    with psycopg.connect(alice_url) as conn:
        listed = list_actions(conn)
    assert [item["local_id"] for item in listed] == [r.id for r in reversed(records)]
    for item, record in zip(listed, reversed(records), strict=True):
        proposed = datetime.fromisoformat(item["created_at"]).timestamp()
        assert abs(proposed - record.created_at) < 1.0  # the proposal's time, to the second
