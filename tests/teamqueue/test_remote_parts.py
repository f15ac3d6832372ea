"""Picking hunks (`--only`) and editing from anywhere: `redline pending apply|discard
--only … --queue URL` and `redline pending edit --queue URL`, carried out by the
workspace's follower only on the proposal it made and on unchanged files."""

from __future__ import annotations

import json
import stat
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from redline.teamqueue.settings import team_id, workspace_id
from redline.workspace.hunks import HUNK_NUMBERING
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

from .helpers import cli, forge_decision, make_workspace, open_queue

pytestmark = pytest.mark.postgres

OLD = "".join(f"line {n}\n" for n in range(1, 13))
NEW = OLD.replace("line 2\n", "line TWO\n").replace("line 11\n", "line ELEVEN\n")


def init(capfd: pytest.CaptureFixture[str], url: str) -> None:
    code, _out, err = cli(capfd, "queue", "init", "--queue", url)
    assert code == 0, err
    open_queue(url)


def follow_once(capfd: pytest.CaptureFixture[str], ws: Path, url: str) -> str:
    code, _out, err = cli(capfd, "pending", "follow", "--once", "-C", str(ws), "--queue", url)
    assert code == 0, err
    return err


def two_hunks(root: Path) -> str:
    """A proposal with two hunks in a.txt; its local id."""
    root.mkdir(parents=True)
    (root / "a.txt").write_text(OLD)
    preview = Preview([FileModify("a.txt", sha256_bytes(OLD.encode()), OLD, NEW)])
    with WorkspaceQueue(root) as queue:
        record = queue.push(
            ActionDraft(
                label="Edit a.txt",
                source=Source.current("exec", "test", "s1"),
                source_tool_name="edit",
                preview=preview,
            )
        )
    return record.id


def row(url: str, team: str) -> dict[str, object]:
    with psycopg.connect(url) as conn:
        cur = conn.execute(
            "SELECT a.*, d.decision, d.only_parts, d.edit_path, d.edit_text, d.decided_name"
            " FROM redline_actions a LEFT JOIN redline_decisions d ON d.id = a.decision_id"
            " WHERE a.team_id = %s",
            (team,),
        )
        found = cur.fetchone()
        assert found is not None, f"no row {team}"
        names = [d.name for d in cur.description or []]
        return dict(zip(names, found, strict=True))


def open_ids(capfd: pytest.CaptureFixture[str], url: str) -> list[str]:
    code, out, err = cli(capfd, "pending", "list", "--queue", url, "--json")
    assert code == 0, err
    return [item["id"] for item in json.loads(out)["actions"]]


def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    script = tmp_path / "fake-editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", str(script))
    monkeypatch.delenv("VISUAL", raising=False)


def test_only_one_hunk_from_anywhere(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    init(capfd, pg_url)
    ws = tmp_path / "ws"
    local = two_hunks(ws)
    follow_once(capfd, ws, pg_url)
    ident = workspace_id(ws)
    team = team_id(ident, local)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capfd, "pending", "show", team, "--queue", pg_url)
    assert code == 0 and "hunks:   a.txt#1, a.txt#2 (select with --only PATH#N)" in out
    code, out, _err = cli(capfd, "pending", "show", team, "--queue", pg_url, "--json")
    data = json.loads(out)
    assert data["hunks"] == ["a.txt#1", "a.txt#2"] and data["editable"] == ["a.txt"]
    # Parts the proposal does not have are bad input, and nothing is decided.
    for bad, why in (("a.txt#3", "no such hunk"), ("b.txt", "not a file of this action")):
        code, _out, err = cli(capfd, "pending", "apply", team, "--only", bad, "--queue", pg_url)
        assert code == 2 and why in err, err
    assert row(pg_url, team)["state"] == "pending"
    monkeypatch.setenv("REDLINE_REVIEWER", "alice")
    code, out, err = cli(capfd, "pending", "apply", team, "--only", "a.txt#2", "--queue", pg_url)
    assert code == 0 and "only a.txt#2" in out, err
    got = row(pg_url, team)
    assert got["decision"] == "apply"
    assert got["only_parts"] == {"numbering": HUNK_NUMBERING, "parts": ["a.txt#2"]}
    assert (ws / "a.txt").read_text() == OLD  # the follower writes, not the reviewer
    follow_once(capfd, ws, pg_url)
    assert (ws / "a.txt").read_text() == OLD.replace("line 11\n", "line ELEVEN\n")
    assert row(pg_url, team)["state"] == "applied"
    # The hunk left waits under a new id, in the team queue too.
    (rest,) = open_ids(capfd, pg_url)
    assert rest != team and rest.endswith(f"@{ident}")
    code, out, err = cli(capfd, "pending", "show", rest, "--queue", pg_url)
    assert code == 0 and "+line TWO" in out and "ELEVEN" not in out


