"""workspace/git.py's index and commit plumbing: exact results with few git processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.workspace import git as gitmod
from redline.workspace.git import IndexChange, commit_changes, repo_of, update_index

from .gitrepo import git, init_repo, isolate_git


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return init_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The git subcommands run (each one process)."""
    seen: list[str] = []
    real = gitmod.run_git

    def counting(root: Path, *args: str, **kwargs: object) -> object:
        seen.append(args[0])
        return real(root, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitmod, "run_git", counting)
    return seen


def modify(path: str, before: str, after: str) -> IndexChange:
    return IndexChange("modify", path, before.encode(), after.encode())


def test_one_commit_takes_ten_git_processes_whatever_the_file_count(
    repo: Path, calls: list[str]
) -> None:
    found = repo_of(repo)
    assert found is not None
    calls.clear()
    one = commit_changes(found, [modify("a.txt", "a\n", "A\n")], "one\n")
    assert one.commit is not None and one.staged
    single = list(calls)
    assert len(single) == 10, single
    assert single.count("hash-object") == 1 and "diff-index" not in single
    calls.clear()
    three = commit_changes(
        found,
        [
            modify("b.txt", "b\n", "B\n"),
            modify("c.txt", "c\n", "C\n"),
            modify("a.txt", "A\n", "x\n"),
        ],
        "three\n",
    )
    assert three.commit is not None
    assert len(calls) == 10, calls
    assert git(repo, "show", "HEAD:b.txt") == "B\n" and git(repo, "show", "HEAD:a.txt") == "x\n"
    # The person's index agrees with the new HEAD for those paths (nothing left staged).
    assert git(repo, "diff", "--cached", "--name-only") == ""


def test_two_changes_of_one_file_in_a_batch_apply_in_order(repo: Path) -> None:
    found = repo_of(repo)
    assert found is not None
    outcome = commit_changes(
        found, [modify("a.txt", "a\n", "a1\n"), modify("a.txt", "a1\n", "a2\n")], "both\n"
    )
    assert outcome.commit is not None and not outcome.conflicts
    assert git(repo, "show", "HEAD:a.txt") == "a2\n"
    assert git(repo, "show", ":a.txt") == "a2\n"


def test_a_change_already_committed_is_empty_without_a_commit(repo: Path) -> None:
    found = repo_of(repo)
    assert found is not None
    outcome = commit_changes(found, [modify("a.txt", "x\n", "a\n")], "nothing\n")
    assert outcome.empty and outcome.commit is None
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"


def test_staging_merges_into_the_persons_staged_text(repo: Path) -> None:
    found = repo_of(repo)
    assert found is not None
    (repo / "a.txt").write_text("top\na\n")
    git(repo, "add", "a.txt")
    conflicts = update_index(found, [modify("a.txt", "a\n", "a\nbottom\n")])
    assert conflicts == []
    assert git(repo, "show", ":a.txt") == "top\na\nbottom\n"
    # A rename and a delete in one call.
    conflicts = update_index(
        found,
        [IndexChange("rename", "d.txt", old_path="b.txt"), IndexChange("delete", "c.txt")],
    )
    assert conflicts == []
    staged = git(repo, "diff", "--cached", "--name-status", "-M").split("\n")
    assert any(line.startswith("R") and "d.txt" in line for line in staged)
    assert any(line == "D\tc.txt" for line in staged)
