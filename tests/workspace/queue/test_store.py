"""PendingActionStore backed by the workspace queue: same API, persisted records."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from redline.review.events import EventStream
from redline.review.file_action import file_action
from redline.review.queued import resolve_queued
from redline.review.resolve import resolve_pending
from redline.review.result import ToolResult
from redline.review.session import ReviewSession
from redline.review.store import PendingAction, PendingActionStore
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import Source, WorkspaceQueue

from .helpers import ids


def _store(ws: Path) -> PendingActionStore:
    return PendingActionStore(
        queue=WorkspaceQueue(ws), source=Source.current("agent", "test agent", "s1")
    )


def _edit(ws: Path, text: str = "more\n") -> PendingAction:
    old = (ws / "a.txt").read_text()
    preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, old + text)])

    def repreview() -> PendingAction:
        return _edit(ws, text)

    return file_action(
        ws,
        preview,
        label="Edit a.txt",
        source_tool_name="edit",
        applied_text="Applied edit to a.txt.",
        repreview=repreview,
    )


async def test_push_persists_and_apply_resolves_the_record(ws: Path) -> None:
    store = _store(ws)
    action = store.push(_edit(ws))
    assert action.id == "pa-1" and store.has_pending and store.peek() is action
    record = WorkspaceQueue(ws).get("pa-1")
    assert record is not None and record.applied_by == "preview"
    assert record.source.session_id == "s1" and record.source.name == "test agent"
    result = await resolve_pending(store, "apply", "fine")
    assert not result.is_error and result.text == "Applied edit to a.txt."
    assert not store.has_pending and ids(WorkspaceQueue(ws)) == []
    resolution = WorkspaceQueue(ws).resolution("pa-1")
    assert resolution is not None and resolution.decision == "apply"
    assert resolution.reason == "fine" and resolution.result_text == "Applied edit to a.txt."


async def test_ids_are_shared_between_stores_of_one_workspace(ws: Path) -> None:
    one, two = _store(ws), _store(ws)
    assert [one.push(_edit(ws)).id, two.push(_edit(ws)).id, one.push(_edit(ws)).id] == [
        "pa-1",
        "pa-2",
        "pa-3",
    ]
    assert [a.id for a in one.snapshot()] == ["pa-3", "pa-1"]


async def test_replace_stale_and_pop_update_the_queue(ws: Path) -> None:
    store = _store(ws)
    store.push(_edit(ws))
    store.push(_edit(ws))
    fresh = store.replace("pa-1", _edit(ws, "fresher\n"))
    assert fresh.id == "pa-3" and [a.id for a in store.snapshot()] == ["pa-2", "pa-3"]
    queue = WorkspaceQueue(ws)
    assert ids(queue) == ["pa-2", "pa-3"]
    replaced = queue.resolution("pa-1")
    assert replaced is not None and replaced.replaced_by == "pa-3"
    store.mark_stale("pa-2", "a.txt (modified since the preview)")
    record = queue.get("pa-2")
    assert record is not None and record.stale
    assert record.stale_reason == "a.txt (modified since the preview)"
    store.pop()
    assert ids(queue) == ["pa-3"]
    removed = queue.resolution("pa-2")
    assert removed is not None and removed.decision == "removed"


async def test_discard_through_the_store(ws: Path) -> None:
    store = _store(ws)
    store.push(_edit(ws))
    result = await resolve_pending(store, "discard", "wrong file")
    assert result.text == "Discarded: Edit a.txt. Reason: wrong file"
    resolution = WorkspaceQueue(ws).resolution("pa-1")
    assert resolution is not None and resolution.decision == "discard"


async def test_an_action_resolved_elsewhere_is_not_applied_again(ws: Path) -> None:
    store = _store(ws)
    store.push(_edit(ws))
    elsewhere = await resolve_queued(WorkspaceQueue(ws), "pa-1", "apply", "from the shell")
    assert not elsewhere.is_error
    assert elsewhere.text == "Applied: Edit a.txt."
    local = await resolve_pending(store, "apply", "again")
    assert local.is_error and "already applied" in local.text
    assert (ws / "a.txt").read_text() == "hello\nworld\nmore\n"


async def test_owner_action_is_run_by_its_owner_on_request(ws: Path) -> None:
    store = _store(ws)
    calls: list[str] = []

    def apply(reason: str) -> ToolResult:
        calls.append(reason)
        return ToolResult.text_result(f"Ran the custom step ({reason}).")

    store.push(PendingAction(label="Custom step", apply=apply, details={"k": 1}))
    record = WorkspaceQueue(ws).get("pa-1")
    assert record is not None and record.applied_by == "owner" and not record.orphaned()

    box: dict[str, ToolResult] = {}

    def resolver() -> None:
        box["result"] = asyncio.run(
            resolve_queued(WorkspaceQueue(ws), "pa-1", "apply", "go", owner_timeout=30.0)
        )

    review = ReviewSession(ws, store, EventStream("s"))
    thread = threading.Thread(target=resolver)
    thread.start()
    for _ in range(3000):  # generous bound; the request usually arrives within milliseconds
        served = await review.serve_owner_requests()
        if served:
            break
        await asyncio.sleep(0.01)
    thread.join(30)
    assert calls == ["go"]
    assert box["result"].text == "Ran the custom step (go)."
    assert not store.has_pending and ids(WorkspaceQueue(ws)) == []


def test_an_action_carries_its_source_and_a_replacement_keeps_it(ws: Path) -> None:
    store = PendingActionStore(
        queue=WorkspaceQueue(ws), source=Source.current("acp", "gemini", "s1")
    )
    action = store.push(_edit(ws))
    assert action.source is not None and action.source.canonical == "acp:gemini"
    # A person's edit (or a re-base) replaces the action: it still came from gemini.
    edited = store.replace(action.id, _edit(ws, "edited\n"))
    assert edited.source is not None and edited.source.canonical == "acp:gemini"
    record = WorkspaceQueue(ws).get(edited.id)
    assert record is not None and record.source.canonical == "acp:gemini"


def test_a_store_without_a_queue_stamps_its_source_too() -> None:
    store = PendingActionStore(source=Source("sdk", "sdk"))
    action = store.push(PendingAction("Run", lambda _reason: "done"))
    assert action.source is not None and action.source.canonical == "sdk"
    assert PendingActionStore().push(PendingAction("Run", lambda _r: "x")).source is None
