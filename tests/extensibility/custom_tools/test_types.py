from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from redline.extensibility.custom_tools import (
    STORE_UNAVAILABLE_MESSAGE,
    CustomToolAdapter,
    CustomToolAPI,
    CustomToolError,
    PendingActionStoreUnavailable,
    RunTimeout,
)
from redline.extensibility.custom_tools.types import NO_OUTPUT, InvalidCustomTool
from redline.review.resolve import resolve_pending
from redline.review.result import ToolResult
from redline.review.store import PendingActionStore
from redline.tools.base import PREVIEW_BANNER, ToolContext


class CountParams(BaseModel):
    count: int
    note: str = ""


class SimpleTool:
    def __init__(self, execute: Any, name: str = "simple", deferrable: bool = False) -> None:
        self.name = name
        self.label = "Simple"
        self.description = "A test tool"
        self.parameters = CountParams
        self.execute = execute
        self.deferrable = deferrable


def ctx(root: Path, store: PendingActionStore | None = None) -> ToolContext:
    return ToolContext(cwd=root, store=store, tool_call_id="call-1")


# -- push_pending_action ---------------------------------------------------------------


def test_push_without_store_raises_the_exact_message(tmp_path: Path) -> None:
    api = CustomToolAPI(tmp_path, None)
    with pytest.raises(PendingActionStoreUnavailable) as caught:
        api.push_pending_action(label="x", apply=lambda reason: "ok")
    assert str(caught.value) == "Pending action store unavailable for custom tools in this runtime."
    assert str(caught.value) == STORE_UNAVAILABLE_MESSAGE


async def test_push_without_store_reaches_the_model_as_the_exact_text(tmp_path: Path) -> None:
    api = CustomToolAPI(tmp_path, None)

    def execute(tool_call_id: str, params: CountParams) -> str:
        api.push_pending_action(label="x", apply=lambda reason: "ok")
        return "unreachable"

    result = await CustomToolAdapter(SimpleTool(execute)).execute({"count": 1}, ctx(tmp_path))
    assert result.is_error
    assert "Pending action store unavailable for custom tools in this runtime." in result.text


def test_push_returns_the_new_id_and_keeps_the_fields(tmp_path: Path) -> None:
    store = PendingActionStore(clock=lambda: 5.0)
    api = CustomToolAPI(tmp_path, store)
    first = api.push_pending_action(label="First", apply=lambda reason: "a")
    second = api.push_pending_action(
        label="Second",
        apply=lambda reason: "b",
        details={"note": "shown as text"},
        source_tool_name="my_tool",
    )
    assert (first, second) == ("pa-1", "pa-2")
    top = store.peek()
    assert top is not None
    assert (top.id, top.label, top.source_tool_name) == ("pa-2", "Second", "my_tool")
    assert top.details == {"note": "shown as text"}
    assert top.created_at == 5.0
    bottom = store.get("pa-1")
    assert bottom is not None and bottom.source_tool_name == "custom_tool"


def test_push_refuses_a_bad_apply(tmp_path: Path) -> None:
    api = CustomToolAPI(tmp_path, PendingActionStore())
    with pytest.raises(TypeError, match="callable apply"):
        api.push_pending_action(label="x", apply="not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="label"):
        api.push_pending_action(label="  ", apply=lambda reason: None)


async def test_pushed_action_resolves_with_the_reason(tmp_path: Path) -> None:
    store = PendingActionStore()
    api = CustomToolAPI(tmp_path, store)
    seen: list[tuple[str, str]] = []

    async def apply(reason: str) -> str:
        seen.append(("apply", reason))
        return f"Applied it. Reason: {reason}"

    def reject(reason: str) -> dict[str, Any]:
        seen.append(("reject", reason))
        return {"content": [{"type": "text", "text": f"Dropped it. Reason: {reason}"}]}

    api.push_pending_action(label="Bottom", apply=apply, reject=reject, source_tool_name="t")
    api.push_pending_action(label="Top", apply=apply, reject=reject, source_tool_name="t")

    discarded = await resolve_pending(store, "discard", "not this one")
    assert not discarded.is_error
    assert discarded.text == "Dropped it. Reason: not this one"
    assert discarded.action is not None and discarded.action.label == "Top"

    applied = await resolve_pending(store, "apply", "looks right")
    assert not applied.is_error
    assert applied.text == "Applied it. Reason: looks right"
    assert applied.action is not None and applied.action.source_tool_name == "t"
    assert seen == [("reject", "not this one"), ("apply", "looks right")]
    assert not store.has_pending


async def test_discard_without_reject_uses_the_default_text(tmp_path: Path) -> None:
    store = PendingActionStore()
    CustomToolAPI(tmp_path, store).push_pending_action(label="Thing", apply=lambda r: "x")
    result = await resolve_pending(store, "discard", "no")
    assert result.text == "Discarded: Thing. Reason: no"


async def test_failing_apply_keeps_the_action_pending(tmp_path: Path) -> None:
    store = PendingActionStore()

    def apply(reason: str) -> str:
        raise RuntimeError("disk on fire")

    CustomToolAPI(tmp_path, store).push_pending_action(label="Risky", apply=apply)
    result = await resolve_pending(store, "apply", "go")
    assert result.is_error
    assert "disk on fire" in result.text
    assert store.count == 1


# -- run -------------------------------------------------------------------------------


def test_run_executes_in_the_workspace_and_captures_output(tmp_path: Path) -> None:
    api = CustomToolAPI(tmp_path, None)
    code = "import os, sys; print(os.getcwd()); print(sys.stdin.read().upper(), file=sys.stderr)"
    done = api.run([sys.executable, "-c", code], input="hello")
    assert done.ok and done.returncode == 0
    assert Path(done.stdout.strip()) == tmp_path.resolve()
    assert done.stderr.strip() == "HELLO"
    failed = api.run([sys.executable, "-c", "raise SystemExit(3)"])
    assert not failed.ok and failed.returncode == 3


def test_run_timeout_is_a_clear_error(tmp_path: Path) -> None:
    api = CustomToolAPI(tmp_path, None)
    with pytest.raises(RunTimeout, match=r"timed out after 0\.2 s"):
        api.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.2)


