"""``redline undo`` of a committed action: drop an unshared HEAD, else a path-limited revert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.journal import undo_history

from .gitrepo import commit_all, git, init_repo, isolate_git, write_config
from .test_git_provenance import BASE, changed, pending, propose


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_user_config: Path) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    return init_repo(tmp_path / "repo", {"a.txt": BASE, "b.txt": "b\n", "c.txt": "c\n"})


def apply(capfd: pytest.CaptureFixture[str], root: Path, name: str, new: str) -> str:
    action = propose(root, name, new)
    code, out, err = pending(capfd, root, "apply", action)
    assert (code, err) == (0, ""), out
    return git(root, "rev-parse", "HEAD").strip()


def undo(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["undo", "-C", str(root), *args])
    out, err = capfd.readouterr()
    return code, out, err


def entry_of(root: Path, action_id: str) -> str:
    return next(i.entry_id for i in undo_history(root) if i.action_id == action_id)


def count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def test_an_unshared_head_commit_is_removed(repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "b.txt").write_text("b staged\n")
    git(repo, "add", "b.txt")
    apply(capfd, repo, "a.txt", changed(BASE, 2))
    assert count(repo) == 2
    code, out, err = undo(capfd, repo)
    assert (code, err) == (0, "")
    assert "git: removed commit " in out and f"(HEAD is {first[:12]})" in out
    assert git(repo, "rev-parse", "HEAD").strip() == first
    assert (repo / "a.txt").read_text() == BASE
    assert git(repo, "diff", "--cached", "--name-only").split() == ["b.txt"]  # still staged
    assert git(repo, "diff", "--name-only") == ""
    main(["log", "-C", str(repo), "--json"])
    decisions = json.loads(capfd.readouterr()[0])["decisions"]
    assert [d["decision"] for d in decisions] == ["applied", "undone"]


def test_a_pushed_head_commit_is_reverted(repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    made = apply(capfd, repo, "a.txt", changed(BASE, 2))
    git(repo, "update-ref", "refs/remotes/origin/main", made)  # as after a push
    code, out, err = undo(capfd, repo)
    assert (code, err) == (0, ""), out
    assert count(repo) == 3 and f"git: reverted {made[:12]} in commit " in out
    assert git(repo, "log", "-1", "--format=%s") == 'Revert "Edit a.txt"\n'
    assert git(repo, "show", "HEAD:a.txt") == BASE
    assert (repo / "a.txt").read_text() == BASE
    assert git(repo, "status", "--porcelain") == ""


def test_an_older_commit_is_reverted_only_on_its_paths(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    older = apply(capfd, repo, "a.txt", changed(BASE, 2))
    apply(capfd, repo, "c.txt", "c\nmore\n")
    code, out, err = undo(capfd, repo, entry_of(repo, "pa-1"))
    assert (code, err) == (0, ""), out
    assert f"git: reverted {older[:12]}" in out
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["a.txt"]
    assert git(repo, "show", "HEAD:a.txt") == BASE
    assert git(repo, "show", "HEAD:c.txt") == "c\nmore\n"
    assert (repo / "c.txt").read_text() == "c\nmore\n"


def test_later_commits_on_other_lines_are_kept(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    apply(capfd, repo, "a.txt", changed(BASE, 2))
    (repo / "a.txt").write_text(changed(BASE, 2, 15, mark="X"))
    commit_all(repo, "mine")
    code, out, err = undo(capfd, repo, entry_of(repo, "pa-1"))
    assert (code, err) == (0, ""), out
    assert (repo / "a.txt").read_text() == changed(BASE, 15)
    assert git(repo, "show", "HEAD:a.txt") == changed(BASE, 15)
    assert git(repo, "status", "--porcelain") == ""


def test_later_commits_on_the_same_lines_refuse_with_their_ids(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    apply(capfd, repo, "a.txt", changed(BASE, 2))
    (repo / "a.txt").write_text(changed(BASE, 2, mark="again"))
    later = commit_all(repo, "mine")
    code, out, err = undo(capfd, repo, entry_of(repo, "pa-1"))
    assert code == 1 and out == ""
    assert "later commits changed the same lines of a.txt" in err and later[:12] in err
    assert git(repo, "rev-parse", "HEAD").strip() == later
    assert (repo / "a.txt").read_text() == changed(BASE, 2, mark="again")


def test_an_apply_without_a_commit_is_undone_by_the_journal_alone(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, "")
    apply(capfd, repo, "a.txt", changed(BASE, 2))
    code, out, err = undo(capfd, repo)
    assert (code, err) == (0, "") and "git:" not in out
    assert (repo / "a.txt").read_text() == BASE and count(repo) == 1
