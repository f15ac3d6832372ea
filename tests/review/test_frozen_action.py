"""A PendingAction is frozen; the store returns the stamped copy, and the action an SDK user
gave ``push`` forwards its stamped fields for one release with a DeprecationWarning."""

from __future__ import annotations

import asyncio
import dataclasses
import warnings
from pathlib import Path

import pytest

from redline.review.resolve import resolve_pending
from redline.review.store import PendingAction, PendingActionStore, StoreEvent
from redline.workspace.queue import WorkspaceQueue


def _action(label: str = "Do it") -> PendingAction:
    return PendingAction(label=label, apply=lambda reason: f"done: {reason}")


def test_an_action_cannot_be_changed() -> None:
    action = _action()
    for name, value in (("id", "pa-9"), ("stale", True), ("details", {}), ("label", "x")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(action, name, value)
    store = PendingActionStore()
    pushed = store.push(action)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pushed.stale = True  # type: ignore[misc]


def test_push_returns_a_stamped_copy_and_events_carry_it() -> None:
    store = PendingActionStore(clock=lambda: 42.0)
    events: list[StoreEvent] = []
    store.subscribe(events.append)
    action = _action()
    pushed = store.push(action)
    assert pushed is not action and type(pushed) is PendingAction
    assert (pushed.id, pushed.created_at, pushed.label) == ("pa-1", 42.0, "Do it")
    assert store.peek() is pushed and events[-1].action is pushed
    stale = store.mark_stale(pushed.id, "a.txt changed")
    assert stale is not None and stale is not pushed and stale.stale
    assert not pushed.stale  # the copy returned before is as it was
    assert store.get(pushed.id) is stale and events[-1].kind == "stale"
    assert events[-1].action is stale
    detailed = store.update_details(pushed.id, {"agent_ended": "exited"})
    assert detailed is not None and detailed.details == {"agent_ended": "exited"}
    assert detailed.stale and store.get(pushed.id) is detailed


def test_reading_the_pushed_original_warns_and_forwards() -> None:
    store = PendingActionStore(clock=lambda: 7.0)
    action = _action()
    pushed = store.push(action)
    with pytest.warns(DeprecationWarning, match=r"use the action push\(\) returns"):
        assert action.id == "pa-1"
    with pytest.warns(DeprecationWarning):
        assert action.created_at == 7.0
    store.mark_stale(pushed.id, "changed")
    with pytest.warns(DeprecationWarning):
        assert action.stale is True  # forwarded to the store's current copy
    with pytest.warns(DeprecationWarning):
        assert action.stale_reason == "changed"
    # Other fields are the original's own, read without a warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert action.label == "Do it" and isinstance(action, PendingAction)
        assert repr(action) == repr(pushed)
        # The stamped action (what redline passes around) never warns.
        assert pushed.id == "pa-1" and not pushed.stale
    store.remove(pushed.id)
    with pytest.warns(DeprecationWarning):
        assert action.id == "pa-1"  # resolved: the last stamped copy it knew


def test_an_action_never_pushed_does_not_warn() -> None:
    action = _action()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert action.id == "" and action.created_at == 0.0


def test_the_replacement_given_to_replace_forwards_too() -> None:
    store = PendingActionStore()
    first = store.push(_action("one"))
    fresh = _action("two")
    replaced = store.replace(first.id, fresh)
    assert replaced.id == "pa-2" and replaced is not fresh
    with pytest.warns(DeprecationWarning):
        assert fresh.id == "pa-2"


def test_a_queued_pushes_stamp_applies_under_the_claim(tmp_path: Path) -> None:
    with WorkspaceQueue(tmp_path) as queue:
        store = PendingActionStore(queue=queue)
        pushed = store.push(_action())
        assert pushed.id == "pa-1" and queue.get("pa-1") is not None
        outcome = asyncio.run(resolve_pending(store, "apply", "ok", pushed.id))
        assert outcome.kind == "applied", outcome.text
        assert queue.get("pa-1") is None
        assert queue.resolution("pa-1") is not None


def test_typed_details_are_stored_as_their_json_with_the_kind(tmp_path: Path) -> None:
    import json

    from redline.review.file_action import file_action
    from redline.review.queued import resolve_queued
    from redline.workspace.details import FileChangeDetails
    from redline.workspace.preview import FileModify, Preview, sha256_bytes

    (tmp_path / "a.txt").write_text("old\n", encoding="utf-8")
    preview = Preview([FileModify("a.txt", sha256_bytes(b"old\n"), "old\n", "new\n")])
    details = FileChangeDetails(path="a.txt", change="modify")
    action = file_action(
        tmp_path,
        preview,
        label="Edit a.txt",
        source_tool_name="edit",
        applied_text="",
        repreview=None,
        details=details,
    )
    with WorkspaceQueue(tmp_path) as queue:
        pushed = PendingActionStore(queue=queue).push(action)
        record = queue.get(pushed.id)
        assert record is not None and record.kind == "file_change"
        assert record.details == {"path": "a.txt", "kind": "modify"}
        stored = (tmp_path / ".redline" / "queue" / "actions" / f"{pushed.id}.json").read_text()
        header, _, body = stored.partition("\n")
        assert json.loads(header)["version"] == 2
        assert json.loads(body)["kind"] == "file_change"
        # Another process resolves it from the record (its details read back typed).
        result = asyncio.run(resolve_queued(queue, pushed.id, "apply", "ok"))
        assert not result.is_error, result.text
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "new\n"
