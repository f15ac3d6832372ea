"""An owner answers once the decision is logged; the process that asked finishes the rest.

The owner of an action (a hook waiting for its agent) logs the resolution under the claim
(durable) and lets go; the asker, which waits anyway, marks the id used and removes the
record under its own claim (``OwnerRequest.asker_finishes``). Between the two, whoever
claims the action next finishes it, a second decision is refused and a reconcile settles
it: a logged decision is never made twice (docs/queue.md)."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from redline.review.events import EventStream
from redline.review.queued import resolve_queued
from redline.review.result import ToolResult
from redline.review.session import ReviewSession
from redline.review.store import PendingAction, PendingActionStore
from redline.workspace.queue import Source, WorkspaceQueue, claims
from redline.workspace.queue.base import REQUESTS, record_name
from redline.workspace.queue.records import OwnerRequest, Resolution

from .helpers import ids


def _owner(ws: Path, calls: list[str]) -> PendingActionStore:
    store = PendingActionStore(
        queue=WorkspaceQueue(ws), source=Source.current("agent", "test agent", "s1")
    )

    def apply(reason: str) -> ToolResult:
        calls.append(reason)
        return ToolResult.text_result(f"Ran the custom step ({reason}).")

    store.push(PendingAction(label="Custom step", apply=apply))
    return store


def _ask_in_a_thread(
    ws: Path, owner_timeout: float = 30.0
) -> tuple[dict[str, ToolResult], threading.Thread]:
    """Another redline asking to apply pa-1 (``resolve_queued``), on a thread named
    "asker": its result lands in the box under "result"."""
    box: dict[str, ToolResult] = {}

    def asker() -> None:
        box["result"] = asyncio.run(
            resolve_queued(WorkspaceQueue(ws), "pa-1", "apply", "go", owner_timeout=owner_timeout)
        )

    thread = threading.Thread(target=asker, name="asker")
    thread.start()
    return box, thread


async def _serve_until_served(review: ReviewSession) -> None:
    for _ in range(3000):  # a generous bound: the request comes within milliseconds
        if await review.serve_owner_requests():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no request came")


async def test_the_owner_logs_and_answers_and_the_asker_finishes(ws: Path) -> None:
    calls: list[str] = []
    store = _owner(ws, calls)
    review = ReviewSession(ws, store, EventStream("s"))
    steps: list[tuple[str, str]] = []
    claims._step_hook = lambda text: steps.append((threading.current_thread().name, text))
    box, thread = _ask_in_a_thread(ws)
    await _serve_until_served(review)
    owner = threading.current_thread().name
    # The owner's part ends with the logged resolution: the record is still there.
    assert steps == [(owner, "apply: resolution logged")]
    thread.join(30)
    assert calls == ["go"]
    assert box["result"].text == "Ran the custom step (go)."
    assert steps[1:] == [("asker", "apply: id marked used"), ("asker", "apply: record removed")]
    queue = WorkspaceQueue(ws)
    assert ids(queue) == [] and 1 in queue._used()
    resolution = queue.resolution("pa-1")
    assert resolution is not None and resolution.decision == "apply"


async def test_an_asker_that_does_not_say_it_finishes_gets_the_whole_finish(ws: Path) -> None:
    """An older redline's request (no ``asker_finishes``): the owner finishes, as before."""
    calls: list[str] = []
    store = _owner(ws, calls)
    review = ReviewSession(ws, store, EventStream("s"))
    queue = WorkspaceQueue(ws)
    request = OwnerRequest("pa-1", "apply", "old", requested_by_pid=0)
    assert "asker_finishes" not in request.to_dict()
    queue._requests().write(record_name("pa-1"), request.to_dict(), "pa-1")
    await _serve_until_served(review)
    assert calls == ["old"]
    assert ids(WorkspaceQueue(ws)) == [] and 1 in queue._used()
    assert not (ws / ".redline" / "queue" / REQUESTS / "pa-1.json").exists()


def _logged_only(ws: Path, decision: str = "apply") -> WorkspaceQueue:
    """An owner that logged its decision and stopped before anyone finished it."""
    _owner(ws, [])
    queue = WorkspaceQueue(ws)
    with queue.claim("pa-1") as claim:
        claim.log(Resolution("pa-1", decision, "by the owner", result_text="Ran it."))
    assert (ws / ".redline" / "queue" / "actions" / "pa-1.json").exists()
    assert 1 not in queue._used()
    return queue


async def test_a_logged_decision_is_never_made_again_and_the_next_claim_finishes_it(
    ws: Path,
) -> None:
    _logged_only(ws)
    late = await resolve_queued(WorkspaceQueue(ws), "pa-1", "discard", "late")
    assert late.is_error and "already applied" in late.text
    queue = WorkspaceQueue(ws)
    resolution = queue.resolution("pa-1")
    assert resolution is not None and resolution.decision == "apply"
    assert resolution.reason == "by the owner"
    assert 1 in queue._used()
    assert not (ws / ".redline" / "queue" / "actions" / "pa-1.json").exists()


