"""``redline hooks install claude`` keeps ``.claude/settings.local.json`` (a local path) out
of git: it goes into the file ``git rev-parse --git-path info/exclude`` names."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.workspace.gitrepo import git, init_repo, isolate_git

from redline.cli import main
from redline.drivers.hooks.install import install

BASE = "/opt/redline/bin/redline"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return init_repo(tmp_path / "repo", {"README": "r\n"})


def status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


def test_install_adds_the_settings_file_to_info_exclude(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    assert main(["hooks", "install", "claude", "-C", str(repo)]) == 0
    out = capfd.readouterr().out
    exclude = repo / ".git" / "info" / "exclude"
    assert f"to git's exclude file {exclude}" in out
    assert "/.claude/settings.local.json" in exclude.read_text().splitlines()
    assert status(repo) == ""  # nothing for git to show: the file is excluded
    before = exclude.read_text()
    assert install("claude", repo, user=False, wait_seconds=600, base=BASE).excluded == ""
    assert exclude.read_text() == before  # installing again adds nothing


def test_a_workspace_below_the_top_and_a_linked_worktree(repo: Path) -> None:
    sub = repo / "pkg"
    sub.mkdir()
    done = install("claude", sub, user=False, wait_seconds=600, base=BASE)
    assert "/pkg/.claude/settings.local.json" in Path(done.excluded).read_text().splitlines()
    assert status(repo) == ""
    git(repo, "worktree", "add", "-q", str(repo.parent / "wt"), "-b", "wt")
    other = repo.parent / "wt"
    done = install("claude", other, user=False, wait_seconds=600, base=BASE)
    named = git(other, "rev-parse", "--path-format=absolute", "--git-path", "info/exclude")
    assert Path(done.excluded).resolve() == Path(named.strip()).resolve()
    assert status(other) == ""


def test_an_ignored_file_or_a_folder_outside_git_is_left_alone(repo: Path, tmp_path: Path) -> None:
    (repo / ".gitignore").write_text(".claude/\n")
    done = install("claude", repo, user=False, wait_seconds=600, base=BASE)
    assert done.excluded == ""
    assert "settings.local.json" not in (repo / ".git" / "info" / "exclude").read_text()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert install("claude", plain, user=False, wait_seconds=600, base=BASE).excluded == ""
    assert subprocess.run(["git", "-C", str(plain), "status"], capture_output=True).returncode
