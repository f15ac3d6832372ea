"""`redline pending apply/discard --only`, `edit` and `show` hunks; rebases in the queue."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.journal import undo_last
from redline.workspace.queue import WorkspaceQueue

from .helpers import edit_draft

# Lines 2, 14 and 26 are far enough apart to be @@ blocks (hunks) of their own.
BASE = "".join(f"line {i}\n" for i in range(1, 37))


def changed(*lines: int, mark: str = "X") -> str:
    out = BASE.splitlines(keepends=True)
    for number in lines:
        out[number - 1] = f"{mark} {number}\n"
    return "".join(out)


def run(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["pending", *args])
    out, err = capfd.readouterr()
    return code, out, err


@pytest.fixture
def ws12(ws: Path) -> Path:
    (ws / "a.txt").write_bytes(BASE.encode())
    return ws


def test_show_lists_hunk_addresses(ws12: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws12).push(edit_draft(ws12, new=changed(2, 14)))
    code, out, _ = run(capfd, "-C", str(ws12), "show", "pa-1")
    assert code == 0 and "a.txt#1  a.txt hunk 1 (lines 1\u20135)" in out and "a.txt#2" in out
    code, out, _ = run(capfd, "-C", str(ws12), "show", "pa-1", "--json")
    hunks = json.loads(out)["hunks"]
    assert [h["address"] for h in hunks] == ["a.txt#1", "a.txt#2"]


def test_partial_apply_then_undo(ws12: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws12).push(edit_draft(ws12, new=changed(2, 14, 26)))
    code, out, err = run(
        capfd, "-C", str(ws12), "apply", "pa-1", "--only", "a.txt#1,a.txt#3", "--reason", "ok"
    )
    assert code == 0, err
    assert out.strip() == (
        "Applied 2 of 3 hunks: Edit a.txt. Reason: ok\n"
        "Still pending as pa-2: a.txt hunk 1 (lines 11\u201317)"
    )
    assert (ws12 / "a.txt").read_text() == changed(2, 26)
    code, out, _ = run(capfd, "-C", str(ws12), "list", "--json")
    (item,) = json.loads(out)["actions"]
    assert item["id"] == "pa-2" and item["label"] == "Edit a.txt (remaining: 1 of 3 hunks)"
    code, _, err = run(capfd, "-C", str(ws12), "apply", "pa-1")
    assert code == 1 and "replaced by pa-2" in err
    undo_last(ws12)
    assert (ws12 / "a.txt").read_bytes() == BASE.encode()


def test_partial_discard(ws12: Path, capfd: pytest.CaptureFixture[str]) -> None:
    WorkspaceQueue(ws12).push(edit_draft(ws12, new=changed(2, 14, 26)))
    code, out, _ = run(capfd, "-C", str(ws12), "discard", "pa-1", "--only", "a.txt#2")
    assert code == 0
    assert (
        out.strip()
        == "Discarded 1 of 3 hunks: Edit a.txt. Reason: \na.txt hunk 2 (lines 11\u201317)"
    )
    assert (ws12 / "a.txt").read_text() == BASE
    code, out, _ = run(capfd, "-C", str(ws12), "apply", "pa-2")
    assert code == 0 and (ws12 / "a.txt").read_text() == changed(2, 26)


@pytest.mark.parametrize(
    ("value", "cause"),
    [("a.txt#9", "a.txt"), ("nope.txt", "nope.txt"), ("a.txt#1,,a.txt#2", "empty"), ("", "")],
)
def test_bad_only_is_exit_2(
    ws12: Path, capfd: pytest.CaptureFixture[str], value: str, cause: str
) -> None:
    WorkspaceQueue(ws12).push(edit_draft(ws12, new=changed(2, 14)))
    code, out, err = run(capfd, "-C", str(ws12), "apply", "pa-1", "--only", value)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("redline pending:") and cause in err
    assert (ws12 / "a.txt").read_text() == BASE


def test_lower_first_rebases_the_upper_in_the_queue(
    ws12: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    queue = WorkspaceQueue(ws12)
    queue.push(edit_draft(ws12, new=changed(2), label="Lower"))
    queue.push(edit_draft(ws12, new=changed(26), label="Upper"))
    code, out, err = run(capfd, "-C", str(ws12), "apply", "pa-1")
    assert code == 0, err
    assert "rebased pa-2 as pa-3 onto pa-1" in out
    code, out, err = run(capfd, "-C", str(ws12), "apply", "pa-3")
    assert code == 0, err
    assert (ws12 / "a.txt").read_text() == changed(2, 26)


def test_overlap_in_the_queue_goes_stale(ws12: Path, capfd: pytest.CaptureFixture[str]) -> None:
    queue = WorkspaceQueue(ws12)
    queue.push(edit_draft(ws12, new=changed(5), label="Lower"))
    queue.push(edit_draft(ws12, new=changed(5, mark="Y"), label="Upper"))
    code, out, _ = run(capfd, "-C", str(ws12), "apply", "pa-1")
    assert code == 0 and "pa-2 is stale" in out and "a.txt hunk 1" in out
    code, _, err = run(capfd, "-C", str(ws12), "apply", "pa-2")
    assert code == 1 and "stale" in err


def editor_script(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_edit_with_editor_then_apply(
    ws12: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    WorkspaceQueue(ws12).push(edit_draft(ws12, new=changed(2)))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", editor_script(tmp_path, "exit 3"))
    code, out, _ = run(capfd, "-C", str(ws12), "edit", "pa-1")
    assert code == 0 and "unchanged" in out
    seen = tmp_path / "seen"
    monkeypatch.setenv(
        "EDITOR",
        editor_script(
            tmp_path,
            f'stat -c %a "$1" > {seen}; sed -i "s/X 2/Z 2/" "$1"',
        ),
    )
    code, out, err = run(capfd, "-C", str(ws12), "edit", "pa-1", "--file", "a.txt")
    assert code == 0, err
    assert out.strip() == "Edited a.txt: pa-1 is now pa-2 (edited)."
    assert seen.read_text().strip() == "600"
    code, out, _ = run(capfd, "-C", str(ws12), "list", "--json")
    (item,) = json.loads(out)["actions"]
    assert item["id"] == "pa-2" and item["edited"] is True
    code, out, err = run(capfd, "-C", str(ws12), "apply", "pa-2", "--reason", "ok")
    assert code == 0, err
    assert out.startswith(
        "Applied with your proposal edited by the reviewer: Edit a.txt. Reason: ok\n"
    )
    assert "-X 2" in out and "+Z 2" in out
    assert (ws12 / "a.txt").read_text() == BASE.replace("line 2\n", "Z 2\n")
    assert not any(p.name.startswith("redline-edit") for p in ws12.iterdir())
    assert os.environ["EDITOR"]


def test_selecting_every_hunk_is_the_whole_apply(
    ws12: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    WorkspaceQueue(ws12).push(edit_draft(ws12, new=changed(2, 14)))
    code, out, err = run(capfd, "-C", str(ws12), "apply", "pa-1", "--only", "a.txt")
    assert code == 0, err
    assert out.strip() == "Applied: Edit a.txt."
    assert (ws12 / "a.txt").read_text() == changed(2, 14)
    code, out, _ = run(capfd, "-C", str(ws12), "list", "--json")
    assert json.loads(out)["actions"] == []
