"""``redline undo -C PATH``: recovery first, then undo; clear messages and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace import transaction
from redline.workspace.preview import Preview
from redline.workspace.safe_apply import apply_preview
from redline.workspace.transaction import SimulatedCrash

from .helpers import modify, write


def test_undo_reverts_the_newest_apply(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(ws, "a.txt", "a\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]), label="Edit a.txt")
    assert main(["undo", "-C", str(ws)]) == 0
    out, err = capsys.readouterr()
    assert out == "Undid: Edit a.txt (1 file: a.txt).\n"
    assert err == ""
    assert (ws / "a.txt").read_text() == "a\n"


def test_nothing_to_undo(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["undo", "-C", str(ws)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"redline undo: Nothing to undo in {ws.resolve()}: the journal holds no applied "
        "action that is not undone yet.\n"
    )


def test_refused_undo_names_the_files(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(ws, "a.txt", "a\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]), label="Edit a.txt")
    write(ws, "a.txt", "edited again\n")
    assert main(["undo", "-C", str(ws)]) == 1
    _, err = capsys.readouterr()
    assert err == (
        'redline undo: Cannot undo "Edit a.txt": 1 file changed since it was applied: '
        "a.txt (modified since the apply). Nothing was changed.\n"
    )
    assert (ws / "a.txt").read_text() == "edited again\n"


def test_undo_runs_recovery_first_and_says_so(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(ws, "a.txt", "a\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]), label="first")

    def crash(number: int, text: str) -> None:
        if text == "replaced a.txt":
            raise SimulatedCrash

    transaction._step_hook = crash
    with pytest.raises(SimulatedCrash):
        apply_preview(ws, Preview([modify(ws, "a.txt", "c\n")]), label="second")
    transaction._step_hook = None
    assert (ws / "a.txt").read_text() == "c\n"
    assert main(["undo", "-C", str(ws)]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines() == [
        'redline: Rolled back the interrupted apply of "second" (journal entry 000002): '
        "restored a.txt to the state before it.",
        "Undid: first (1 file: a.txt).",
    ]
    assert (ws / "a.txt").read_text() == "a\n"


def test_missing_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["undo", "-C", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_list_names_the_pending_action_each_change_came_from(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(ws, "a.txt", "a\n")
    write(ws, "b.txt", "b\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "a2\n")]), label="Edit a.txt", action_id="pa-7")
    apply_preview(ws, Preview([modify(ws, "b.txt", "b2\n")]), label="Edit b.txt")
    assert main(["undo", "-C", str(ws), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[0] for line in lines] == ["000002", "000001"]
    assert lines[0].endswith("  Edit b.txt  (b.txt)")  # no action id: none shown
    assert lines[1].endswith("  pa-7  Edit a.txt  (a.txt)")