def test_a_forged_selection_is_refused_by_the_workspace(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    init(capfd, pg_url)
    ws = tmp_path / "ws"
    local = two_hunks(ws)
    team = team_id(workspace_id(ws), local)
    follow_once(capfd, ws, pg_url)
    forge_decision(pg_url, team, only=["a.txt#7"])  # past redline_decide: no check
    err = follow_once(capfd, ws, pg_url)
    got = row(pg_url, team)
    assert got["state"] == "refused" and "--only" in str(got["result_text"])
    assert "refused" in err and (ws / "a.txt").read_text() == OLD


@pytest.mark.parametrize(
    "parts",
    [["a.txt#1"], {"numbering": 1, "parts": ["a.txt#1"]}, {"parts": ["a.txt#1"]}],
    ids=["bare-list", "numbering-1", "no-numbering"],
)
def test_parts_numbered_by_another_redline_version_are_refused(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], parts: object
) -> None:
    init(capfd, pg_url)
    ws = tmp_path / "ws"
    local = two_hunks(ws)
    team = team_id(workspace_id(ws), local)
    follow_once(capfd, ws, pg_url)
    forge_decision(pg_url, team, raw_only=parts)  # as an older redline stored them
    err = follow_once(capfd, ws, pg_url)
    got = row(pg_url, team)
    assert got["state"] == "refused"
    assert "refused: hunk numbers from another redline version; decide again" in err
    assert str(got["result_text"]).endswith(
        "hunk numbers from another redline version; decide again"
    )
    assert (ws / "a.txt").read_text() == OLD


