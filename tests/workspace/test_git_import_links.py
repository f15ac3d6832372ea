"""``redline pending import`` skips symbolic links (added, changed, turned into or from a
link) with a message, as it skips binary files: a link is never queued as a regular file
holding its target. The import runs in a process of its own, as a person runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from redline.workspace.queue import WorkspaceQueue

from .gitrepo import commit_all, git, init_repo, isolate_git


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n", "was-file": "plain\n"})
    (root / "moved").symlink_to("a.txt")
    commit_all(root, "a link")
    return root


def import_(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redline", "pending", "-C", str(root), "import", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "REDLINE_CONFIG_DIR": str(root.parent / "config")},
        timeout=120,
        check=False,
    )


def queued_files(root: Path) -> list[str]:
    queue = WorkspaceQueue(root)
    try:
        return sorted(f for record in queue.list() for f in record.files)
    finally:
        queue.close()


def link_changes(root: Path) -> None:
    """Links to .git/hooks and /etc/passwd added, a file turned into a link, a link's
    target changed, and one ordinary edit."""
    (root / "hk").symlink_to(".git/hooks")
    (root / "pw").symlink_to("/etc/passwd")
    (root / "was-file").unlink()
    (root / "was-file").symlink_to("/etc/passwd")
    (root / "moved").unlink()
    (root / "moved").symlink_to(".git/config")
    (root / "a.txt").write_text("a\nmore\n")


def assert_links_skipped(root: Path, proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 1, proc.stderr
    for name in ("hk", "pw", "was-file", "moved"):
        assert (
            f"redline pending import: {name}: symbolic link; redline imports regular files "
            "only, never a link; not imported"
        ) in proc.stderr
    assert "Imported 1 action" in proc.stdout
    assert queued_files(root) == ["a.txt"]
    assert not (root / "hk").exists() or (root / "hk").is_symlink()


def test_a_branch_with_links_imports_only_its_files(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "agent")
    link_changes(repo)
    commit_all(repo, "links")
    git(repo, "checkout", "-q", "main")
    assert not (repo / "hk").exists() and not (repo / "pw").exists()
    proc = import_(repo, "agent")
    assert_links_skipped(repo, proc)
    assert not os.path.lexists(repo / "hk") and not os.path.lexists(repo / "pw")
    assert (repo / "was-file").read_text() == "plain\n"
    # Applying everything that was queued writes no file where a link was.
    queue = WorkspaceQueue(repo)
    ids = [record.id for record in queue.list()]
    queue.close()
    applied = subprocess.run(
        [sys.executable, "-m", "redline", "pending", "-C", str(repo), "apply", *ids],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (repo / "a.txt").read_text() == "a\nmore\n"
    assert not os.path.lexists(repo / "hk") and not os.path.lexists(repo / "pw")
    assert (repo / "was-file").read_text() == "plain\n"


def test_a_worktree_with_links_imports_only_its_files(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", str(other))
    link_changes(other)
    proc = import_(repo, "--worktree", str(other))
    assert_links_skipped(repo, proc)
    assert not os.path.lexists(repo / "hk")


def test_a_patch_with_links_imports_only_its_files(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "agent")
    link_changes(repo)
    commit_all(repo, "links")
    patch = repo.parent / "links.patch"
    patch.write_text(git(repo, "format-patch", "-1", "--stdout"))
    git(repo, "checkout", "-q", "main")
    proc = import_(repo, "--patch", str(patch))
    assert_links_skipped(repo, proc)
    assert not os.path.lexists(repo / "hk") and not os.path.lexists(repo / "pw")
