"""`redline pending`: list, show, apply, discard, clear; JSON shapes and exit statuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.preview import FileCreate, Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

from .helpers import create_draft, edit_draft

KEYS = [
    "id",
    "label",
    "source_tool_name",
    "source",
    "applied_by",
    "files",
    "via",
    "added",
    "removed",
    "stale",
    "orphaned",
    "created_at",
    "edited",
]


def run(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["pending", *args])
    out, err = capfd.readouterr()
    return code, out, err


def test_list_json_is_the_contract(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    queue.push(create_draft("b.txt", "one\ntwo\n"))
    code, out, err = run(capfd, "-C", str(ws), "list", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert list(data) == ["actions"]
    first, second = data["actions"]
    assert list(first) == KEYS and first["id"] == "pa-2" and second["id"] == "pa-1"
    assert first["source"] == {"kind": "exec", "name": "test", "session_id": "s1"}
    assert (first["files"], first["added"], first["removed"]) == (["b.txt"], 2, 0)
    assert first["stale"] is False and first["orphaned"] is False
    assert first["created_at"].endswith("+00:00")


def test_human_list_and_show(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws, label="Add more"))
    code, out, _ = run(capfd, "-C", str(ws), "list")
    assert code == 0 and "pa-1" in out and "Add more" in out and "+1 -0" in out
    code, out, _ = run(capfd, "-C", str(ws), "show", "pa-1")
    assert code == 0 and "+more" in out and "--- a/a.txt" in out
    code, out, _ = run(capfd, "-C", str(ws), "list")
    assert "1 pending" in out


def test_apply_then_show_the_resolution(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws, label="Add more"))
    code, out, _ = run(capfd, "-C", str(ws), "apply", "pa-1", "--reason", "looks right")
    assert code == 0 and out.strip() == "Applied: Add more."
    assert (ws / "a.txt").read_text() == "hello\nworld\nmore\n"
    code, out, _ = run(capfd, "-C", str(ws), "show", "pa-1", "--json")
    data = json.loads(out)
    assert code == 0 and list(data) == [*KEYS, "diff", "hunks", "resolution", "comments"]
    assert data["resolution"]["decision"] == "apply"
    assert data["resolution"]["reason"] == "looks right"
    assert data["resolution"]["result_text"] == "Applied: Add more."
    assert "+more" in data["diff"]
    code, _, err = run(capfd, "-C", str(ws), "apply", "pa-1")
    assert code == 1 and "already applied" in err
    # the journal knows which action it was: undo works as for any apply
    from redline.workspace import journal

    assert journal.undo_history(ws)[0].action_id == "pa-1"


def test_discard_reports_the_reason_as_resolve_does(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws, label="Add more"))
    code, out, _ = run(capfd, "-C", str(ws), "discard", "pa-1", "--reason", "not needed")
    assert code == 0 and out.strip() == "Discarded: Add more. Reason: not needed"
    assert (ws / "a.txt").read_text() == "hello\nworld\n"


def test_stale_apply_is_refused_and_stays(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws))
    (ws / "a.txt").write_text("changed\n")
    code, out, _ = run(capfd, "-C", str(ws), "list", "--json")
    assert json.loads(out)["actions"][0]["stale"] is True
    code, _, err = run(capfd, "-C", str(ws), "apply", "pa-1")
    assert code == 1 and "a.txt (modified since the preview)" in err
    assert "still pending" in err
    record = WorkspaceQueue(ws).get("pa-1")
    assert record is not None and record.stale and record.state == "pending"
    assert (ws / "a.txt").read_text() == "changed\n"


def test_bad_input_and_gone(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert run(capfd, "-C", str(ws), "apply", "banana")[0] == 2
    assert run(capfd, "-C", str(ws), "show", "pa-01")[0] == 2
    assert run(capfd, "-C", str(ws), "apply", "pa-7")[0] == 1
    assert run(capfd, "-C", str(ws), "show", "pa-7")[0] == 1
    assert run(capfd, "-C", str(ws / "missing"), "list")[0] == 2
    assert run(capfd, "-C", str(ws), "frobnicate")[0] == 2


def test_orphaned_owner_action_can_only_be_discarded(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    dead = Source("acp", "gemini via ACP", "s9", pid=2**22 + 4321, pid_start=7)
    WorkspaceQueue(ws).push(
        ActionDraft(label="Run tests", source=dead, source_tool_name="acp:execute")
    )
    code, out, _ = run(capfd, "-C", str(ws), "list", "--json")
    assert json.loads(out)["actions"][0]["orphaned"] is True
    code, out, _ = run(capfd, "-C", str(ws), "list")
    assert "its tool's process has ended" in out
    code, _, err = run(capfd, "-C", str(ws), "apply", "pa-1")
    assert code == 1 and "its tool's process has ended" in err
    code, out, _ = run(capfd, "-C", str(ws), "discard", "pa-1", "--reason", "old")
    assert code == 0 and out.strip() == "Discarded: Run tests. Reason: old"


def test_clear_discards_newest_first(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws, label="first"))
    queue.push(edit_draft(ws, label="second"))
    code, out, _ = run(capfd, "-C", str(ws), "clear", "--reason", "start over")
    assert code == 0
    assert out.splitlines() == [
        "Discarded: second. Reason: start over",
        "Discarded: first. Reason: start over",
    ]
    assert WorkspaceQueue(ws).list() == []


def test_bad_record_is_reported_and_the_rest_listed(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    queue.push(edit_draft(ws))
    (ws / ".redline/queue/actions/pa-1.json").write_text('{"version": 1, "rec')
    code, out, err = run(capfd, "-C", str(ws), "list", "--json")
    # The list is incomplete, so the exit status is 1 and the record is named.
    data = json.loads(out)
    assert code == 1 and [a["id"] for a in data["actions"]] == ["pa-2"]
    assert [u["file"] for u in data["unusable"]] == [".redline/queue/actions/pa-1.json"]
    assert "truncated" in data["unusable"][0]["why"]
    assert "queue record pa-1" in err and "truncated" in err
    code, out, err = run(capfd, "-C", str(ws), "list")
    assert code == 1 and "pa-2" in out and "queue record pa-1" in err


def test_names_that_are_not_utf8_use_surrogate_escapes(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    WorkspaceQueue(ws).push(
        ActionDraft(
            label="Create it",
            source=Source.current("exec"),
            source_tool_name="write",
            preview=Preview([FileCreate(name, "x\n")]),
        )
    )
    code, out, _ = run(capfd, "-C", str(ws), "list", "--json")
    assert code == 0 and '"caf\\udce9.txt"' in out
    assert os.fsencode(json.loads(out)["actions"][0]["files"][0]) == b"caf\xe9.txt"


def test_an_unusable_record_can_be_discarded(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    queue.push(create_draft("b.txt", "only here\n"))
    (ws / ".redline/queue/actions/pa-1.json").write_text("garbage")
    code, _, err = run(capfd, "-C", str(ws), "apply", "pa-1")
    assert code == 1 and "queue record pa-1" in err and "damaged" in err
    code, out, _ = run(capfd, "-C", str(ws), "discard", "pa-1")
    assert code == 0 and "Removed the unusable queue record pa-1" in out
    # contents missing: cannot apply, can discard
    for name in os.listdir(ws / ".redline/queue/contents"):
        (ws / ".redline/queue/contents" / name).unlink()
    code, _, err = run(capfd, "-C", str(ws), "apply", "pa-2")
    assert code == 1 and "stored contents" in err
    code, out, _ = run(capfd, "-C", str(ws), "discard", "pa-2", "--reason", "gone")
    assert code == 0 and out.strip() == "Discarded: Create b.txt. Reason: gone"
    assert WorkspaceQueue(ws).list() == []
