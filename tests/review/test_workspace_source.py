"""One workspace as a review source, over its queue with no session open (the way issue
45's all-workspaces inbox reaches a workspace): rows from the index, the Preview read only
when viewed, decisions through the queue's claim, what an owner action allows."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from redline.review.events import EventStream
from redline.review.file_action import file_action
from redline.review.resolve import EditOutcome, ResolveOutcome
from redline.review.result import ToolResult
from redline.review.session import Capabilities, Decision, ReviewSession
from redline.review.source import ListedAction, ReviewSource, WorkspaceRef
from redline.review.store import PendingAction, PendingActionStore
from redline.review.workspace_source import WorkspaceSource
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

BASE = "".join(f"line {i}\n" for i in range(1, 37))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text(BASE)
    return root


def push(root: Path, new: str, *, applied_by: str | None = None, kind: str = "exec") -> str:
    old = (root / "a.txt").read_text()
    preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, new)])
    record = WorkspaceQueue(root).push(
        ActionDraft(
            label="Edit a.txt",
            source=Source.current(kind, "", "s1"),
            source_tool_name="edit",
            preview=preview,
            applied_by=applied_by,
        )
    )
    return record.id


def test_listed_from_the_index_and_viewed_on_demand(ws: Path) -> None:
    push(ws, BASE.replace("line 2\n", "two\n"))
    ref = WorkspaceRef("g1a2b3c4d5e6", str(ws))
    source: ReviewSource = WorkspaceSource(WorkspaceQueue(ws), workspace=ref, qualified=True)
    (row,) = source.listed()
    assert row.id == "pa-1@g1a2b3c4d5e6" and row.workspace == ref and not row.stale
    assert row.facts == (("a.txt",), 1, 1) and not source.spans_workspaces
    view = source.view(row.id)
    assert view.preview is not None and view.hunks == ("a.txt#1",) and not view.error
    (ws / "a.txt").write_text(BASE + "more\n")
    (stale,) = source.listed()
    assert stale.stale and "a.txt" in stale.stale_reason


def test_a_decision_goes_through_the_queue_and_lands_in_the_workspace(ws: Path) -> None:
    push(ws, BASE.replace("line 2\n", "two\n").replace("line 30\n", "thirty\n"))
    source = WorkspaceSource(WorkspaceQueue(ws))
    outcome = source.decide("pa-1", Decision("apply", "ok", only=("a.txt#1",)))
    assert outcome.ok, outcome.text
    assert (ws / "a.txt").read_text() == BASE.replace("line 2\n", "two\n")
    (rest,) = source.listed()  # the other hunk waits under a new id
    assert rest.id != "pa-1"
    assert source.gone_text("pa-1").startswith(f"pa-1 was replaced by {rest.id}")
    undone = source.undo()
    assert undone.ok, undone.text
    assert (ws / "a.txt").read_text() == BASE


def test_an_owner_action_allows_only_whole_decisions_with_the_reason(ws: Path) -> None:
    # Queued by another process (a hook-like owner that has ended).
    code = (
        "import sys; from pathlib import Path;"
        "from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue;"
        "WorkspaceQueue(Path(sys.argv[1])).push(ActionDraft(label='Run npm test',"
        " source=Source.current('hook', 'claude', 's2'), details={'command': 'npm test'}))"
    )
    subprocess.run([sys.executable, "-c", code, str(ws)], check=True)
    source = WorkspaceSource(WorkspaceQueue(ws))
    (row,) = source.listed()
    assert row.kind == "permission" and row.applied_by == "owner" and row.stale  # orphaned
    allows = source.allows(row)
    assert allows.whole.available and not allows.parts.available
    assert "no file preview" in allows.refusal("parts")
    assert "applied by the process that queued it" in allows.refusal("edit")


def test_watch_hands_a_fresh_listing_when_another_process_queues(ws: Path) -> None:
    source = WorkspaceSource(WorkspaceQueue(ws))
    stop = threading.Event()
    seen: list[Sequence[ListedAction]] = []
    arrived = threading.Event()
    first = threading.Event()

    def rows(listed: Sequence[ListedAction]) -> None:
        seen.append(listed)
        first.set()
        if listed:
            arrived.set()

    watcher = threading.Thread(target=source.watch, args=(stop, rows, lambda *_: None))
    watcher.start()
    try:
        assert first.wait(30), "the first listing never came"
        push(ws, "changed\n")
        assert arrived.wait(30), "the new action was never listed"
    finally:
        stop.set()
        watcher.join(30)
    assert seen[0] == [] and [r.id for r in seen[-1]] == ["pa-1"]


# -- over a session: the workspace dashboard's listing ---------------------------------
class SyncSession:
    """A ``ReviewSession``'s calls made blocking, as the dashboard's session offers them
    (``SessionCalls``): every decision ends in ``ReviewSession.decide``."""

    def __init__(self, review: ReviewSession) -> None:
        self.review = review
        self.decided: list[str] = []

    @property
    def store(self) -> PendingActionStore:
        return self.review.store

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities()

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome:
        self.decided.append(action_id)
        return asyncio.run(self.review.decide(action_id, decision))

    def edit(self, action_id: str, path: str, text: str) -> EditOutcome:
        return asyncio.run(self.review.edit(action_id, path, text))

    def repreview(self, action_id: str) -> ToolResult:
        return asyncio.run(self.review.repreview(action_id))

    def undo(self) -> ToolResult:
        return self.review.undo()


def own_edit(root: Path, new: str, name: str = "b.txt") -> PendingAction:
    old = (root / name).read_bytes()
    preview = Preview([FileModify(name, sha256_bytes(old), old.decode(), new)])
    return file_action(
        root,
        preview,
        label=f"Edit {name}",
        source_tool_name="edit",
        applied_text="",
        repreview=None,
    )


@pytest.fixture
def queued_review(ws: Path) -> Iterator[tuple[ReviewSession, WorkspaceQueue]]:
    (ws / "b.txt").write_text("b = 1\n")
    queue = WorkspaceQueue(ws)
    store = PendingActionStore(queue=queue, source=Source.current("agent", "dash", "d1"))
    review = ReviewSession(ws, store, EventStream("d1"))
    yield review, queue
    review.close()
    queue.close()


def test_over_a_session_its_own_actions_and_every_other_processs_are_one_listing(
    ws: Path, queued_review: tuple[ReviewSession, WorkspaceQueue]
) -> None:
    review, queue = queued_review
    other = push(ws, BASE.replace("line 2\n", "two\n"))  # another process (exec)
    mine = review.propose(own_edit(ws, "b = 2\n"))
    session = SyncSession(review)
    source = WorkspaceSource(queue, session=session)
    rows = source.listed()
    assert [row.id for row in rows] == [mine.id, other]
    own, theirs = rows
    assert own.source == "agent:dash" and own.facts == (("b.txt",), 1, 1)
    assert theirs.source == "exec" and theirs.facts == (("a.txt",), 1, 1)
    assert source.own_action(mine.id) is mine and source.own_action(other) is None
    assert source.record(other) is not None and source.record(mine.id) is None
    # The session's own row says the session's staleness (its own checks), not the file's.
    review.store.mark_stale(mine.id, "b.txt changed")
    (own_again, _theirs) = source.listed()
    assert own_again.stale and own_again.stale_reason == "b.txt changed"
    # Each decision goes through the session's decide (ReviewSession.decide).
    outcome = source.decide(other, Decision("discard", "not now"))
    assert outcome.ok and session.decided == [other]
    assert [row.id for row in source.listed()] == [mine.id]
    assert "discarded" in source.gone_text(other)


def test_a_session_without_a_queue_lists_and_decides_its_own_actions(ws: Path) -> None:
    (ws / "b.txt").write_text("b = 1\n")
    store = PendingActionStore()
    review = ReviewSession(ws, store, EventStream("solo"))
    try:
        mine = review.propose(own_edit(ws, "b = 2\n"))
        session = SyncSession(review)
        source = WorkspaceSource(None, session=session)
        (row,) = source.listed()
        assert row.id == mine.id and row.applied_by == "preview" and row.has_preview
        view = source.view(row.id)
        assert view.preview is mine.preview and view.hunks == ("b.txt#1",)
        assert source.allows(row).parts.available
        assert source.decide(row.id, Decision("apply", "ok")).ok
        assert (ws / "b.txt").read_text() == "b = 2\n"
        assert source.listed() == []
        assert "no longer pending" in source.gone_text(row.id)
    finally:
        review.close()
    with pytest.raises(ValueError, match="needs a queue or a session"):
        WorkspaceSource(None)


def test_listing_again_reuses_the_rows_of_unchanged_records(ws: Path) -> None:
    for index in range(3):
        (ws / f"f{index}.txt").write_text(f"{index}\n")
        old = (ws / f"f{index}.txt").read_text()
        preview = Preview([FileModify(f"f{index}.txt", sha256_bytes(old.encode()), old, "x\n")])
        WorkspaceQueue(ws).push(
            ActionDraft(f"Edit f{index}", Source.current("exec"), "edit", preview=preview)
        )
    source = WorkspaceSource(WorkspaceQueue(ws))
    first = source.listed()
    again = source.listed()
    # Nothing changed: the same row objects (the stack keeps their display copies).
    assert all(a is b for a, b in zip(first, again, strict=True))
    (ws / "f1.txt").write_text("changed on disk\n")
    after = source.listed()
    assert {row.id: row.stale for row in after} == {"pa-3": False, "pa-2": True, "pa-1": False}
    assert after[0] is first[0] and after[2] is first[2] and after[1] is not first[1]
