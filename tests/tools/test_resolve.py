from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from redline.review.resolve import (
    NOTHING_PENDING,
    ResolvedAction,
    resolve_pending,
)
from redline.review.result import ToolResult
from redline.review.store import PendingAction, PendingActionStore
from redline.tools.resolve import ResolveParams, ResolveTool


def run(coro: Any) -> ToolResult:
    return asyncio.run(coro)  # type: ignore[no-any-return]


def test_empty_stack_error_text() -> None:
    result = run(resolve_pending(PendingActionStore(), "apply", "ok"))
    assert result.is_error
    assert result.text == "No pending action to resolve. Nothing to apply or discard."
    assert result.text == NOTHING_PENDING


def test_apply_passes_reason_and_pops_top_only() -> None:
    store = PendingActionStore()
    got: list[str] = []
    store.push(PendingAction(label="bottom", apply=lambda r: "bottom applied"))
    store.push(
        PendingAction(
            label="Rename x",
            apply=lambda r: got.append(r) or f"Renamed. Reason: {r}",
            source_tool_name="renamer",
            details={"n": 1},
        )
    )
    result = run(resolve_pending(store, "apply", "looks right"))
    assert not result.is_error
    assert got == ["looks right"]
    assert result.text == "Renamed. Reason: looks right"
    assert result.kind == "applied"
    assert result.action == ResolvedAction("pa-2", "Rename x", "renamer")
    # The tool result the model's call returns keeps the wire shape of the details.
    assert result.to_tool_result().details == {
        "action": "apply",
        "reason": "looks right",
        "source_tool_name": "renamer",
        "label": "Rename x",
        "action_id": "pa-2",
        "result_details": None,
    }
    assert [a.label for a in store.snapshot()] == ["bottom"]


def test_apply_with_empty_text_uses_default() -> None:
    store = PendingActionStore()
    store.push(PendingAction(label="Edit a.py", apply=lambda r: ""))
    assert run(resolve_pending(store, "apply", "r")).text == "Applied: Edit a.py."


def test_discard_without_reject_uses_default_text() -> None:
    store = PendingActionStore()
    called: list[str] = []
    store.push(PendingAction(label="Edit a.py", apply=lambda r: called.append(r)))
    result = run(resolve_pending(store, "discard", "not needed"))
    assert result.text == "Discarded: Edit a.py. Reason: not needed"
    assert not called and not store.has_pending


def test_discard_reject_returning_none_uses_default_text() -> None:
    store = PendingActionStore()
    reasons: list[str] = []
    store.push(PendingAction(label="X", apply=lambda r: "", reject=lambda r: reasons.append(r)))
    result = run(resolve_pending(store, "discard", "nope"))
    assert reasons == ["nope"]
    assert result.text == "Discarded: X. Reason: nope"


def test_discard_reject_text_replaces_default() -> None:
    store = PendingActionStore()
    store.push(
        PendingAction(label="X", apply=lambda r: "", reject=lambda r: f"Cleaned up. Reason: {r}")
    )
    assert run(resolve_pending(store, "discard", "nope")).text == "Cleaned up. Reason: nope"


@pytest.mark.parametrize(
    "value",
    [
        ToolResult.text_result("done", details={"k": 1}),
        {"content": [{"type": "text", "text": "done"}], "details": {"k": 1}},
        "done",
    ],
)
def test_three_callback_return_shapes(value: object) -> None:
    store = PendingActionStore()
    store.push(PendingAction(label="X", apply=lambda r: value))
    result = run(resolve_pending(store, "apply", "r"))
    assert result.text == "done"
    assert not result.is_error
    if not isinstance(value, str):
        assert result.result_details == {"k": 1}


def test_async_callbacks() -> None:
    store = PendingActionStore()

    async def apply(reason: str) -> str:
        await asyncio.sleep(0)
        return f"async applied: {reason}"

    async def reject(reason: str) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"async discarded: {reason}"}]}

    store.push(PendingAction(label="A", apply=apply))
    store.push(PendingAction(label="B", apply=apply, reject=reject))
    assert run(resolve_pending(store, "discard", "why")).text == "async discarded: why"
    assert run(resolve_pending(store, "apply", "ok")).text == "async applied: ok"