def test_a_logged_decision_left_behind_is_settled_by_the_next_listing(ws: Path) -> None:
    _logged_only(ws, "discard")
    queue = WorkspaceQueue(ws)
    assert ids(queue) == []  # the reconcile of a fresh queue finished it
    assert 1 in queue._used()
    resolution = queue.resolution("pa-1")
    assert resolution is not None and resolution.decision == "discard"


def test_the_asker_finishes_a_logged_decision_and_returns_it(ws: Path) -> None:
    queue = _logged_only(ws, "discard")
    found = WorkspaceQueue(ws).wait_resolution("pa-1", 30.0)
    assert found is not None and found.decision == "discard"
    assert 1 in queue._used()
    assert not (ws / ".redline" / "queue" / "actions" / "pa-1.json").exists()


async def test_a_served_request_builds_no_event_nobody_hears(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook process's stream (no replay, no listener): the driver is told of the served
    decision (``on_remote``), and no event is built for nobody before it answers."""
    from redline.review import events

    def unheard(**_fields: object) -> None:
        raise AssertionError("an event was built that nobody hears")

    monkeypatch.setattr(events, "PendingResolved", unheard)
    store = _owner(ws, [])
    review = ReviewSession(ws, store, EventStream("s", replay=False))
    told: list[str] = []
    review.on_remote = lambda action, resolution: told.append(action.id)
    box: dict[str, ToolResult] = {}

    def asker() -> None:
        box["result"] = asyncio.run(
            resolve_queued(WorkspaceQueue(ws), "pa-1", "discard", "no", owner_timeout=30.0)
        )

    thread = threading.Thread(target=asker)
    thread.start()
    for _ in range(3000):  # a generous bound: the request comes within milliseconds
        await review.sync()  # serves it and tells the driver, as the follower's sync does
        if told:
            break
        await asyncio.sleep(0.01)
    thread.join(30)
    assert not box["result"].is_error, box["result"].text
    assert told == ["pa-1"]


def test_the_reviewers_notes_are_read_while_the_asker_removes_the_record(ws: Path) -> None:
    """The owner answers (with the reviewer's notes) once its decision is logged, while the
    asker may be between marking the id used and removing the record — when a read of the
    record is refused as a replay: the notes are read from the logged resolution's copy."""
    from redline.review.comments import Target, add_comment, agent_notes

    from .helpers import edit_draft

    queue = WorkspaceQueue(ws)
    record = queue.push(edit_draft(ws))
    add_comment(queue, record.id, Target("a.txt", 3), "say more")
    with queue.claim(record.id) as claim:
        logged = claim.log(Resolution(record.id, "apply", "fine"))
    queue._resolution_kept(logged)  # the asker's first step; the record is still there
    assert (ws / ".redline" / "queue" / "actions" / f"{record.id}.json").exists()
    assert "say more" in agent_notes(WorkspaceQueue(ws), record.id, "apply")


def _refusing_owner(ws: Path) -> PendingActionStore:
    store = PendingActionStore(
        queue=WorkspaceQueue(ws), source=Source.current("agent", "test agent", "s1")
    )

    def apply(_reason: str) -> ToolResult:
        return ToolResult.error("Codex cannot write this version of a.txt exactly.")

    store.push(PendingAction(label="Custom step", apply=apply))
    return store


async def test_an_owner_that_cannot_apply_tells_the_asker_why_at_once(ws: Path) -> None:
    """An owner whose apply fails (nothing written) answers the asker with its own text,
    instead of leaving it to wait out its timeout; the action stays pending."""
    review = ReviewSession(ws, _refusing_owner(ws), EventStream("s"))
    # A timeout far beyond the hang guard below: only the refusal can end the wait.
    box, thread = _ask_in_a_thread(ws, owner_timeout=3600.0)
    await _serve_until_served(review)
    thread.join(60)
    assert not thread.is_alive(), "the asker still waits"
    result = box["result"]
    assert result.is_error
    assert result.text == (
        "Apply failed for Custom step: Codex cannot write this version of a.txt exactly. "
        "The action is still pending."
    )
    queue = WorkspaceQueue(ws)
    assert ids(queue) == ["pa-1"] and queue.resolution("pa-1") is None
    assert sorted((ws / ".redline" / "queue" / REQUESTS).glob("pa-1*")) == []


def test_a_refusal_answers_only_the_request_it_names(ws: Path) -> None:
    """Another asker's refusal, an earlier request's, or a request file copied under the
    refusal's name is not taken as this request's answer."""
    store = _refusing_owner(ws)
    queue = WorkspaceQueue(ws)
    record = queue.get("pa-1")
    assert record is not None
    mine = OwnerRequest("pa-1", "apply", "", requested_by_pid=os.getpid(), time=5.0)
    other = OwnerRequest("pa-1", "apply", "", requested_by_pid=os.getpid() + 1, time=5.0)
    queue.refuse_request(other, "not yours")
    assert queue._refusal("pa-1", 5.0) is None
    queue.refuse_request(mine, "too late")
    assert queue._refusal("pa-1", 6.0) is None  # an earlier request's
    assert queue._refusal("pa-1", 5.0) == "too late"
    assert queue._refusal("pa-1", 5.0) is None  # taken once
    # A request's own signed document under the refusal's name has no text: ignored.
    queue._requests().write("pa-1.refused", mine.to_dict(), "pa-1", durable=False)
    assert queue._refusal("pa-1", 5.0) is None
    # A damaged one is dropped, not an error.
    (ws / ".redline" / "queue" / REQUESTS / "pa-1.refused").write_text("junk")
    assert queue._refusal("pa-1", 5.0) is None
    assert not (ws / ".redline" / "queue" / REQUESTS / "pa-1.refused").exists()
    assert store.queue is not None
    store.queue.close()


def test_the_owner_never_takes_its_own_logged_decision_for_a_pending_action(ws: Path) -> None:
    """Between the owner's answer and the asker's finish the record is still in the folder:
    the owner's session (``exec --wait`` ending its run, a model's ``has_pending``) must see
    nothing left to review, or a run whose action was decided would end "awaiting review"."""
    store = _owner(ws, [])
    queue = store.queue
    assert queue is not None
    view = queue.session_view("s1")
    assert [r.id for r in view.list()] == ["pa-1"] and view.has_pending
    with queue.claim("pa-1") as claim:  # the owner's part of the decision, as served
        claim.log(Resolution("pa-1", "discard", "no", result_text="Rejected."))
    assert [r.id for r in queue.list()] == ["pa-1"]  # not finished: still in the folder
    assert view.list() == [] and not view.has_pending and view.top() is None
    assert queue.session_view("s2").list() == []


def test_an_unreadable_logged_decision_leaves_the_action_pending(ws: Path) -> None:
    store = _owner(ws, [])
    queue = store.queue
    assert queue is not None
    resolved = ws / ".redline" / "queue" / "resolved"
    resolved.mkdir(parents=True, exist_ok=True)
    (resolved / "pa-1.json").write_text("{not json", encoding="utf-8")
    assert [r.id for r in queue.session_view("s1").list()] == ["pa-1"]


async def test_the_request_is_gone_before_its_refusal_is_told(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An asker that hears the refusal looks at a queue with no request left (the owner
    dropped it first), whichever process runs first after the doorbell."""
    review = ReviewSession(ws, _refusing_owner(ws), EventStream("s"))
    request_file = ws / ".redline" / "queue" / REQUESTS / "pa-1.json"
    seen: list[bool] = []
    refuse = WorkspaceQueue.refuse_request

    def watched(self: WorkspaceQueue, request: OwnerRequest, text: str) -> None:
        seen.append(request_file.exists())
        refuse(self, request, text)

    monkeypatch.setattr(WorkspaceQueue, "refuse_request", watched)
    queue = WorkspaceQueue(ws)
    queue.request_owner("pa-1", "apply", "go")
    assert request_file.exists()
    await _serve_until_served(review)
    assert seen == [False]
    assert queue.owner_requests() == [] and ids(queue) == ["pa-1"]


async def test_the_owner_hears_the_resolution_it_logged_without_reading_it_back(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver hears the very resolution the owner logged for a request (its decision,
    reason and the record as it was), not a second read of the resolved log."""
    calls: list[str] = []
    store = _owner(ws, calls)
    review = ReviewSession(ws, store, EventStream("s"))
    heard: list[Resolution | None] = []
    review.on_remote = lambda _action, resolution: heard.append(resolution)
    queue = store.queue
    assert queue is not None
    read_back: list[str] = []
    real = type(queue).resolution

    def counted(self: WorkspaceQueue, action_id: str) -> Resolution | None:
        found = real(self, action_id)
        if self is queue and found is not None:  # (a claim looks first: none is there)
            read_back.append(action_id)
        return found

    monkeypatch.setattr(type(queue), "resolution", counted)
    box, thread = _ask_in_a_thread(ws)
    for _ in range(3000):  # the request comes within milliseconds
        if heard:
            break
        await review.sync()
        await asyncio.sleep(0.01)
    thread.join(30)
    assert calls == ["go"] and box["result"].text == "Ran the custom step (go)."
    [resolution] = heard
    assert resolution is not None
    assert (resolution.id, resolution.decision, resolution.reason) == ("pa-1", "apply", "go")
    assert resolution.record is not None and resolution.record["label"] == "Custom step"
    assert resolution == WorkspaceQueue(ws).resolution("pa-1")  # what the log holds
    assert "pa-1" not in read_back
