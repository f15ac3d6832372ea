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


def _plant(tree: Path) -> None:
    """What a check (or a proposal's test) might leave in its working folder."""
    (tree / "tests" / "conftest.py").write_text("planted\n")
    (tree / "pkg" / "__pycache__").mkdir()
    (tree / "pkg" / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\0" * 16)
    (tree / "new" / "deep").mkdir(parents=True)
    (tree / "new" / "deep" / "x.py").write_text("x\n")
    (tree / "link.py").symlink_to(tree / "pkg" / "calc.py")
    os.mkfifo(tree / "fifo")
    locked = tree / "locked"
    locked.mkdir()
    (locked / "inner").mkdir()
    (locked / "inner" / "f").write_text("f\n")
    os.chmod(locked / "inner", 0)
    os.chmod(locked, 0o500)
    # A listed file rewritten with its size and times put back (only the ctime tells).
    calc = tree / "pkg" / "calc.py"
    info = os.stat(calc)
    text = calc.read_text()
    calc.write_text(text.replace("a + b", "a - b"))
    os.utime(calc, ns=(info.st_atime_ns, info.st_mtime_ns))
    # A listed file replaced by another one (a new inode).
    init = tree / "pkg" / "__init__.py"
    init.unlink()
    init.write_text("")
    os.chmod(tree / "tests", 0o500)


def _files(tree: Path) -> set[str]:
    return {str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file() or p.is_symlink()}


@pytest.mark.parametrize("step", ["sync", "restore"])
def test_nothing_a_run_wrote_survives(tmp_path: Path, step: str) -> None:
    root = make_project(tmp_path / "ws", git=False)
    with acquire(root, 1) as tree:
        tree.sync()
        clean = tree.tree_hash({})
        _plant(tree.tree)
        getattr(tree, step)()
        assert _files(tree.tree) == {"pkg/__init__.py", "pkg/calc.py", "tests/test_calc.py"}
        for rel in _files(tree.tree):
            assert (tree.tree / rel).read_bytes() == (root / rel).read_bytes()
        assert tree.copied == 2  # the rewritten and the replaced file
        assert tree.tree_hash({}) == clean
        assert os.stat(tree.tree / "tests").st_mode & 0o700 == 0o700


def test_the_tree_hash_covers_content_and_mode(tmp_path: Path) -> None:
    from redline.checks.scratch import current_tree_hash

    root = make_project(tmp_path / "ws", git=False)
    with acquire(root, 1) as tree:
        tree.sync()
        first = tree.tree_hash({})
        assert current_tree_hash(root, {}) == first
        overlay = {"pkg/calc.py": b"x = 1\n", "pkg/new.py": b""}
        assert current_tree_hash(root, overlay) == tree.tree_hash(overlay)
    os.chmod(root / "tests" / "test_calc.py", 0o755)
    assert current_tree_hash(root, {}) != first
    with acquire(root, 1) as tree:
        tree.sync()
        assert tree.tree_hash({}) == current_tree_hash(root, {})
        assert os.stat(tree.tree / "tests" / "test_calc.py").st_mode & 0o777 == 0o755


def test_a_replaced_tree_folder_is_made_again(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws", git=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with acquire(root, 1) as tree:
        tree.sync()
        import shutil

        shutil.rmtree(tree.tree)
        tree.tree.symlink_to(elsewhere)
        tree.sync()
        assert not tree.tree.is_symlink()
        assert (tree.tree / "pkg" / "calc.py").is_file()
    assert list(elsewhere.iterdir()) == []


def test_a_busy_slot_is_waited_for_and_cancel_stops_the_wait(tmp_path: Path) -> None:
    import threading

    from redline.checks.scratch import ScratchCancelled

    root = make_project(tmp_path / "ws", git=False)
    cancel = threading.Event()
    with acquire(root, 1):
        cancel.set()
        with pytest.raises(ScratchCancelled), acquire(root, 1, cancel):
            pass


def test_a_rewrite_in_the_clock_tick_of_its_copy_is_caught_by_content(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws", git=False)
    with acquire(root, 1) as tree:
        tree.sync()
        calc = tree.tree / "pkg" / "calc.py"
        calc.write_text(calc.read_text().replace("a + b", "a - b"))
        # As if the write had landed in the very tick of the copy: its stats are the ones
        # the manifest recorded, and that tick is not older than the seal.
        info = os.stat(calc)
        entry = tree.manifest["pkg/calc.py"]
        tree.manifest["pkg/calc.py"] = (
            *entry[:4],
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
            info.st_ino,
        )
        tree.seal = info.st_ctime_ns
        tree.restore()
        assert tree.copied == 1
        assert calc.read_text() == (root / "pkg" / "calc.py").read_text()
        # Put back: nothing more to copy.
        tree.restore()
        assert tree.copied == 0
