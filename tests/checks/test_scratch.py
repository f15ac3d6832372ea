"""The scratch tree: copies (never links), incremental sync, a proposal put back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.checks.scratch import ScratchTree, acquire, workspace_cache_dir

from .conftest import make_project


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_sync_copies_then_only_what_changed(tmp_path: Path, git: bool) -> None:
    root = make_project(tmp_path / "ws", git=git)
    (root / ".redline").mkdir()
    (root / ".redline" / "secret").write_text("not copied")
    with acquire(root, 1) as tree:
        tree.sync()
        assert tree.copied == 3
        copy = tree.tree / "pkg" / "calc.py"
        assert copy.read_text() == (root / "pkg" / "calc.py").read_text()
        # A copy, not a link: writing it leaves the workspace alone.
        assert os.stat(copy).st_ino != os.stat(root / "pkg" / "calc.py").st_ino
        assert os.stat(copy).st_nlink == 1
        assert not (tree.tree / ".redline").exists()
        tree.sync()
        assert tree.copied == 0
    # Reused by the next acquire: a workspace change is all that is copied.
    (root / "tests" / "test_calc.py").write_text("changed\n")
    (root / "pkg" / "__init__.py").unlink()
    with acquire(root, 1) as tree:
        tree.sync()
        assert tree.copied == 1
        assert (tree.tree / "tests" / "test_calc.py").read_text() == "changed\n"
        assert not (tree.tree / "pkg" / "__init__.py").exists()


def test_a_proposal_is_put_back_and_a_check_write_is_undone(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws", git=False)
    original = (root / "pkg" / "calc.py").read_text()
    with acquire(root, 1) as tree:
        tree.sync()
        base_hash = tree.tree_hash({})
        tree.overlay({"pkg/calc.py": b"proposal\n", "pkg/new.py": b"x = 1\n"})
        assert tree.tree_hash({"pkg/calc.py": b"proposal\n"}) != base_hash
        # A check rewrote a file in place (``--fix``) in another state.
        (tree.tree / "tests" / "test_calc.py").write_text("fixed by a tool\n")
    with acquire(root, 1) as tree:
        tree.sync()
        assert (tree.tree / "pkg" / "calc.py").read_text() == original
        assert not (tree.tree / "pkg" / "new.py").exists()
        assert (tree.tree / "tests" / "test_calc.py").read_text() == (
            root / "tests" / "test_calc.py"
        ).read_text()
        assert tree.tree_hash({}) == base_hash
    assert (root / "pkg" / "calc.py").read_text() == original


def test_slots_are_separate_and_under_the_user_cache(tmp_path: Path, private_cache: Path) -> None:
    root = make_project(tmp_path / "ws", git=False)
    assert workspace_cache_dir(root).is_relative_to(private_cache / "redline")
    with acquire(root, 2) as first, acquire(root, 2) as second:
        assert first.slot != second.slot


def test_a_damaged_manifest_means_a_cold_copy(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws", git=False)
    with acquire(root, 1) as tree:
        tree.sync()
        (tree.slot / "manifest.json").write_text('{"version": 1, "files": {"../x": [1]}}')
    with acquire(root, 1) as tree:
        assert tree.manifest == {}
        tree.sync()
        assert tree.copied == 3
    assert isinstance(tree, ScratchTree)
