"""The dashboard's apply-marked with ``[git] on_apply = "commit"``: one commit (real git)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher
from tests.workspace.gitrepo import git, init_repo, isolate_git, write_config

from redline.review.events import EventStream
from redline.review.file_action import file_action
from redline.review.provenance import GitBatch, finish_batch
from redline.review.session import Decision, ReviewSession
from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.tui.messages import MarkedFinished
from redline.tui.session_calls import resolve_marked
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

SIZE = (140, 40)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return init_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})


def modify(root: Path, name: str, new: str) -> Preview:
    old = (root / name).read_text()
    return Preview([FileModify(name, sha256_bytes(old.encode()), old, new)])


def push_elsewhere(root: Path, name: str, new: str) -> str:
    other = WorkspaceQueue(root)
    try:
        record = other.push(
            ActionDraft(
                f"Edit {name}",
                Source.current("hook", "claude", "other-session"),
                source_tool_name="edit",
                preview=modify(root, name, new),
            )
        )
    finally:
        other.close()
    return record.id


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def trailers(root: Path, key: str) -> list[str]:
    out = git(root, "log", "-1", f"--format=%(trailers:key={key},valueonly)")
    return [line for line in out.splitlines() if line]


async def test_apply_marked_makes_one_commit_when_on_apply_is_commit(
    repo: Path, isolated_user_config: Path
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    first = push_elsewhere(repo, "a.txt", "A\n")
    second = push_elsewhere(repo, "b.txt", "B\n")
    queue = WorkspaceQueue(repo)
    session = FakeSession(cwd=repo)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stack.rows) == 2)
            await pilot.press("space", "j", "space")
            assert set(app.stack.marked) == {first, second}
            await pilot.press("y")
            await wait_until(pilot, lambda: app.stack.rows == [] and not app.inbox.busy)
            await wait_until(pilot, lambda: "git: committed" in app.activity.plain)
    finally:
        queue.close()
    assert (repo / "a.txt").read_text() == "A\n" and (repo / "b.txt").read_text() == "B\n"
    assert commit_count(repo) == 2  # the initial commit and one for both actions
    assert sorted(trailers(repo, "Redline-Action")) == sorted([first, second])
    shown = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(shown) == ["a.txt", "b.txt"]
    assert git(repo, "status", "--porcelain") == ""
    # Issue 48: the decisions log says they were decided in the dashboard.
    from redline.workspace.decisions import read

    logged = read(repo)[0]
    assert sorted((r.id, r.via) for r in logged) == sorted(
        [(first, "dashboard"), (second, "dashboard")]
    )
    assert trailers(repo, "Redline-Workspace") and len(trailers(repo, "Redline-Workspace")) == 1


async def test_apply_marked_commits_each_action_when_on_apply_is_stage(
    repo: Path, isolated_user_config: Path
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "stage"\n')
    push_elsewhere(repo, "a.txt", "A\n")
    push_elsewhere(repo, "b.txt", "B\n")
    queue = WorkspaceQueue(repo)
    session = FakeSession(cwd=repo)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    posted: list[object] = []
    try:
        ids = tuple(record.id for record in queue.list())
        await asyncio.to_thread(
            resolve_marked, session, "apply", ids, "ok", posted.append, lambda *_: None
        )
    finally:
        queue.close()
    (finished,) = posted
    assert isinstance(finished, MarkedFinished)
    assert all("git: staged" in outcome.text for _id, outcome in finished.results)
    assert commit_count(repo) == 1
    assert sorted(git(repo, "diff", "--cached", "--name-only").split()) == ["a.txt", "b.txt"]


async def test_a_sessions_own_applies_join_the_batch(
    repo: Path, isolated_user_config: Path
) -> None:
    """The dashboard's own-session path: ``Decision(batch=…)`` holds the commit back."""
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    store = PendingActionStore(clock=lambda: 0.0)
    session = ReviewSession(repo, store, EventStream("s1"))
    ids = []
    for name in ("a.txt", "c.txt"):
        action = session.propose(
            file_action(
                repo,
                modify(repo, name, name.upper()[0] + "\n"),
                label=f"Edit {name}",
                source_tool_name="edit",
                applied_text="Applied.",
                repreview=None,
            )
        )
        ids.append(action.id)
    batch = GitBatch(repo)
    for action_id in ids:
        outcome = await session.resolve(action_id, Decision("apply", "fine", batch=batch))
        assert not outcome.is_error, outcome.text
        assert "git:" not in outcome.text
    assert commit_count(repo) == 1  # nothing committed yet
    notes = finish_batch(batch)
    assert any("git: committed" in note for note in notes), notes
    assert commit_count(repo) == 2
    assert sorted(trailers(repo, "Redline-Action")) == sorted(ids)
    session.close()


async def test_undoing_one_marked_action_keeps_the_other_committed(
    repo: Path, isolated_user_config: Path
) -> None:
    from redline.cli import main
    from redline.workspace.journal import undo_history

    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    first = push_elsewhere(repo, "a.txt", "A\n")  # queued by a hook in another process
    second = push_elsewhere(repo, "b.txt", "B\n")
    queue = WorkspaceQueue(repo)
    session = FakeSession(cwd=repo)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stack.rows) == 2)
            await pilot.press("space", "j", "space", "y")
            await wait_until(pilot, lambda: "git: committed" in app.activity.plain)
    finally:
        queue.close()
    made = git(repo, "rev-parse", "HEAD").strip()
    entry = next(i.entry_id for i in undo_history(repo) if i.action_id == first)
    assert main(["undo", "-C", str(repo), entry]) == 0
    assert commit_count(repo) == 2 and git(repo, "rev-parse", "HEAD").strip() != made
    assert trailers(repo, "Redline-Action") == [second]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["b.txt"]
    assert (repo / "a.txt").read_text() == "a\n" and (repo / "b.txt").read_text() == "B\n"
    assert git(repo, "status", "--porcelain") == ""
