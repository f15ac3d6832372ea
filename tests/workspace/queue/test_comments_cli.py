"""`redline pending comment` / `viewed`: comments and viewed marks on a queued action
(issue 47): targets, bad input (exit 2), --list --json, --delete, `show --json`, and the
conversation following the action when it is replaced (edit, rebase, partial apply)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from redline.cli import main
from redline.review.comments import CommentError, Target, parse_target
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

from .helpers import create_draft, edit_draft


def run(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["pending", *args])
    out, err = capfd.readouterr()
    return code, out, err


def comments(
    capfd: pytest.CaptureFixture[str], ws: Path, action_id: str
) -> list[dict[str, object]]:
    code, out, err = run(capfd, "-C", str(ws), "comment", action_id, "--list", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == ["comments"]
    return list(data["comments"])


def two_hunks(ws: Path) -> ActionDraft:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    (ws / "m.py").write_text(old)
    new = old.replace("line 2\n", "line two\n").replace("line 18\n", "line eighteen\n")
    return ActionDraft(
        label="Edit m.py",
        source=Source.current("exec", "test", "s1"),
        source_tool_name="edit",
        preview=Preview([FileModify("m.py", sha256_bytes(old.encode()), old, new)]),
    )


def test_parse_target_splits_only_at_a_file_and_digits() -> None:
    files = ["a:1.py", "b.py"]
    assert parse_target("a:1.py", files) == Target("a:1.py")
    assert parse_target("a:1.py:3", files) == Target("a:1.py", 3, "new")
    assert parse_target("b.py:-2", files) == Target("b.py", 2, "old")
    assert parse_target("b.py", files) == Target("b.py")
    with pytest.raises(CommentError, match="not a file of this action"):
        parse_target("c.py:1", files)
    with pytest.raises(CommentError, match="not a file"):
        parse_target("b.py:x", files)


def test_comment_list_delete_round_trip(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws))  # a.txt: hello, world, + more
    code, out, err = run(capfd, "-C", str(ws), "comment", "pa-1", "a.txt:3", "say why")
    assert (code, err) == (0, "") and "Added c-1 on a.txt:3 of pa-1." in out
    assert run(capfd, "-C", str(ws), "comment", "pa-1", "a.txt:-1", "keep hello")[0] == 0
    assert run(capfd, "-C", str(ws), "comment", "pa-1", "a.txt", "whole\nfile")[0] == 0
    listed = comments(capfd, ws, "pa-1")
    assert [list(c) for c in listed] == [
        ["id", "path", "line", "side", "text", "author", "created_at", "outdated"]
    ] * 3
    assert [(c["id"], c["path"], c["line"], c["side"], c["text"]) for c in listed] == [
        ("c-1", "a.txt", 3, "new", "say why"),
        ("c-2", "a.txt", 1, "old", "keep hello"),
        ("c-3", "a.txt", None, "new", "whole\nfile"),
    ]
    assert not any(c["outdated"] for c in listed)
    code, out, _ = run(capfd, "-C", str(ws), "comment", "pa-1", "--list")
    assert code == 0 and "c-1" in out and "a.txt:3: say why" in out and "a.txt:-1: keep" in out
    code, out, _ = run(capfd, "-C", str(ws), "comment", "pa-1", "--delete", "c-2")
    assert code == 0 and "Deleted c-2 of pa-1." in out
    assert [c["id"] for c in comments(capfd, ws, "pa-1")] == ["c-1", "c-3"]
    code, out, _ = run(capfd, "-C", str(ws), "show", "pa-1", "--json")
    data = json.loads(out)
    assert [c["id"] for c in data["comments"]] == ["c-1", "c-3"]
    assert data["files"] == [{"path": "a.txt", "viewed": False}]
    assert "revision" not in data
    # The document is signed and separate: the record itself never changed.
    assert (ws / ".redline" / "queue" / "comments" / "pa-1.json").is_file()


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["pa-1", "b.txt:1", "x"], "b.txt is not a file of this action"),
        (
            ["pa-1", "a.txt:9", "x"],
            "line 9 is out of range: the proposed text of a.txt has lines 1-3",
        ),
        (
            ["pa-1", "a.txt:-3", "x"],
            "line 3 is out of range: the current text of a.txt has lines 1-2",
        ),
        (["pa-1", "a.txt:0", "x"], "line 0 is out of range"),
        (["pa-1", "a.txt:1", "  "], "the comment is empty"),
        (["pa-1", "a.txt:1"], "the comment is empty"),
        (["pa-1", "--delete", "c-9"], "pa-1 has no comment c-9"),
        (["pa-x", "--list"], "is not a pending action id"),
        (["pa-1", "a.txt", "x", "--list"], "one of them"),
        (["pa-1", "--json"], "one of them"),
    ],
    ids=["path", "line", "old-line", "zero", "empty", "no-text", "delete", "id", "both", "json"],
)
def test_bad_input_exits_2_with_the_reason(
    ws: Path, capfd: pytest.CaptureFixture[str], args: list[str], why: str
) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws))
    code, out, err = run(capfd, "-C", str(ws), "comment", *args)
    assert code == 2 and out == "" and why in err and "Traceback" not in err
    assert not (ws / ".redline" / "queue" / "comments" / "pa-1.json").exists()


def test_a_deleted_file_takes_comments_on_its_current_lines(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from redline.workspace.preview import FileDelete

    old = (ws / "a.txt").read_text()
    WorkspaceQueue(ws).push(
        ActionDraft(
            label="Delete a.txt",
            source=Source.current("exec", "test", "s1"),
            preview=Preview([FileDelete("a.txt", sha256_bytes(old.encode()), old)]),
        )
    )
    code, _, err = run(capfd, "-C", str(ws), "comment", "pa-1", "a.txt:1", "x")
    assert code == 2 and "the file is deleted: comment on a line of the current text" in err
    assert run(capfd, "-C", str(ws), "comment", "pa-1", "a.txt:-2", "needed")[0] == 0


def test_not_pending_is_exit_1(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws))
    assert run(capfd, "-C", str(ws), "discard", "pa-1")[0] == 0
    code, _, err = run(capfd, "-C", str(ws), "comment", "pa-1", "a.txt:1", "late")
    assert code == 1 and "pa-1 is not pending" in err


def test_comments_move_with_an_edit_and_a_partial_apply(
    ws: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(two_hunks(ws))
    assert run(capfd, "-C", str(ws), "comment", "pa-1", "m.py:18", "spell it")[0] == 0
    assert run(capfd, "-C", str(ws), "comment", "pa-1", "m.py:2", "the first")[0] == 0
    # An edit (pending edit runs $EDITOR): the proposal's line 2 changes.
    editor = ws.parent / "ed.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/line two/line 2 again/' \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    code, _out, err = run(capfd, "-C", str(ws), "edit", "pa-1")
    assert code == 0, err
    listed = comments(capfd, ws, "pa-2")
    assert [(c["id"], c["line"], c["outdated"]) for c in listed] == [
        ("c-1", 18, False),
        ("c-2", 2, True),
    ]
    assert not (ws / ".redline" / "queue" / "comments" / "pa-1.json").exists()
    code, _, err = run(capfd, "-C", str(ws), "apply", "pa-2", "--only", "m.py#1")
    assert code == 0, err
    assert [c["id"] for c in comments(capfd, ws, "pa-3")] == ["c-1", "c-2"]


def test_viewed_marks_follow_the_change_not_its_place(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(two_hunks(ws))
    queue.push(create_draft("n.txt", "x\n"))
    code, out, err = run(capfd, "-C", str(ws), "viewed", "pa-1", "m.py")
    assert (code, err) == (0, "") and "Marked viewed in pa-1: m.py." in out
    code, _, err = run(capfd, "-C", str(ws), "viewed", "pa-1", "zz.py")
    assert code == 2 and "zz.py is not a file of pa-1" in err
    data = json.loads(run(capfd, "-C", str(ws), "show", "pa-1", "--json")[1])
    assert data["files"] == [{"path": "m.py", "viewed": True}]
    # Another action writes above the change: pa-1 is rebased (moved), still viewed.
    text = (ws / "m.py").read_text()
    queue.push(
        ActionDraft(
            label="Top",
            source=Source.current("exec", "test", "s2"),
            preview=Preview(
                [FileModify("m.py", sha256_bytes(text.encode()), text, "# top\n" + text)]
            ),
        )
    )
    assert run(capfd, "-C", str(ws), "apply", "pa-3")[0] == 0
    pending = json.loads(run(capfd, "-C", str(ws), "list", "--json")[1])["actions"]
    moved = next(a["id"] for a in pending if a["files"] == ["m.py"])
    assert moved != "pa-1"
    data = json.loads(run(capfd, "-C", str(ws), "show", moved, "--json")[1])
    assert data["files"] == [{"path": "m.py", "viewed": True}]
    code, _, _ = run(capfd, "-C", str(ws), "viewed", "pa-2")
    data = json.loads(run(capfd, "-C", str(ws), "show", "pa-2", "--json")[1])
    assert data["files"] == [{"path": "n.txt", "viewed": True}]


def test_tagged_ids_name_the_workspace(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws))
    from redline.commands.workspaces import rows

    (row,) = [r for r in rows() if os.path.realpath(r.known.path) == os.path.realpath(ws)]
    code, _out, err = run(capfd, "comment", f"pa-1@{row.id}", "a.txt:1", "from afar")
    assert code == 0, err
    assert [c["text"] for c in comments(capfd, ws, "pa-1")] == ["from afar"]


def test_the_team_queue_is_refused(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws))
    code, _, err = run(
        capfd, "--queue", "postgresql://x/y", "-C", str(ws), "comment", "pa-1", "a.txt", "x"
    )
    assert code == 2 and "--queue does not apply to `redline pending comment`" in err


def test_show_text_names_comments_viewed_and_revision(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    WorkspaceQueue(ws).push(edit_draft(ws))
    assert run(capfd, "-C", str(ws), "comment", "pa-1", "a.txt:3", "why more")[0] == 0
    assert run(capfd, "-C", str(ws), "viewed", "pa-1")[0] == 0
    code, out, _ = run(capfd, "-C", str(ws), "show", "pa-1")
    assert code == 0
    assert "  comments: 1\n    c-1 a.txt:3: why more\n  viewed:  a.txt" in out
    assert run(capfd, "-C", str(ws), "discard", "pa-1", "--reason", "no")[0] == 0
    WorkspaceQueue(ws).push(edit_draft(ws, new="hello\nworld\nless\n"))
    code, out, _ = run(capfd, "-C", str(ws), "show", "pa-2")
    assert "  revision: 2 of pa-1" in out and "c-1 a.txt:3 (outdated): why more" in out