@pytest.mark.parametrize("action", ["apply", "discard"])
def test_failing_callbacks_keep_the_action(action: str) -> None:
    store = PendingActionStore()

    def boom(reason: str) -> str:
        raise OSError("disk on fire")

    store.push(PendingAction(label="Risky", apply=boom, reject=boom))
    result = run(resolve_pending(store, action, "r"))
    assert result.is_error
    assert "disk on fire" in result.text
    assert "still pending" in result.text
    assert store.peek() is not None and store.peek().label == "Risky"  # type: ignore[union-attr]


@pytest.mark.parametrize("action", ["apply", "discard"])
def test_is_error_results_keep_the_action(action: str) -> None:
    store = PendingActionStore()
    bad = ToolResult.error("stale file a.py")
    store.push(PendingAction(label="Risky", apply=lambda r: bad, reject=lambda r: bad))
    result = run(resolve_pending(store, action, "r"))
    assert result.is_error and "stale file a.py" in result.text
    assert store.count == 1


def test_action_id_targets_any_action_and_a_gone_one_runs_nothing() -> None:
    store = PendingActionStore()
    ran: list[str] = []
    store.push(PendingAction(label="old", apply=lambda r: ran.append("old")))
    store.push(PendingAction(label="new top", apply=lambda r: ran.append("new")))
    # A person may resolve any action, not only the top.
    assert not run(resolve_pending(store, "apply", "r", action_id="pa-1")).is_error
    assert ran == ["old"] and store.count == 1
    result = run(resolve_pending(store, "apply", "r", action_id="pa-1"))
    assert result.is_error and result.top_changed
    assert "pa-1 is no longer pending" in result.text
    assert ran == ["old"] and store.count == 1
    store.replace("pa-2", PendingAction(label="newer", apply=lambda r: ran.append("newer")))
    result = run(resolve_pending(store, "apply", "r", action_id="pa-2"))
    assert result.top_changed and "replaced by pa-3 (newer)" in result.text
    assert (result.expected_action_id, result.top_action_id) == ("pa-2", "pa-3")
    assert ran == ["old"]


def test_invalid_action_is_refused() -> None:
    store = PendingActionStore()
    store.push(PendingAction(label="x", apply=lambda r: ""))
    result = run(resolve_pending(store, "maybe", "r"))
    assert result.is_error and "'apply' or 'discard'" in result.text
    assert store.count == 1


def test_stale_action_apply_is_refused_but_discard_works() -> None:
    store = PendingActionStore()
    ran: list[str] = []
    action = store.push(PendingAction(label="Edit a.py", apply=lambda r: ran.append(r)))
    store.mark_stale(action.id, "a.py changed since the preview")
    result = run(resolve_pending(store, "apply", "r"))
    assert result.is_error and "stale" in result.text and ran == []
    assert not run(resolve_pending(store, "discard", "outdated")).is_error


def test_racing_resolutions_run_an_action_once() -> None:
    store = PendingActionStore()
    runs: list[str] = []
    gate = threading.Event()

    def slow_apply(reason: str) -> str:
        runs.append(reason)
        gate.wait(5)
        return "ok"

    store.push(PendingAction(label="once", apply=slow_apply))
    results: list[ToolResult] = []

    def resolver(reason: str) -> None:
        results.append(asyncio.run(resolve_pending(store, "apply", reason, action_id="pa-1")))

    first = threading.Thread(target=resolver, args=("first",))
    first.start()
    while not runs:  # the first resolution is inside apply
        threading.Event().wait(0.001)
    second = threading.Thread(target=resolver, args=("second",))
    second.start()
    gate.set()
    first.join()
    second.join()
    assert runs == ["first"]
    assert sorted(r.is_error for r in results) == [False, True]
    assert NOTHING_PENDING in [r.text for r in results if r.is_error]


def test_resolve_tool_schema_and_execution() -> None:
    tool = ResolveTool()
    schema = tool.parameters_schema()
    assert tool.name == "resolve" and tool.hidden
    assert set(schema["required"]) == {"action", "reason"}
    assert schema["properties"]["action"]["enum"] == ["apply", "discard"]
    from pathlib import Path

    from redline.tools.base import ToolContext

    store = PendingActionStore()
    store.push(PendingAction(label="x", apply=lambda r: "applied x"))
    result = asyncio.run(
        tool.execute(ResolveParams(action="apply", reason="r"), ToolContext(Path("."), store))
    )
    assert result.text == "applied x"
