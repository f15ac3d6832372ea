"""Undoing one action of a ``--batch`` commit: the others stay committed (real git)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.review.provenance import GitBatch, finish_batch
from redline.review.queued import resolve_queued
from redline.workspace.queue import WorkspaceQueue

from .gitrepo import commit_all, git, init_repo, isolate_git, write_config
from .test_git_provenance import BASE, changed, pending, propose
from .test_git_undo import count, entry_of, undo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_user_config: Path) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    return init_repo(tmp_path / "repo", {"a.txt": BASE, "b.txt": "b\n", "c.txt": "c\n"})


def batch(capfd: pytest.CaptureFixture[str], root: Path, *ids: str) -> str:
    code, out, err = pending(capfd, root, "apply", *ids, "--batch")
    assert (code, err) == (0, ""), out
    return git(root, "rev-parse", "HEAD").strip()


def decisions(capfd: pytest.CaptureFixture[str], root: Path) -> list[dict[str, object]]:
    capfd.readouterr()
    assert main(["log", "-C", str(root), "--json"]) == 0
    found: list[dict[str, object]] = json.loads(capfd.readouterr()[0])["decisions"]
    return found


def actions_of(root: Path, rev: str = "HEAD") -> list[str]:
    trailers = git(root, "log", "-1", "--format=%(trailers:key=Redline-Action,valueonly)", rev)
    return trailers.split()


def test_undo_of_one_action_of_a_head_batch_rewrites_the_commit_without_it(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    first = propose(repo, "b.txt", "b\n1\n", label="One")
    second = propose(repo, "c.txt", "c\n2\n", label="Two")
    made = batch(capfd, repo, first, second)
    code, out, err = undo(capfd, repo, entry_of(repo, first))
    assert (code, err) == (0, ""), out
    now = git(repo, "rev-parse", "HEAD").strip()
    assert now != made and count(repo) == 2
    assert f"git: rewrote commit {made[:12]} without pa-1 as {now[:12]} (pa-2 stays" in out
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["c.txt"]
    assert actions_of(repo) == ["pa-2"]
    assert git(repo, "log", "-1", "--format=%s") == "Two\n"
    assert (repo / "b.txt").read_text() == "b\n" and (repo / "c.txt").read_text() == "c\n2\n"
    assert git(repo, "status", "--porcelain") == ""
    log = decisions(capfd, repo)
    assert [(d["id"], d["decision"]) for d in log] == [
        ("pa-1", "applied"),
        ("pa-2", "applied"),
        ("pa-1", "undone"),
    ]
    assert log[1]["commit"] == now  # where pa-2 lives now, on the branch
    # A later undo of the other action finds its new commit and removes it.
    code, out, err = undo(capfd, repo)
    assert (code, err) == (0, ""), out
    assert f"git: removed commit {now[:12]}" in out
    assert count(repo) == 1 and git(repo, "status", "--porcelain") == ""
    assert (repo / "c.txt").read_text() == "c\n"


@pytest.mark.parametrize("undone_first", ["earlier", "later"])
def test_a_file_two_actions_of_the_batch_changed_keeps_the_other_actions_hunks(
    repo: Path, capfd: pytest.CaptureFixture[str], undone_first: str
) -> None:
    first = propose(repo, "a.txt", changed(BASE, 2), label="Line 2")
    second = propose(repo, "a.txt", changed(BASE, 15), label="Line 15")
    code, out, err = pending(capfd, repo, "apply", first, second, "--batch")
    assert (code, err) == (0, ""), out
    assert "re-based as pa-3" in out
    assert git(repo, "show", "HEAD:a.txt") == changed(BASE, 2, 15)
    target, other, kept = (
        ("pa-1", "pa-3", changed(BASE, 15))
        if undone_first == "earlier"
        else ("pa-3", "pa-1", changed(BASE, 2))
    )
    code, out, err = undo(capfd, repo, entry_of(repo, target))
    assert (code, err) == (0, ""), out
    assert count(repo) == 2 and actions_of(repo) == [other]
    assert git(repo, "show", "HEAD:a.txt") == kept
    assert (repo / "a.txt").read_text() == kept
    assert git(repo, "status", "--porcelain") == ""
    code, out, err = undo(capfd, repo, entry_of(repo, other))
    assert (code, err) == (0, ""), out
    assert count(repo) == 1 and (repo / "a.txt").read_text() == BASE
    assert git(repo, "status", "--porcelain") == ""
    assert [d["decision"] for d in decisions(capfd, repo)] == [
        "applied",
        "applied",
        "undone",
        "undone",
    ]


def test_overlapping_changes_of_one_commit_refuse_naming_both(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # Marked applies: pa-2 was proposed over pa-1's applied text and changes its line.
    collected = GitBatch(repo)
    queue = WorkspaceQueue(repo)
    try:
        first = propose(repo, "a.txt", changed(BASE, 2))
        assert not asyncio.run(resolve_queued(queue, first, "apply", "", batch=collected)).is_error
        second = propose(repo, "a.txt", changed(BASE, 2, mark="Y"))
        assert not asyncio.run(resolve_queued(queue, second, "apply", "", batch=collected)).is_error
    finally:
        queue.close()
    finish_batch(collected)
    made = git(repo, "rev-parse", "HEAD").strip()
    assert actions_of(repo) == ["pa-1", "pa-2"]
    code, out, err = undo(capfd, repo, entry_of(repo, first))
    assert code == 1 and out == ""
    assert "pa-1 and pa-2 changed the same lines of a.txt in commit" in err
    assert "Nothing was changed." in err
    assert git(repo, "rev-parse", "HEAD").strip() == made
    assert (repo / "a.txt").read_text() == changed(BASE, 2, mark="Y")
    assert git(repo, "status", "--porcelain") == ""


def test_a_batch_commit_that_is_not_head_gets_a_revert_of_that_action_only(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    first = propose(repo, "a.txt", changed(BASE, 2), label="Line 2")
    second = propose(repo, "a.txt", changed(BASE, 15), label="Line 15")
    third = propose(repo, "b.txt", "b\n3\n", label="B")
    code, out, err = pending(capfd, repo, "apply", first, second, third, "--batch")
    assert (code, err) == (0, ""), out
    made = git(repo, "rev-parse", "HEAD").strip()
    (repo / "c.txt").write_text("c\nmine\n")
    mine = commit_all(repo, "mine")
    code, out, err = undo(capfd, repo, entry_of(repo, "pa-1"))
    assert (code, err) == (0, ""), out
    assert f"git: reverted {made[:12]} in commit " in out and "(pa-1's changes)" in out
    assert count(repo) == 4
    assert git(repo, "rev-parse", "HEAD~1").strip() == mine
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["a.txt"]
    assert "the changes of pa-1 in commit" in git(repo, "log", "-1", "--format=%b")
    assert git(repo, "show", "HEAD:a.txt") == changed(BASE, 15)
    assert git(repo, "show", "HEAD:b.txt") == "b\n3\n"
    assert (repo / "a.txt").read_text() == changed(BASE, 15)
    assert git(repo, "status", "--porcelain") == ""
    log = decisions(capfd, repo)
    # pa-2 was re-based as pa-4 over pa-1; pa-3 is b.txt's: both still live in the commit.
    assert sorted((d["id"], d["decision"], d["commit"]) for d in log[1:3]) == [
        ("pa-3", "applied", made),
        ("pa-4", "applied", made),
    ]
    assert log[-1]["decision"] == "undone" and log[-1]["id"] == "pa-1"
    # The undone apply is no longer offered for undo; the newest is b.txt's (pa-3).
    code, out, err = undo(capfd, repo)
    assert (code, err) == (0, ""), out
    assert (repo / "b.txt").read_text() == "b\n" and git(repo, "show", "HEAD:b.txt") == "b\n"
    assert (repo / "a.txt").read_text() == changed(BASE, 15)


def test_a_pushed_head_batch_commit_is_reverted_not_rewritten(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    first = propose(repo, "b.txt", "b\n1\n")
    second = propose(repo, "c.txt", "c\n2\n")
    made = batch(capfd, repo, first, second)
    git(repo, "update-ref", "refs/remotes/origin/main", made)
    code, out, err = undo(capfd, repo, entry_of(repo, first))
    assert (code, err) == (0, ""), out
    assert count(repo) == 3 and git(repo, "rev-parse", "HEAD~1").strip() == made
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["b.txt"]
    assert git(repo, "show", "HEAD:c.txt") == "c\n2\n"
    assert git(repo, "status", "--porcelain") == ""
