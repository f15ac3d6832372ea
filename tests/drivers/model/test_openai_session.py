"""The session loop against the real openai client and a fake server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.drivers.model.helpers import PreviewNoteTool, make_session, of_type, types
from tests.drivers.model.providers.fake_openai import FakeOpenAI

from redline.drivers.model.providers.openai_provider import OpenAIProvider
from redline.drivers.model.session import PREVIEW_REMINDER
from redline.review.events import ErrorEvent, MessageDelta, Notice

FORCED = {"type": "function", "function": {"name": "resolve"}}


def provider(fake: FakeOpenAI) -> OpenAIProvider:
    return OpenAIProvider("test-model", base_url=fake.base_url, timeout=5.0, max_retries=2)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_forced_resolve_while_pending_and_absent_afterwards(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    note = PreviewNoteTool()
    fake_openai.enqueue_tool_calls([("c1", "note", {"text": "a"})], text="Queuing a note.")
    fake_openai.enqueue_tool_calls([("c2", "resolve", {"action": "apply", "reason": "fine"})])
    fake_openai.enqueue_text("All done.")
    session, events = make_session(tmp_path, provider(fake_openai), tools=[note])
    with session:
        assert session.prompt("write a note") == "done"
    first, second, third = fake_openai.requests
    assert "resolve" in tool_names(first)
    assert "tool_choice" not in first
    assert second["tool_choice"] == FORCED
    assert user_texts(second)[-1] == PREVIEW_REMINDER
    tool_msg = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_msg["tool_call_id"] == "c1"
    assert tool_msg["content"].startswith("Preview only: nothing has been written yet.")
    assert "tool_choice" not in third
    assert note.applied == [("a", "fine")]
    deltas = "".join(e.text for e in of_type(events, MessageDelta))
    assert "Queuing a note." in deltas and "All done." in deltas
    assert "usage" in types(events)


def test_400_on_forced_choice_downgrades_to_required(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue_tool_calls([("c1", "note", {"text": "a"})])
    fake_openai.enqueue_error(400, "tool_choice of type 'function' is not supported by this server")
    fake_openai.enqueue_tool_calls([("c2", "resolve", {"action": "discard", "reason": "meh"})])
    fake_openai.enqueue_text("ok")
    session, events = make_session(tmp_path, provider(fake_openai))
    with session:
        assert session.prompt("go") == "done"
    bodies = fake_openai.requests
    assert bodies[1]["tool_choice"] == FORCED
    assert bodies[2]["tool_choice"] == "required"
    assert PREVIEW_REMINDER in user_texts(bodies[2])
    assert "tool_choice" not in bodies[3]
    assert any("'required'" in e.message for e in of_type(events, Notice))


def test_5xx_is_retried(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue_error(503, "overloaded")
    fake_openai.enqueue_text("hello")
    session, events = make_session(tmp_path, provider(fake_openai))
    with session:
        assert session.prompt("hi") == "done"
    assert len(fake_openai.requests) == 2
    assert not any(e.type == "error" for e in events)


def test_human_resolver_hides_resolve_and_reports_resolutions(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    note = PreviewNoteTool()
    fake_openai.enqueue_tool_calls([("c1", "note", {"text": "a"})])
    fake_openai.enqueue_text("Understood.")
    session, _events = make_session(tmp_path, provider(fake_openai), resolver="human", tools=[note])
    with session:
        assert session.prompt("go") == "awaiting_review"
        assert len(fake_openai.requests) == 1
        result = session.resolve("discard", "we keep notes elsewhere")
        assert result.text == "Discarded: Note: a. Reason: we keep notes elsewhere"
        assert session.resume() == "done"
    first, second = fake_openai.requests
    assert "resolve" not in tool_names(first) and "resolve" not in tool_names(second)
    assert "tool_choice" not in second
    report = user_texts(second)[-1]
    assert "discarded pa-1 (Note: a). Reason: we keep notes elsewhere" in report
    assert note.discarded == [("a", "we keep notes elsewhere")]


def test_unreachable_server_is_one_error_event(tmp_path: Path) -> None:
    dead = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", timeout=2.0, max_retries=0)
    session, events = make_session(tmp_path, dead)
    with session:
        assert session.prompt("hi") == "error"
    errors = of_type(events, ErrorEvent)
    assert len(errors) == 1 and "127.0.0.1:9" in errors[0].message