def test_edit_from_anywhere_then_apply_the_edited_action(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    init(capfd, pg_url)
    ws = make_workspace(tmp_path / "ws")
    with WorkspaceQueue(ws) as queue:
        record = queue.push(
            ActionDraft(
                label="Edit a.txt",
                source=Source.current("exec", "test", "s1"),
                source_tool_name="edit",
                preview=Preview(
                    [FileModify("a.txt", sha256_bytes(b"one\n"), "one\n", "one\nmore\n")]
                ),
            )
        )
    follow_once(capfd, ws, pg_url)
    team = team_id(workspace_id(ws), record.id)
    monkeypatch.chdir(tmp_path)
    editor(tmp_path, monkeypatch, 'sed -i "s/more/EDITED/" "$1"')
    code, out, err = cli(capfd, "pending", "edit", team, "--queue", pg_url)
    assert code == 0, err
    assert "replaced by your edit of a.txt" in out
    assert "by redline_admin (team queue role)" in out
    got = row(pg_url, team)
    assert (got["decision"], got["edit_path"], got["edit_text"]) == (
        "edit",
        "a.txt",
        "one\nEDITED\n",
    )
    assert (ws / "a.txt").read_text() == "one\n"
    follow_once(capfd, ws, pg_url)
    got = row(pg_url, team)
    assert got["state"] == "gone" and "edited a.txt: replaced by" in str(got["result_text"])
    (edited,) = open_ids(capfd, pg_url)
    code, out, _err = cli(capfd, "pending", "show", edited, "--queue", pg_url)
    assert "+EDITED" in out
    assert (ws / "a.txt").read_text() == "one\n"  # an edit writes nothing by itself
    code, _out, err = cli(capfd, "pending", "apply", edited, "--queue", pg_url)
    assert code == 0, err
    follow_once(capfd, ws, pg_url)
    assert (ws / "a.txt").read_text() == "one\nEDITED\n"
    assert row(pg_url, edited)["state"] == "applied"


def test_an_edit_on_changed_files_is_not_carried_out(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    init(capfd, pg_url)
    ws = tmp_path / "ws"
    local = two_hunks(ws)
    follow_once(capfd, ws, pg_url)
    team = team_id(workspace_id(ws), local)
    editor(tmp_path, monkeypatch, 'sed -i "s/TWO/2!/" "$1"')
    code, _out, err = cli(capfd, "pending", "edit", team, "--queue", pg_url)
    assert code == 0, err
    (ws / "a.txt").write_text(OLD + "someone else\n")
    follow_once(capfd, ws, pg_url)
    got = row(pg_url, team)
    assert got["state"] == "conflict" and "not edited: the files changed" in str(got["result_text"])
    with WorkspaceQueue(ws) as queue:
        kept = queue.get(local)
        assert kept is not None and kept.preview is not None
        assert "TWO" in queue.preview(kept).changes[0].new_text  # type: ignore[union-attr]
    assert (ws / "a.txt").read_text() == OLD + "someone else\n"


def test_an_edit_that_lost_the_race_keeps_the_text(
    pg_url: str,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from redline.teamqueue.remote import decide

    init(capfd, pg_url)
    ws = tmp_path / "ws"
    local = two_hunks(ws)
    team = team_id(workspace_id(ws), local)
    follow_once(capfd, ws, pg_url)
    # The other reviewer decides while this one is still in the editor.
    script = tmp_path / "slow-editor.py"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, psycopg\n"
        "from redline.teamqueue.remote import decide\n"
        f"with psycopg.connect({pg_url!r}) as conn:\n"
        f"    assert decide(conn, {team!r}, 'discard').won\n"
        "with open(sys.argv[1], 'a') as f:\n"
        "    f.write('mine\\n')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", str(script))
    monkeypatch.delenv("VISUAL", raising=False)
    temp = tmp_path / "tmp"  # where the kept copy goes: inside this test's folder
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    code, _out, err = cli(capfd, "pending", "edit", team, "--queue", pg_url)
    assert code == 1 and "already decided: discard by redline_admin (team queue role)" in err, err
    assert "your edited text is kept in" in err
    kept = Path(err.split("your edited text is kept in ")[1].split()[0].rstrip(".;"))
    assert kept.read_text().endswith("mine\n") and temp in kept.parents
    with psycopg.connect(pg_url) as conn:
        assert not decide(conn, team, "apply").won


def test_forged_edits_are_refused_by_the_workspace(
    pg_url: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from redline.teamqueue import edits

    init(capfd, pg_url)
    ws = tmp_path / "ws"
    local = two_hunks(ws)
    follow_once(capfd, ws, pg_url)
    team = team_id(workspace_id(ws), local)
    cap = len(NEW) + 10
    monkeypatch.setattr(edits, "MAX_EDIT_CHARS", cap)

    def forge(path: str | None, text: str | None) -> dict[str, object]:
        # Straight into the tables, past redline_decide: no check but the follower's.
        forge_decision(
            pg_url,
            team,
            decision="edit",
            edit=(path, text),  # type: ignore[arg-type]
        )
        follow_once(capfd, ws, pg_url)
        return row(pg_url, team)

    for path, text, why in (
        ("b.txt", "x\n", "the edit cannot be used"),  # a file the action does not change
        ("a.txt", "y" * (cap + 1), f"longer than {cap} characters"),
        ("a.txt", None, "without the edited file and text"),
        ("a.txt", NEW, "leaves a.txt as proposed"),
    ):
        got = forge(path, text)
        assert got["state"] == "refused" and why in str(got["result_text"]), got["result_text"]
    assert (ws / "a.txt").read_text() == OLD
    with WorkspaceQueue(ws) as queue:
        assert [r.id for r in queue.list()] == [local]  # the proposal stays as it was