def test_run_refuses_strings_and_missing_programs(tmp_path: Path) -> None:
    api = CustomToolAPI(tmp_path, None)
    with pytest.raises(TypeError, match="list of arguments"):
        api.run("ls -l")
    with pytest.raises(CustomToolError, match="program not found"):
        api.run(["definitely-not-a-program-redline"])


# -- the adapter -------------------------------------------------------------------------


async def test_adapter_validates_arguments_naming_tool_and_field(tmp_path: Path) -> None:
    adapter = CustomToolAdapter(SimpleTool(lambda call_id, params: "never"))
    result = await adapter.execute({"count": "many"}, ctx(tmp_path))
    assert result.is_error
    assert result.text.startswith("Invalid arguments for simple: count:")
    missing = await adapter.execute({}, ctx(tmp_path))
    assert missing.is_error and "count" in missing.text and "Field required" in missing.text


async def test_adapter_runs_sync_and_async_execute(tmp_path: Path) -> None:
    calls: list[tuple[str, int]] = []

    def sync_execute(call_id: str, params: CountParams) -> str:
        calls.append((call_id, params.count))
        return f"sync {params.count}"

    async def async_execute(call_id: str, params: CountParams) -> ToolResult:
        calls.append((call_id, params.count))
        return ToolResult.text_result(f"async {params.count}", details={"n": params.count})

    sync_result = await CustomToolAdapter(SimpleTool(sync_execute)).execute(
        {"count": 2}, ctx(tmp_path)
    )
    async_result = await CustomToolAdapter(SimpleTool(async_execute)).execute(
        CountParams(count=3), ctx(tmp_path)
    )
    assert sync_result.text == "sync 2" and not sync_result.is_error
    assert async_result.text == "async 3" and async_result.details == {"n": 3}
    assert calls == [("call-1", 2), ("call-1", 3)]


async def test_adapter_turns_exceptions_into_error_results(tmp_path: Path) -> None:
    def boom(call_id: str, params: CountParams) -> str:
        raise KeyError("missing-key")

    result = await CustomToolAdapter(SimpleTool(boom)).execute({"count": 1}, ctx(tmp_path))
    assert result.is_error
    assert result.text == "simple failed: KeyError: 'missing-key'"
    assert "Traceback" not in result.text


async def test_adapter_coerces_results(tmp_path: Path) -> None:
    note = {"content": [{"type": "text", "text": "from a dict"}], "details": [1]}
    as_dict = await CustomToolAdapter(SimpleTool(lambda c, p: note)).execute(
        {"count": 1}, ctx(tmp_path)
    )
    assert (as_dict.text, as_dict.details) == ("from a dict", [1])
    none = await CustomToolAdapter(SimpleTool(lambda c, p: None)).execute(
        {"count": 1}, ctx(tmp_path)
    )
    assert none.text == NO_OUTPUT and not none.is_error
    bad = await CustomToolAdapter(SimpleTool(lambda c, p: 42)).execute({"count": 1}, ctx(tmp_path))
    assert bad.is_error and "unusable result" in bad.text and "int" in bad.text


async def test_adapter_puts_the_banner_first_when_the_tool_pushed(tmp_path: Path) -> None:
    store = PendingActionStore()
    api = CustomToolAPI(tmp_path, store)

    def execute(call_id: str, params: CountParams) -> str:
        api.push_pending_action(label=f"Do {params.count}", apply=lambda reason: "done")
        return "Queued."

    adapter = CustomToolAdapter(SimpleTool(execute, deferrable=True))
    assert adapter.deferrable and not adapter.hidden
    result = await adapter.execute({"count": 4}, ctx(tmp_path, store))
    assert result.text.splitlines() == [PREVIEW_BANNER, "Queued."]
    plain = await CustomToolAdapter(SimpleTool(lambda c, p: "no push")).execute(
        {"count": 1}, ctx(tmp_path, store)
    )
    assert plain.text == "no push"


def test_adapter_copies_the_tool_description(tmp_path: Path) -> None:
    adapter = CustomToolAdapter(
        {
            "name": "from_dict",
            "description": "made from a mapping",
            "parameters": CountParams,
            "execute": lambda c, p: "ok",
        }
    )
    assert (adapter.name, adapter.label, adapter.description) == (
        "from_dict",
        "from_dict",
        "made from a mapping",
    )
    assert adapter.parameters_schema()["required"] == ["count"]


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"parameters": CountParams, "execute": print}, "has no name"),
        ({"name": "has space", "parameters": CountParams, "execute": print}, "is invalid"),
        ({"name": "t", "parameters": dict, "execute": print}, "pydantic BaseModel subclass"),
        ({"name": "t", "parameters": CountParams(count=1), "execute": print}, "got CountParams"),
        ({"name": "t", "parameters": CountParams}, "execute(tool_call_id, params) is missing"),
    ],
)
def test_adapter_refuses_broken_tools(tool: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidCustomTool, match=message.replace("(", r"\(").replace(")", r"\)")):
        CustomToolAdapter(tool)
