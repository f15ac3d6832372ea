"""create_agent_session end to end: the real tools, safe apply, undo and plugins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.model.helpers import ProgrammableProvider, call, reply

import redline
from redline import create_agent_session
from redline.drivers.model.providers.base import ModelRequest
from redline.review.events import PendingStale, ToolEnd


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")


def test_public_names_are_lazy_exports() -> None:
    assert redline.create_agent_session is create_agent_session
    assert redline.PendingActionStore.__name__ == "PendingActionStore"
    with pytest.raises(AttributeError):
        redline.nothing_here  # noqa: B018


def test_undo_is_reported_to_the_model(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n", encoding="utf-8")
    provider = ProgrammableProvider(
        [
            reply(call("write", path="a.txt", content="new\n")),
            reply(text="noted"),
        ]
    )
    with create_agent_session(tmp_path, provider, resolver="human") as session:
        events: list[Any] = []
        session.subscribe(events.append)
        assert session.prompt("change a") == "awaiting_review"
        assert not session.resolve("apply", "fine").is_error
        assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "new\n"
        undone = session.undo()
        assert not undone.is_error, undone.text
        assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "old\n"
        assert session.resume() == "done"
    request: ModelRequest = provider.requests[-1]
    report = [m.content for m in request.messages if m.role == "user"][-1]
    assert "applied pa-1 (Write: a.txt). Reason: fine" in report
    assert "undid" in report and "a.txt" in report
    assert [e.type for e in events].count("undone") == 1


def test_undo_with_nothing_applied_is_an_error_result(tmp_path: Path) -> None:
    with create_agent_session(tmp_path, ProgrammableProvider([])) as session:
        result = session.undo()
    assert result.is_error


def test_stale_check_and_repreview(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    provider = ProgrammableProvider([reply(call("edit", path="a.py", old="x = 1", new="x = 2"))])
    with create_agent_session(tmp_path, provider, resolver="human") as session:
        assert session.prompt("edit") == "awaiting_review"
        (tmp_path / "a.py").write_text("# header\nx = 1\n", encoding="utf-8")
        assert session.check_staleness({"a.py"}) == ["pa-1"]
        refused = session.resolve("apply", "go")
        assert refused.is_error and "stale" in refused.text
        assert (tmp_path / "a.py").read_text(encoding="utf-8") == "# header\nx = 1\n"
        fresh = session.repreview("pa-1")
        assert not fresh.is_error, fresh.text
        top = session.store.peek()
        assert top is not None and top.id == "pa-2" and not top.stale
        assert not session.resolve("apply", "go", action_id="pa-2").is_error
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == "# header\nx = 2\n"


def test_plugin_errors_and_inline_custom_tools(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def factory(api):\n    raise RuntimeError('no')\n", encoding="utf-8")
    from pydantic import BaseModel

    class Params(BaseModel):
        who: str

    class Hello:
        name = "hello"
        label = "Hello"
        description = "Say hello"
        parameters = Params

        def execute(self, tool_call_id: str, params: Params) -> str:
            return f"hello {params.who}"

    provider = ProgrammableProvider([reply(call("hello", who="bob")), reply(text="ok")])
    with create_agent_session(
        tmp_path, provider, custom_tools=[Hello()], tool_paths=[broken]
    ) as session:
        events: list[Any] = []
        session.subscribe(events.append)
        assert session.prompt("greet") == "done"
        assert len(session.plugin_errors) == 1
        assert "broken.py" in str(session.plugin_errors[0])
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.result.text == "hello bob"


def test_bad_workspace_and_resolver(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a folder"):
        create_agent_session(tmp_path / "missing", ProgrammableProvider([]))
    with pytest.raises(ValueError, match="resolver"):
        create_agent_session(tmp_path, ProgrammableProvider([]), resolver="robot")


def test_scripted_plan_by_model_string(tmp_path: Path) -> None:
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps({"name": "p", "steps": [{"say": "hi"}]}), encoding="utf-8")
    with create_agent_session(tmp_path, f"scripted:{plan}") as session:
        assert session.scripted
        assert "calls no language model" in session.model_label
        assert session.prompt("x") == "done"


def test_an_apply_never_marks_itself_stale_but_marks_others(tmp_path: Path) -> None:
    """A watcher report arriving mid-apply (redline's own write) must not make the action
    being applied stale; the other action on the same file is stale once the apply is done."""
    import threading
    import time

    (tmp_path / "a.py").write_text("x = 1\ny = 1\n", encoding="utf-8")
    provider = ProgrammableProvider(
        [
            reply(
                call("edit", "c1", path="a.py", old="x = 1", new="x = 2"),
                call("edit", "c2", path="a.py", old="y = 1", new="y = 2"),
            )
        ]
    )
    with create_agent_session(tmp_path, provider, resolver="human") as session:
        events: list[Any] = []
        session.subscribe(events.append)
        assert session.prompt("edit") == "awaiting_review"
        top = session.store.peek()
        assert top is not None and top.id == "pa-2"
        original = top.apply
        seen_mid_apply: list[list[str]] = []

        async def apply_then_watcher_fires(reason: str) -> Any:
            value = original(reason)
            if hasattr(value, "__await__"):
                value = await value
            # The file on disk is new now; the watcher thread reports it.
            watcher = threading.Thread(
                target=lambda: seen_mid_apply.append(session.check_staleness({"a.py"}))
            )
            watcher.start()
            watcher.join(30)
            assert not watcher.is_alive()
            return value

        # Code of its own now, not the Preview's safe apply: no re-basing of the others,
        # only the staleness check reports them. (Actions are frozen: the stack gets a copy.)
        with session.store._lock:
            session.store._swap(
                top.id, top.stamped(apply=apply_then_watcher_fires, preview_apply=False)
            )
        result = session.resolve("apply", "ok")
        assert not result.is_error, result.text
        assert seen_mid_apply == [[]]
        # The other action's staleness is reported by the session after the apply; on a busy
        # machine that report may trail the resolution, so wait for it (a hang guard only).
        deadline = time.monotonic() + 60
        while not any(isinstance(e, PendingStale) for e in events):
            if time.monotonic() > deadline:
                raise AssertionError(f"pa-1 was never reported stale: {events!r}")
            threading.Event().wait(0.02)
        stale = [e.action_id for e in events if isinstance(e, PendingStale)]
        assert stale == ["pa-1"]
        kinds = [(e.type, getattr(e, "action_id", None)) for e in events]
        assert kinds.index(("pending_resolved", "pa-2")) < kinds.index(("pending_stale", "pa-1"))
        other = session.store.get("pa-1")
        assert other is not None and other.stale and "a.py" in other.stale_reason
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == "x = 1\ny = 2\n"
