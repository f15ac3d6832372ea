"""``redline pending import SOURCE --watch``: a branch or worktree followed (real git)."""

from __future__ import annotations

import functools
import os
import queue as queues
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from redline.cli import main
from redline.commands.pending_import import read_source
from redline.workspace.git_watch import ImportWatch
from redline.workspace.preview import FileCreate, FileModify
from redline.workspace.queue import QueueRecord, WorkspaceQueue

from .gitrepo import git, init_repo, isolate_git
from .test_git_provenance import BASE, changed, pending

TIMEOUT = 60.0


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return init_repo(tmp_path / "repo", {"a.txt": BASE, "b.txt": "b\n"})


def agent_worktree(repo: Path, branch: str = "agent") -> Path:
    """A second worktree on a new branch, where the "agent" works (the local tree stays)."""
    folder = repo.parent / "agent-wt"
    git(repo, "worktree", "add", "-q", "-b", branch, str(folder))
    return folder


def agent_commit(folder: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (folder / name).write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", message)


def records(root: Path) -> list[QueueRecord]:
    q = WorkspaceQueue(root)
    try:
        return list(q.list())
    finally:
        q.close()


def by_file(root: Path) -> dict[str, QueueRecord]:
    return {r.files[-1]: r for r in records(root)}


def new_text(root: Path, record: QueueRecord) -> str:
    q = WorkspaceQueue(root)
    try:
        preview = q.preview(record)
    finally:
        q.close()
    assert preview is not None
    (change,) = preview.changes
    assert isinstance(change, (FileModify, FileCreate))
    return change.new_text


class Running:
    """An :class:`ImportWatch` running on a thread until the test ends."""

    def __init__(self, root: Path, source: str, kind: str, name: str) -> None:
        self.lines: list[tuple[str, bool]] = []
        self.queue = WorkspaceQueue(root)
        self.watch = ImportWatch(
            root,
            self.queue,
            kind,
            name,
            functools.partial(read_source, root, source, kind),
            lambda text, err: self.lines.append((text, err)),
            ref=source if kind == "branch" else "",
            folder=Path(source) if kind == "worktree" else None,
            interval=0.02,
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.watch.run, args=(self.stop,), daemon=True)

    def start(self) -> None:
        report = self.watch.round()
        self.lines.extend((line, False) for line in report.out)
        self.thread.start()
        assert self.watch.ready.wait(TIMEOUT)

    def until(self, condition: Callable[[], bool]) -> None:
        assert self.watch.wait_for(condition, TIMEOUT), self.lines

    def close(self) -> None:
        self.stop.set()
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive()
        self.queue.close()


@pytest.fixture
def running() -> Iterator[Callable[[Path, str, str, str], Running]]:
    made: list[Running] = []

    def make(root: Path, source: str, kind: str, name: str) -> Running:
        watcher = Running(root, source, kind, name)
        made.append(watcher)
        watcher.start()
        return watcher

    yield make
    for watcher in made:
        watcher.close()


def test_watch_follows_new_commits_on_a_branch(
    repo: Path, running: Callable[..., Running], capfd: pytest.CaptureFixture[str]
) -> None:
    wt = agent_worktree(repo)
    agent_commit(wt, {"a.txt": changed(BASE, 3)}, "first")
    watch = running(repo, "agent", "branch", "agent")
    (first,) = records(repo)
    assert first.source.canonical == "import:agent" and first.files == ["a.txt"]

    # A new commit: the pending a.txt action is replaced, c.txt is queued.
    agent_commit(wt, {"a.txt": changed(BASE, 3, 5), "c.txt": "new\n"}, "second")
    watch.until(lambda: set(by_file(repo)) == {"a.txt", "c.txt"} and first.id not in ids(repo))
    now = by_file(repo)
    assert new_text(repo, now["a.txt"]) == changed(BASE, 3, 5)
    assert new_text(repo, now["c.txt"]) == "new\n"
    assert all(r.source.canonical == "import:agent" for r in now.values())
    resolution = watch.queue.resolution(first.id)
    assert resolution is not None and resolution.decision == "replaced"
    assert resolution.replaced_by == now["a.txt"].id and resolution.resolved_by == "import"
    assert any("replaces " + first.id in text for text, _err in watch.lines)

    # The reviewer applies a.txt; a commit that only touches b.txt leaves it resolved.
    code, _out, err = pending(capfd, repo, "apply", now["a.txt"].id)
    assert code == 0, err
    agent_commit(wt, {"b.txt": "b by agent\n"}, "third")
    watch.until(lambda: "b.txt" in by_file(repo))
    assert set(by_file(repo)) == {"b.txt", "c.txt"}
    assert (repo / "a.txt").read_text() == changed(BASE, 3, 5)

    # A later change of a.txt by the agent is a new action, merged onto the applied text.
    agent_commit(wt, {"a.txt": changed(BASE, 3, 5, 7)}, "fourth")
    watch.until(lambda: "a.txt" in by_file(repo))
    assert new_text(repo, by_file(repo)["a.txt"]) == changed(BASE, 3, 5, 7)


def ids(root: Path) -> set[str]:
    return {r.id for r in records(root)}


def test_watch_follows_edits_in_a_worktree(
    repo: Path, running: Callable[..., Running], capfd: pytest.CaptureFixture[str]
) -> None:
    wt = agent_worktree(repo)
    (wt / "a.txt").write_text(changed(BASE, 2))
    watch = running(repo, str(wt), "worktree", "agent-wt")
    (first,) = records(repo)
    assert first.source.canonical == "import:agent-wt"

    (wt / "a.txt").write_text(changed(BASE, 2, 9))
    (wt / "notes.md").write_text("# notes\n")
    watch.until(
        lambda: (
            set(by_file(repo)) == {"a.txt", "notes.md"}
            and new_text(repo, by_file(repo)["a.txt"]) == changed(BASE, 2, 9)
        )
    )
    assert first.id not in ids(repo)

    # Discarded stays discarded while the agent leaves notes.md alone.
    code, _out, err = pending(capfd, repo, "discard", by_file(repo)["notes.md"].id)
    assert code == 0, err
    (wt / "b.txt").write_text("b edited\n")
    watch.until(lambda: "b.txt" in by_file(repo))
    assert set(by_file(repo)) == {"a.txt", "b.txt"}

    # The agent takes back its a.txt change: the pending action is marked stale, not lost.
    (wt / "a.txt").write_text(BASE)
    watch.until(lambda: by_file(repo)["a.txt"].stale)
    stale = by_file(repo)["a.txt"]
    assert "no longer changes a.txt" in stale.stale_reason

    # And changes it again: a fresh action takes the stale one's place.
    (wt / "a.txt").write_text(changed(BASE, 2, 9))
    watch.until(lambda: by_file(repo)["a.txt"].id != stale.id)
    fresh = by_file(repo)["a.txt"]
    assert not fresh.stale and new_text(repo, fresh) == changed(BASE, 2, 9)


def test_an_edited_action_is_marked_stale_not_overwritten(
    repo: Path,
    running: Callable[..., Running],
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wt = agent_worktree(repo)
    agent_commit(wt, {"a.txt": changed(BASE, 3)}, "first")
    watch = running(repo, "agent", "branch", "agent")
    (first,) = records(repo)
    edited = changed(BASE, 3, mark="Reviewed")
    mine_text = repo.parent / "reviewed.txt"
    mine_text.write_text(edited)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"cp {mine_text}")  # the "editor" writes the reviewer's text
    code, _out, err = pending(capfd, repo, "edit", first.id)
    assert code == 0, err
    (mine,) = records(repo)
    assert mine.edited

    agent_commit(wt, {"a.txt": changed(BASE, 3, 4)}, "second")
    watch.until(lambda: records(repo)[0].stale)
    (still,) = records(repo)
    assert still.id == mine.id and new_text(repo, still) == edited
    assert "changed a.txt again after it was edited" in still.stale_reason


def test_watch_refuses_a_patch(repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    patch = repo.parent / "fix.patch"
    patch.write_text("not used\n")
    code = main(["pending", "-C", str(repo), "import", str(patch), "--watch"])
    _out, err = capfd.readouterr()
    assert code == 2
    assert "--watch follows a branch or a worktree; a patch does not change" in err


def test_watch_of_an_unknown_ref_is_exit_2(repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["pending", "-C", str(repo), "import", "no-such-branch", "--watch"])
    _out, err = capfd.readouterr()
    assert code == 2 and "no-such-branch" in err and "Traceback" not in err


def test_ctrl_c_ends_the_watch_cleanly(repo: Path) -> None:
    wt = agent_worktree(repo)
    agent_commit(wt, {"a.txt": changed(BASE, 3)}, "first")
    child = subprocess.Popen(
        [sys.executable, "-m", "redline", "pending", "-C", str(repo), "import", "agent", "--watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: queues.Queue[str] = queues.Queue()
    reader = threading.Thread(
        target=lambda: [lines.put(line) for line in child.stdout or ()], daemon=True
    )
    reader.start()
    try:
        seen: list[str] = []

        def until(text: str) -> None:
            while not any(text in line for line in seen):
                seen.append(lines.get(timeout=TIMEOUT))

        until("Watching branch agent")
        agent_commit(wt, {"a.txt": changed(BASE, 3, 5)}, "second")
        until("updated from agent")
        child.send_signal(signal.SIGINT)
        code = child.wait(TIMEOUT)
        reader.join(TIMEOUT)
        while not lines.empty():
            seen.append(lines.get_nowait())
        err = child.stderr.read() if child.stderr else ""
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert code == 0, err
    assert "Traceback" not in err
    assert any("Stopped watching branch agent." in line for line in seen)
    (record,) = records(repo)
    assert new_text(repo, record) == changed(BASE, 3, 5)


def test_a_worktree_that_disappears_ends_the_watch(
    repo: Path, running: Callable[..., Running]
) -> None:
    import shutil

    wt = agent_worktree(repo)
    (wt / "a.txt").write_text(changed(BASE, 2))
    watch = running(repo, str(wt), "worktree", "agent-wt")
    shutil.rmtree(wt)
    watch.thread.join(TIMEOUT)
    assert not watch.thread.is_alive()
    assert any("is gone; stopped watching" in text and err for text, err in watch.lines)
    assert "is gone" in watch.watch.ended
    assert len(records(repo)) == 1  # what was queued stays queued
