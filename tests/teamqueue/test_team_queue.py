"""The team queue against a real PostgreSQL: init, status, mirror, decide anywhere, apply
locally through the one review path, and the refusals (docs/team-queue.md)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import psycopg
import pytest

from redline.teamqueue.db import LATEST
from redline.teamqueue.remote import decide
from redline.teamqueue.settings import team_id, workspace_id
from redline.workspace.queue import WorkspaceQueue

from .conftest import PASSWORD, Team
from .helpers import cli, forge_decision, make_workspace, open_queue, propose

pytestmark = pytest.mark.postgres


def init(capfd: pytest.CaptureFixture[str], url: str) -> None:
    code, _out, err = cli(capfd, "queue", "init", "--queue", url)
    assert code == 0, err
    open_queue(url)  # the connecting role may review and host (queue grant)


def follow_once(capfd: pytest.CaptureFixture[str], ws: Path, url: str) -> tuple[str, str]:
    code, out, err = cli(capfd, "pending", "follow", "--once", "-C", str(ws), "--queue", url)
    assert code == 0, err
    return out, err


def row(url: str, team: str) -> dict[str, object]:
    with psycopg.connect(url) as conn:
        cur = conn.execute("SELECT * FROM redline_actions WHERE team_id = %s", (team,))
        found = cur.fetchone()
        assert found is not None, f"no row {team}"
        names = [d.name for d in cur.description or []]
        return dict(zip(names, found, strict=True))


def test_init_is_versioned_and_idempotent(pg_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capfd, "queue", "init", "--queue", pg_url)
    assert code == 0, err
    assert f"schema version {LATEST}" in out and "applied: [1, 2, 3]" in out
    assert PASSWORD not in out + err and "***@127.0.0.1" in out
    code, out, err = cli(capfd, "--queue", pg_url, "queue", "init")  # the option at any level
    assert code == 0 and "is up to date" in out
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT version FROM redline_schema").fetchall() == [(1,), (2,), (3,)]


def test_concurrent_inits_apply_each_migration_once(pg_url: str) -> None:
    from redline.teamqueue.db import migrate

    results: list[list[int]] = []
    barrier = threading.Barrier(3)

    def one() -> None:
        with psycopg.connect(pg_url) as conn:
            barrier.wait()
            results.append(migrate(conn))

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [[], [], [1, 2, 3]]


def test_status_names_the_workspace_and_hides_the_password(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    ws = make_workspace(tmp_path / "ws", git=True)
    code, out, err = cli(capfd, "queue", "status", "-C", str(ws), "--queue", pg_url)
    assert code == 1 and "run `redline queue init`" in out  # not initialised yet
    init(capfd, pg_url)
    code, out, err = cli(capfd, "queue", "status", "-C", str(ws), "--queue", pg_url, "--json")
    assert code == 0, err
    data = json.loads(out)
    ident = workspace_id(ws)
    assert data["workspace"] == {"id": ident, "path": str(ws.resolve())}
    assert data["schema_version"] == LATEST and data["reachable"] is True
    assert data["url_from"] == "--queue" and PASSWORD not in out
    assert workspace_id(ws) == ident  # stable
    plain = make_workspace(tmp_path / "plain")
    assert workspace_id(plain) == workspace_id(plain) != ident


def test_mirror_decide_anywhere_apply_locally_then_undo(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    init(capfd, pg_url)
    ws = make_workspace(tmp_path / "ws", git=True)
    record = propose(ws)
    out, _err = follow_once(capfd, ws, pg_url)
    assert "Mirrored 1" in out
    team = team_id(workspace_id(ws), record.id)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no workspace here
    code, out, err = cli(capfd, "pending", "list", "--queue", pg_url, "--json")
    assert code == 0, err
    (item,) = json.loads(out)["actions"]
    assert item["id"] == team and item["local_id"] == record.id
    assert item["workspace"] == {"id": workspace_id(ws), "path": str(ws)}
    assert item["label"] == "Edit a.txt" and item["files"] == ["a.txt"]
    code, out, err = cli(capfd, "pending", "show", team, "--queue", pg_url)
    assert code == 0 and "+more" in out and str(ws) in out
    monkeypatch.setenv("REDLINE_REVIEWER", "alice")  # no longer names who decides
    code, out, err = cli(capfd, "pending", "apply", team, "--queue", pg_url, "--reason", "ok")
    assert code == 0, err
    assert "by redline_admin (team queue role)" in out
    assert "warning: $REDLINE_REVIEWER is ignored" in err and err.count("\n") == 1
    assert (ws / "a.txt").read_text() == "one\n"  # only the workspace's follower writes
    _out, err = follow_once(capfd, ws, pg_url)
    assert (ws / "a.txt").read_text() == "one\nmore\n"
    got = row(pg_url, team)
    assert got["state"] == "applied" and got["finished_at"] is not None
    with psycopg.connect(pg_url) as conn:
        decided = conn.execute(
            "SELECT decided_by, decided_name, patch_hash FROM redline_decisions WHERE id = %s",
            (got["decision_id"],),
        ).fetchone()
    assert decided == ("redline_admin", "redline_admin (team queue role)", got["patch_hash"])
    with WorkspaceQueue(ws) as queue:
        assert queue.get(record.id) is None
    code, out, err = cli(capfd, "undo", "-C", str(ws))
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "one\n"


def test_team_ids_are_unique_across_workspaces_and_filter_by_workspace(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    init(capfd, pg_url)
    one, two = make_workspace(tmp_path / "one"), make_workspace(tmp_path / "two")
    first, second = propose(one), propose(two)
    assert first.id == second.id == "pa-1"
    follow_once(capfd, one, pg_url)
    follow_once(capfd, two, pg_url)
    code, out, _ = cli(capfd, "pending", "list", "--queue", pg_url, "--json")
    ids = {item["id"] for item in json.loads(out)["actions"]}
    assert ids == {team_id(workspace_id(one), "pa-1"), team_id(workspace_id(two), "pa-1")}
    code, out, _ = cli(
        capfd, "pending", "list", "--queue", pg_url, "--json", "--workspace", workspace_id(two)
    )
    assert [item["workspace"]["path"] for item in json.loads(out)["actions"]] == [str(two)]
    code, out, _ = cli(capfd, "pending", "list", "--queue", pg_url)
    assert code == 0 and "2 pending in the team queue" in out
    code, _out, err = cli(capfd, "pending", "apply", "pa-1", "--queue", pg_url)
    assert code == 2 and "is not a team id" in err


def test_two_reviewers_racing_exactly_one_wins(
    team: Team, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    _host, host_url = team.host()
    ws = make_workspace(tmp_path / "ws")
    propose(ws)
    follow_once(capfd, ws, host_url)
    action = team_id(workspace_id(ws), "pa-1")
    roles = {"alice": team.reviewer("alice", name="Alice A"), "bob": team.reviewer("bob")}
    shown = {"alice": "Alice A", "bob": f"{roles['bob'][0]} (team queue role)"}
    results: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def reviewer(name: str, verb: str) -> None:
        with psycopg.connect(roles[name][1]) as conn:
            barrier.wait()
            results[name] = decide(conn, action, verb)

    threads = [
        threading.Thread(target=reviewer, args=("alice", "apply")),
        threading.Thread(target=reviewer, args=("bob", "discard")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    won = [name for name, result in results.items() if result.won]  # type: ignore[attr-defined]
    assert len(won) == 1
    winner = won[0]
    loser = "bob" if winner == "alice" else "alice"
    verb = "apply" if winner == "alice" else "discard"
    assert f"already decided: {verb} by {shown[winner]}" in results[loser].text  # type: ignore[attr-defined]
    # The CLI's loser exits 1 and is told who decided and how.
    code, _out, err = cli(capfd, "pending", "discard", action, "--queue", roles[loser][1])
    assert code == 1 and f"already decided: {verb} by {shown[winner]}" in err


def test_conflict_when_the_base_changed(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    init(capfd, pg_url)
    ws = make_workspace(tmp_path / "ws")
    record = propose(ws)
    follow_once(capfd, ws, pg_url)
    team = team_id(workspace_id(ws), record.id)
    assert cli(capfd, "pending", "apply", team, "--queue", pg_url)[0] == 0
    (ws / "a.txt").write_text("a person's own text\n")
    _out, err = follow_once(capfd, ws, pg_url)
    assert "conflict" in err
    assert (ws / "a.txt").read_text() == "a person's own text\n"
    got = row(pg_url, team)
    assert got["state"] == "conflict" and "a.txt (modified since the preview)" in str(
        got["result_text"]
    )
    with WorkspaceQueue(ws) as queue:
        local = queue.get(record.id)
        assert local is not None and local.stale
    # Still open: a reviewer may decide again (here: discard it).
    code, _out, err = cli(capfd, "pending", "discard", team, "--queue", pg_url)
    assert code == 0, err
    follow_once(capfd, ws, pg_url)
    assert row(pg_url, team)["state"] == "discarded"
    assert (ws / "a.txt").read_text() == "a person's own text\n"


def _forge(url: str, team: str, decision_hash: str) -> None:
    forge_decision(url, team, patch_hash=decision_hash)


def test_forged_replayed_and_foreign_decisions_are_refused_and_logged(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    init(capfd, pg_url)
    ws = make_workspace(tmp_path / "ws")
    first = propose(ws)
    second = propose(ws, add="other\n")
    follow_once(capfd, ws, pg_url)
    ident = workspace_id(ws)
    one, two = team_id(ident, first.id), team_id(ident, second.id)

    # Forged: a decision not made on the proposal's patch.
    _forge(pg_url, two, "0" * 64)
    _out, err = follow_once(capfd, ws, pg_url)
    assert f"{two}: refused: its patch hash does not match" in err
    assert row(pg_url, two)["state"] == "refused"
    assert (ws / "a.txt").read_text() == "one\n"

    # Copied from another action: the hash of pa-1 put on pa-2.
    _forge(pg_url, two, str(row(pg_url, one)["patch_hash"]))
    _out, err = follow_once(capfd, ws, pg_url)
    assert f"{two}: refused" in err and (ws / "a.txt").read_text() == "one\n"

    # Foreign: a row in this workspace whose id names another workspace.
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "UPDATE redline_actions SET state = 'pending', decision_id = NULL WHERE team_id = %s",
            (two,),
        )
        conn.execute("DELETE FROM redline_decisions WHERE team_id = %s", (two,))
        conn.execute("UPDATE redline_actions SET team_id = 'pa-2@other' WHERE team_id = %s", (two,))
    forge_decision(pg_url, "pa-2@other")
    _out, err = follow_once(capfd, ws, pg_url)
    assert "pa-2@other: refused: it names another workspace" in err
    assert (ws / "a.txt").read_text() == "one\n"

    # Replayed: a decision carried out once is never carried out again.
    assert cli(capfd, "pending", "apply", one, "--queue", pg_url)[0] == 0
    follow_once(capfd, ws, pg_url)
    assert (ws / "a.txt").read_text() == "one\nmore\n"
    (ws / "a.txt").write_text("one\n")  # were it re-applied, the text would come back
    _forge(pg_url, one, str(row(pg_url, one)["patch_hash"]))
    _out, err = follow_once(capfd, ws, pg_url)
    assert "not carried out again" in err
    assert (ws / "a.txt").read_text() == "one\n"
    assert row(pg_url, one)["state"] == "applied"


def test_local_decisions_work_offline_and_sync_later(
    pg_server: object, pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    init(capfd, pg_url)
    ws = make_workspace(tmp_path / "ws")
    first = propose(ws)
    follow_once(capfd, ws, pg_url)
    down = pg_url.replace(pg_url.split("@")[1].split("/")[0], "127.0.0.1:1")
    code, _out, err = cli(capfd, "pending", "follow", "--once", "-C", str(ws), "--queue", down)
    assert code == 1 and "cannot connect" in err and PASSWORD not in err and "***@" in err
    # Offline: proposals and local decisions go on in the local queue.
    second = propose(ws, name="a.txt", add="two\n")
    code, _out, err = cli(capfd, "pending", "discard", first.id, "-C", str(ws))
    assert code == 0, err
    follow_once(capfd, ws, pg_url)  # back online: everything syncs
    ident = workspace_id(ws)
    assert row(pg_url, team_id(ident, first.id))["state"] == "discarded"
    assert row(pg_url, team_id(ident, first.id))["closed_by"] == "local person"
    assert row(pg_url, team_id(ident, second.id))["state"] == "pending"


def test_an_untrusted_workspace_cannot_choose_the_queue(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    ws = make_workspace(tmp_path / "ws")
    (ws / ".redline").mkdir()
    (ws / ".redline" / "config.toml").write_text(f'[queue]\nurl = "{pg_url}"\n')
    code, out, err = cli(capfd, "queue", "status", "-C", str(ws))
    assert code == 0 and "team queue: none" in out
    assert "[queue] skipped: this workspace is not trusted" in err and PASSWORD not in out + err


def test_an_action_carried_over_locally_is_replaced_in_the_team_queue(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    init(capfd, pg_url)
    ws = make_workspace(tmp_path / "ws", text="one\ntwo\nthree\nfour\nfive\nsix\n")
    first = propose(ws, add="end\n")
    old = (ws / "a.txt").read_text()
    from redline.workspace.preview import FileModify, Preview, sha256_bytes
    from redline.workspace.queue import ActionDraft, Source

    with WorkspaceQueue(ws) as queue:  # an edit of the first line: carried over the apply
        second = queue.push(
            ActionDraft(
                label="Edit the top",
                source=Source.current("exec", "test", "s1"),
                source_tool_name="edit",
                preview=Preview(
                    [FileModify("a.txt", sha256_bytes(old.encode()), old, "ONE\n" + old[4:])]
                ),
            )
        )
    follow_once(capfd, ws, pg_url)
    ident = workspace_id(ws)
    assert cli(capfd, "pending", "apply", first.id, "-C", str(ws))[0] == 0
    with WorkspaceQueue(ws) as queue:
        (carried,) = queue.list()
    assert carried.id != second.id
    follow_once(capfd, ws, pg_url)
    gone = row(pg_url, team_id(ident, second.id))
    assert gone["state"] == "gone"
    assert f"replaced by {team_id(ident, carried.id)}" in str(gone["result_text"])
    assert row(pg_url, team_id(ident, carried.id))["state"] == "pending"
    assert row(pg_url, team_id(ident, first.id))["state"] == "applied"


def test_a_conflict_that_merges_is_carried_over_and_waits_for_a_new_decision(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    init(capfd, pg_url)
    ws = make_workspace(tmp_path / "ws", text="one\ntwo\nthree\nfour\nfive\nsix\n")
    record = propose(ws, add="end\n")
    follow_once(capfd, ws, pg_url)
    ident = workspace_id(ws)
    team = team_id(ident, record.id)
    assert cli(capfd, "pending", "apply", team, "--queue", pg_url)[0] == 0
    (ws / "a.txt").write_text("ONE\ntwo\nthree\nfour\nfive\nsix\n")  # a person's edit elsewhere
    follow_once(capfd, ws, pg_url)
    assert (ws / "a.txt").read_text() == "ONE\ntwo\nthree\nfour\nfive\nsix\n"  # nothing written
    with WorkspaceQueue(ws) as queue:
        (carried,) = queue.list()
    new_team = team_id(ident, carried.id)
    old = row(pg_url, team)
    assert old["state"] == "gone"
    assert f"carried over them (three-way merge) as {new_team}" in str(old["result_text"])
    assert row(pg_url, new_team)["state"] == "pending"  # mirrored in the same pass
    assert cli(capfd, "pending", "apply", new_team, "--queue", pg_url)[0] == 0
    follow_once(capfd, ws, pg_url)
    assert (ws / "a.txt").read_text() == "ONE\ntwo\nthree\nfour\nfive\nsix\nend\n"
    assert row(pg_url, new_team)["state"] == "applied"
