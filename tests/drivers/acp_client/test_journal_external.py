"""Journal entries for writes an agent makes itself after a person allowed them."""

from __future__ import annotations

from pathlib import Path

from redline.workspace.journal import (
    begin_external,
    finish_external,
    recover,
    undo_history,
    undo_last,
)
from redline.workspace.preview import sha256_bytes


def test_finish_records_the_write_for_undo(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("old\n")
    entry = begin_external(
        tmp_path,
        "a.py",
        label="Edit a.py",
        source_tool_name="acp:edit",
        approved_sha256=sha256_bytes(b"new\n"),
    )
    (tmp_path / "a.py").write_text("new\n")
    outcome = finish_external(tmp_path, entry)
    assert outcome.changed and outcome.as_approved
    assert undo_history(tmp_path)[0].source_tool_name == "acp:edit"
    undo_last(tmp_path)
    assert (tmp_path / "a.py").read_text() == "old\n"


def test_a_different_write_is_recorded_and_said(tmp_path: Path) -> None:
    entry = begin_external(
        tmp_path,
        "n.py",
        label="Create n.py",
        source_tool_name="acp:edit",
        approved_sha256=sha256_bytes(b"approved\n"),
    )
    (tmp_path / "n.py").write_text("other\n")
    outcome = finish_external(tmp_path, entry)
    assert outcome.changed and not outcome.as_approved
    undo_last(tmp_path)
    assert not (tmp_path / "n.py").exists()


def test_no_write_leaves_no_entry(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("old\n")
    entry = begin_external(
        tmp_path, "a.py", label="Edit a.py", source_tool_name="acp:edit", approved_sha256=None
    )
    assert not finish_external(tmp_path, entry).changed
    assert undo_history(tmp_path) == []


def test_recovery_completes_rather_than_rolls_back(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("old\n")
    begin_external(
        tmp_path,
        "a.py",
        label="Edit a.py",
        source_tool_name="acp:edit",
        approved_sha256=sha256_bytes(b"new\n"),
    )
    # redline dies here; the agent writes anyway.
    (tmp_path / "a.py").write_text("new\n")
    messages = recover(tmp_path)
    assert any("Recorded the approved agent write" in m for m in messages)
    assert (tmp_path / "a.py").read_text() == "new\n"
    assert undo_history(tmp_path)[0].label == "Edit a.py"
