"""From an agent's diff to the full-file change (no agent process needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.drivers.acp.mapping import (
    MappingError,
    apply_unified_diff,
    codex_changes,
    full_file_change,
)
from redline.workspace.paths import ConfinementError
from redline.workspace.preview import FileCreate, FileModify


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text("one\ntwo\nthree\n")
    return tmp_path


def test_create_when_no_old_text_and_no_file(root: Path) -> None:
    mapped = full_file_change(root, str(root / "new.py"), None, "x\n")
    assert mapped.verified and mapped.change == FileCreate("new.py", "x\n")


def test_whole_file_modify(root: Path) -> None:
    mapped = full_file_change(root, "a.py", "one\ntwo\nthree\n", "one\n")
    assert mapped.verified and isinstance(mapped.change, FileModify)
    assert mapped.change.new_text == "one\n"


def test_unique_snippet_becomes_a_full_file_modify(root: Path) -> None:
    mapped = full_file_change(root, "a.py", "two", "TWO")
    assert mapped.verified and isinstance(mapped.change, FileModify)
    assert (mapped.change.old_text, mapped.change.new_text) == (
        "one\ntwo\nthree\n",
        "one\nTWO\nthree\n",
    )


def test_ambiguous_or_missing_snippet_is_not_verifiable(root: Path) -> None:
    (root / "b.py").write_text("x\nx\n")
    twice = full_file_change(root, "b.py", "x", "y")
    absent = full_file_change(root, "a.py", "four", "five")
    assert not twice.verified and "not found exactly once" in twice.note
    assert not absent.verified
    created_over_existing = full_file_change(root, "a.py", None, "new\n")
    assert not created_over_existing.verified


def test_paths_outside_are_refused(root: Path) -> None:
    with pytest.raises(ConfinementError):
        full_file_change(root, "/etc/passwd", None, "x")
    with pytest.raises(ConfinementError):
        full_file_change(root, "../up.txt", None, "x")


def test_unified_diff_applies_strictly() -> None:
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    assert apply_unified_diff("one\ntwo\nthree\n", diff) == "one\n2\nthree\n"
    with pytest.raises(MappingError):
        apply_unified_diff("one\nTWO\nthree\n", diff)
    with pytest.raises(MappingError):
        apply_unified_diff("one\n", "no hunks here")


def test_unified_diff_without_final_newline() -> None:
    diff = "@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+2\n\\ No newline at end of file\n"
    assert apply_unified_diff("one\ntwo", diff) == "one\n2"


@pytest.mark.parametrize("tagged", [True, False])
def test_codex_changes(root: Path, tagged: bool) -> None:
    diff = "@@ -2 +2 @@\n-two\n+deux\n"
    if tagged:
        changes = {
            str(root / "a.py"): {"type": "update", "unified_diff": diff, "move_path": None},
            str(root / "n.py"): {"type": "add", "content": "n\n"},
        }
    else:
        changes = {
            str(root / "a.py"): {"update": {"unified_diff": diff, "move_path": None}},
            str(root / "n.py"): {"add": {"content": "n\n"}},
        }
    mapped = codex_changes(root, {"changes": changes})
    assert mapped is not None and all(m.verified for m in mapped)
    modify, create = (m.change for m in mapped)
    assert isinstance(modify, FileModify) and modify.new_text == "one\ndeux\nthree\n"
    assert create == FileCreate("n.py", "n\n")
    assert codex_changes(root, {"command": "ls"}) is None
