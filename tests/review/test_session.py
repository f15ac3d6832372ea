"""ReviewSession over a real workspace: LIFO, ids, hunks, edits, staleness, undo, following."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from redline.review.events import Event, EventStream, PendingResolved, ResolutionFailed, Undone
from redline.review.file_action import file_action
from redline.review.follower import QueueFollower
from redline.review.loop_thread import LoopThread
from redline.review.resolve import NOTHING_PENDING
from redline.review.session import Decision, ReviewSession
from redline.review.store import PendingAction, PendingActionStore
from redline.workspace import transaction
from redline.workspace.journal import undo_list
from redline.workspace.preview import FileCreate, FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue
from redline.workspace.queue import Resolution as QueueResolution

# Lines 2, 14 and 26 are far enough apart to be hunks (@@ blocks) of their own.
BASE = "".join(f"line {i}\n" for i in range(1, 37))
HANG_GUARD = 30.0  # seconds; only ever reached when something is broken


def changed(*lines: int, mark: str = "X") -> str:
    out = BASE.splitlines(keepends=True)
    for number in lines:
        out[number - 1] = f"{mark} {number}\n"
    return "".join(out)


def edit(root: Path, new: str, name: str = "a.txt") -> PendingAction:
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


def redline(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "redline", "pending", "-C", str(ws), *args]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text(BASE)
    (root / "b.txt").write_text("bee\n")
    return root


@pytest.fixture(autouse=True)
def no_step_hook() -> Iterator[None]:
    yield
    transaction._step_hook = None


@pytest.fixture
def events() -> list[Event]:
    return []


@pytest.fixture
def review(ws: Path, events: list[Event]) -> Iterator[ReviewSession]:
    store = PendingActionStore(queue=WorkspaceQueue(ws), source=Source.current("sdk", "", "s1"))
    stream = EventStream("s1")
    stream.subscribe(events.append)
    session = ReviewSession(ws, store, stream)
    yield session
    session.close()


def queued_ids(ws: Path) -> list[str]:
    return [record.id for record in WorkspaceQueue(ws).list()]


async def test_propose_is_lifo_and_resolve_without_id_applies_the_top(
    ws: Path, review: ReviewSession, events: list[Event]
) -> None:
    first = review.propose(edit(ws, "ay\n"))
    second = review.propose(edit(ws, "bee\nbuzz\n", name="b.txt"))
    assert (first.id, second.id) == ("pa-1", "pa-2")
    assert [a.id for a in review.store.snapshot()] == ["pa-2", "pa-1"]
    assert queued_ids(ws) == ["pa-2", "pa-1"]

    outcome = await review.resolve(None, Decision("apply", "newest first"))
    assert outcome.kind == "applied" and outcome.action is not None
    assert outcome.action.action_id == "pa-2" and outcome.text == "Applied: Edit b.txt."
    assert (ws / "b.txt").read_text() == "bee\nbuzz\n"
    assert (ws / "a.txt").read_text() == BASE
    assert [a.id for a in review.store.snapshot()] == ["pa-1"]

    outcome = await review.resolve(None, Decision("apply", "then this"))
    assert outcome.kind == "applied" and (ws / "a.txt").read_text() == "ay\n"
    resolved = [e for e in events if isinstance(e, PendingResolved)]
    assert [(e.action_id, e.action, e.reason) for e in resolved] == [
        ("pa-2", "apply", "newest first"),
        ("pa-1", "apply", "then this"),
    ]

    empty = await review.resolve(None, Decision("apply", "more?"))
    assert empty.kind == "invalid" and empty.text == NOTHING_PENDING
    assert len([e for e in events if isinstance(e, PendingResolved)]) == 2
    assert queued_ids(ws) == []


async def test_a_person_resolves_a_lower_action_by_id_and_a_gone_id_changes_nothing(
    ws: Path, review: ReviewSession, events: list[Event]
) -> None:
    review.propose(edit(ws, "ay\n"))
    review.propose(edit(ws, "bee\nbuzz\n", name="b.txt"))
    outcome = await review.resolve("pa-1", Decision("apply", "the older one"))
    assert outcome.kind == "applied" and outcome.action is not None
    assert outcome.action.action_id == "pa-1"
    assert (ws / "a.txt").read_text() == "ay\n" and (ws / "b.txt").read_text() == "bee\n"
    assert [a.id for a in review.store.snapshot()] == ["pa-2"]
    count = len(events)

    again = await review.resolve("pa-1", Decision("discard", "twice"))
    assert again.kind == "top_changed" and again.is_error
    assert again.text == (
        "pa-1 is no longer pending: it was resolved elsewhere or never existed. "
        "Nothing was applied or discarded."
    )
    assert (ws / "a.txt").read_text() == "ay\n" and (ws / "b.txt").read_text() == "bee\n"
    assert [a.id for a in review.store.snapshot()] == ["pa-2"] and queued_ids(ws) == ["pa-2"]
    assert len(events) == count  # nothing was resolved, so nothing is logged


async def test_discard_with_a_reason(ws: Path, review: ReviewSession, events: list[Event]) -> None:
    review.propose(edit(ws, changed(3)))
    outcome = await review.resolve("pa-1", Decision("discard", "wrong line"))
    assert outcome.kind == "discarded"
    assert outcome.text == "Discarded: Edit a.txt. Reason: wrong line"
    assert (ws / "a.txt").read_text() == BASE and not review.store.has_pending
    [event] = [e for e in events if isinstance(e, PendingResolved)]
    assert (event.action_id, event.action, event.reason, event.by, event.label) == (
        "pa-1",
        "discard",
        "wrong line",
        "human",
        "Edit a.txt",
    )
    logged = WorkspaceQueue(ws).resolution("pa-1")
    assert logged is not None and (logged.decision, logged.reason) == ("discard", "wrong line")
    assert undo_list(ws) == []  # nothing was written, so nothing can be undone


async def test_an_edited_apply_writes_the_persons_text(ws: Path, review: ReviewSession) -> None:
    (ws / "a.py").write_text("x = 1\n")
    action = review.propose(edit(ws, "x = 2\n", name="a.py"))
    edited = await review.edit(action.id, "a.py", "x = 3\n")
    assert edited.kind == "edited" and edited.new_action_id == "pa-2"
    assert [a.id for a in review.store.snapshot()] == ["pa-2"]
    top = review.store.peek()
    assert top is not None and top.edited and top.repreview is None

    outcome = await review.resolve(None, Decision("apply", "fine"))
    assert outcome.kind == "applied"
    assert outcome.text.startswith(
        "Applied with your proposal edited by the reviewer: Edit a.py. Reason: fine\n"
    )
    assert "-x = 2" in outcome.text and "+x = 3" in outcome.text
    assert (ws / "a.py").read_text() == "x = 3\n"


async def test_applying_one_hunk_keeps_the_rest_pending_under_a_new_id(
    ws: Path, review: ReviewSession
) -> None:
    action = review.propose(edit(ws, changed(2, 14, 26)))
    outcome = await review.resolve(action.id, Decision("apply", "just one", only=("a.txt#1",)))
    assert outcome.kind == "applied" and outcome.remaining_id == "pa-2"
    assert outcome.text.splitlines()[0] == "Applied 1 of 3 hunks: Edit a.txt. Reason: just one"
    assert "Still pending as pa-2" in outcome.text
    assert (ws / "a.txt").read_text() == changed(2)
    rest = review.store.peek()
    assert rest is not None and rest.id == "pa-2"
    assert rest.label == "Edit a.txt (remaining: 2 of 3 hunks)"
    assert queued_ids(ws) == ["pa-2"]

    final = await review.resolve(None, Decision("apply", "the rest"))
    assert final.kind == "applied" and (ws / "a.txt").read_text() == changed(2, 14, 26)


async def test_a_stale_action_is_refused_and_nothing_is_written(
    ws: Path, review: ReviewSession, events: list[Event]
) -> None:
    action = review.propose(edit(ws, changed(4)))
    (ws / "a.txt").write_text("someone else\n")
    assert review.check_staleness() == [action.id]
    action = review.store.get(action.id)  # the stale copy the store holds now
    assert action is not None and action.stale and "a.txt" in action.stale_reason
    record = WorkspaceQueue(ws).get(action.id)
    assert record is not None and record.stale

    outcome = await review.resolve(None, Decision("apply", "anyway"))
    assert outcome.kind == "failed"
    assert outcome.text.startswith("Refused to apply Edit a.txt: it is stale (")
    assert outcome.text.endswith("Nothing was written; re-preview it or discard it.")
    assert (ws / "a.txt").read_text() == "someone else\n" and undo_list(ws) == []
    assert review.store.peek() is action and queued_ids(ws) == [action.id]
    [failed] = [e for e in events if isinstance(e, ResolutionFailed)]
    assert failed.action_id == action.id and failed.message == outcome.text


async def test_undo_after_an_apply_restores_the_file(
    ws: Path, review: ReviewSession, events: list[Event]
) -> None:
    undone: list[tuple[str, str, list[str], str]] = []
    review.on_undone = lambda *args: undone.append(args)
    review.propose(edit(ws, changed(7)))
    outcome = await review.resolve(None, Decision("apply", "ok"))
    assert outcome.kind == "applied" and (ws / "a.txt").read_text() == changed(7)
    [entry] = undo_list(ws)
    assert entry.action_id == "pa-1"

    result = review.undo()
    assert not result.is_error and result.text == "Undid Edit a.txt (a.txt)."
    assert (ws / "a.txt").read_text() == BASE
    assert undone == [(entry.entry_id, "Edit a.txt", ["a.txt"], "Undid Edit a.txt (a.txt).")]
    [event] = [e for e in events if isinstance(e, Undone)]
    assert (event.entry_id, event.files) == (entry.entry_id, ["a.txt"])
    assert event.action_id == "pa-1"  # the undo names the action it came from
    assert event.to_dict()["action_id"] == "pa-1"


def test_an_action_resolved_by_another_process_leaves_the_followed_session(
    ws: Path, review: ReviewSession, events: list[Event]
) -> None:
    remote: list[tuple[str, QueueResolution | None]] = []
    heard = threading.Event()
    review.on_remote = lambda action, resolution: remote.append((action.id, resolution))
    review.events.subscribe(lambda e: heard.set() if isinstance(e, PendingResolved) else None)
    loop = LoopThread("test-review")
    try:
        review.follow(loop.submit)
        review.propose(edit(ws, "bee\nbuzz\n", name="b.txt"))  # pa-1: applied here
        review.propose(edit(ws, changed(5)))  # pa-2: applied by another process
        local = loop.run(review.resolve("pa-1", Decision("apply", "here")), HANG_GUARD)
        assert local.kind == "applied"
        heard.clear()  # the local resolution's event; wait for the remote one

        done = subprocess.run(
            redline(ws, "apply", "pa-2", "--reason", "r"),
            capture_output=True,
            text=True,
            timeout=HANG_GUARD * 2,
        )
        assert done.returncode == 0, done.stderr
        assert heard.wait(HANG_GUARD), "the session never heard of the remote apply"
        assert not review.store.has_pending
        assert [action_id for action_id, _ in remote] == ["pa-2"]  # never the local one
        resolution = remote[0][1]
        assert resolution is not None
        assert (resolution.decision, resolution.reason) == ("apply", "r")
        event = [e for e in events if isinstance(e, PendingResolved)][-1]
        assert (event.action_id, event.action, event.reason, event.by) == (
            "pa-2",
            "apply",
            "r",
            "human",
        )
        assert (ws / "a.txt").read_text() == changed(5)
    finally:
        review.close()
        loop.close()


def test_two_processes_resolving_one_action_write_it_once(ws: Path, review: ReviewSession) -> None:
    review.propose(edit(ws, changed(9)))
    procs = [
        subprocess.Popen(
            redline(ws, "apply", "pa-1", "--reason", f"resolver {n}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    codes = []
    for proc in procs:
        _out, err = proc.communicate(timeout=HANG_GUARD * 2)
        codes.append((proc.returncode, err))
    assert sorted(code for code, _ in codes) == [0, 1], codes
    loser = next(err for code, err in codes if code == 1)
    assert loser.startswith("redline pending: pa-1 ")
    assert loser.rstrip().endswith("Nothing was applied or discarded.")
    assert (ws / "a.txt").read_text() == changed(9)
    applied = [entry for entry in undo_list(ws) if entry.action_id == "pa-1"]
    assert len(applied) == 1
    assert queued_ids(ws) == []
    logged = WorkspaceQueue(ws).resolution("pa-1")
    assert logged is not None and logged.decision == "apply"


def test_subscribers_of_one_queue_share_one_watcher(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Path] = []
    watch = WorkspaceQueue.watch

    def counting(self: WorkspaceQueue, callback: object, **options: object) -> object:
        started.append(self.root)
        return watch(self, callback, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(WorkspaceQueue, "watch", counting)
    queue = WorkspaceQueue(ws)
    follower = QueueFollower.of(queue)
    assert QueueFollower.of(WorkspaceQueue(ws)) is follower and not follower.following
    woke = [threading.Event(), threading.Event()]
    stops = [follower.subscribe(event.set) for event in woke]
    try:
        assert follower.following and len(started) == 1
        assert QueueFollower.of(WorkspaceQueue(ws)) is follower

        WorkspaceQueue(ws).push(
            ActionDraft(
                label="Create n.txt",
                source=Source.current("exec", "other", "s2"),
                source_tool_name="write",
                preview=Preview([FileCreate("n.txt", "new\n")]),
            )
        )
        assert all(event.wait(HANG_GUARD) for event in woke)
    finally:
        stops[0]()
        assert follower.following  # the second subscriber still follows
        stops[1]()
    assert not follower.following and len(started) == 1


def test_a_stream_nobody_hears_gets_no_resolution_event(ws: Path) -> None:
    """A stream without replay (a hook process's) and without listeners is not ``heard``:
    a resolution builds no event for it; a listener makes it heard again, and the next
    resolution's event reaches it."""
    import asyncio

    stream = EventStream("s1", replay=False)
    assert not stream.heard
    store = PendingActionStore(queue=WorkspaceQueue(ws), source=Source.current("sdk", "", "s1"))
    session = ReviewSession(ws, store, stream)
    try:
        first = session.propose(edit(ws, changed(2)))
        outcome = asyncio.run(session.resolve(first.id, Decision("discard", "no")))
        assert not outcome.is_error
        heard: list[Event] = []
        stream.subscribe(heard.append)
        assert stream.heard
        second = session.propose(edit(ws, changed(14)))
        asyncio.run(session.resolve(second.id, Decision("discard", "again")))
        assert [(type(e), getattr(e, "action_id", "")) for e in heard] == [
            (PendingResolved, second.id)
        ]
    finally:
        session.close()
        store.queue.close()  # type: ignore[union-attr]
    assert EventStream("s2").heard  # replay kept for a late subscriber: heard
