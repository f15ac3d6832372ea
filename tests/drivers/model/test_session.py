from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from tests.drivers.model.helpers import (
    EchoTool,
    PreviewNoteTool,
    ProgrammableProvider,
    SlowProvider,
    call,
    make_session,
    of_type,
    reply,
    types,
)

from redline.drivers.model.providers.base import ForceTool, ToolChoiceRejected
from redline.drivers.model.session import (
    PREVIEW_REMINDER,
    RESOLVE_FIRST,
    RESOLVE_REFUSED,
    SessionError,
)
from redline.review.events import AgentEnd, Notice, PendingPushed, PendingResolved, ToolEnd


def tool_names(request: object) -> set[str]:
    return {t.name for t in request.tools}  # type: ignore[attr-defined]


def test_plain_run_streams_and_ends_done(tmp_path: Path) -> None:
    provider = ProgrammableProvider([reply(call("echo", value="hi")), reply(text="all good")])
    session, events = make_session(tmp_path, provider)
    with session:
        assert session.prompt("say hi") == "done"
    kinds = types(events)
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    end = events[-1]
    assert isinstance(end, AgentEnd) and end.status == "done"
    assert "tool_start" in kinds and "tool_end" in kinds and "message_delta" in kinds
    tool_end = of_type(events, ToolEnd)[0]
    assert tool_end.result.text == "echo hi"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert all(e.session_id == "test-session" for e in events)


def test_agent_resolver_forces_resolve_and_adds_reminder(tmp_path: Path) -> None:
    note = PreviewNoteTool()
    provider = ProgrammableProvider(
        [
            reply(call("note", text="a", call_id="c1"), call("note", text="b", call_id="c2")),
            reply(call("resolve", action="apply", reason="b is fine")),
            reply(call("resolve", action="discard", reason="a is wrong")),
            reply(text="finished"),
        ]
    )
    session, events = make_session(tmp_path, provider, tools=[note, EchoTool()])
    with session:
        assert session.prompt("go") == "done"
    first, second, third, fourth = provider.requests
    assert "resolve" in tool_names(first)
    assert first.tool_choice == "auto"
    assert second.tool_choice == ForceTool("resolve")
    assert third.tool_choice == ForceTool("resolve")
    assert fourth.tool_choice == "auto"
    reminders = [m for m in second.messages if m.role == "user" and m.content == PREVIEW_REMINDER]
    assert len(reminders) == 1
    assert sum(m.content == PREVIEW_REMINDER for m in fourth.messages) == 1
    # LIFO: the second note was on top.
    assert note.applied == [("b", "b is fine")]
    assert note.discarded == [("a", "a is wrong")]
    resolved = of_type(events, PendingResolved)
    assert [(e.action_id, e.action, e.by) for e in resolved] == [
        ("pa-2", "apply", "agent"),
        ("pa-1", "discard", "agent"),
    ]
    pushed = of_type(events, PendingPushed)
    assert [e.label for e in pushed] == ["Note: a", "Note: b"]


def test_forced_turn_refuses_other_tools(tmp_path: Path) -> None:
    echo = EchoTool()
    provider = ProgrammableProvider(
        [
            reply(call("note", text="a")),
            reply(
                call("echo", value="sneaky"),
                call("resolve", action="apply", reason="ok", call_id="c9"),
            ),
            reply(text="done"),
        ]
    )
    session, events = make_session(tmp_path, provider, tools=[PreviewNoteTool(), echo])
    with session:
        assert session.prompt("go") == "done"
    assert echo.calls == []
    ends = [e for e in of_type(events, ToolEnd) if e.name == "echo"]
    assert ends[0].is_error and ends[0].result.text == RESOLVE_FIRST


def test_three_stuck_turns_end_awaiting_review(tmp_path: Path) -> None:
    provider = ProgrammableProvider(
        [reply(call("note", text="a"))] + [reply(call("echo", value=str(i))) for i in range(10)]
    )
    session, _events = make_session(tmp_path, provider)
    with session:
        assert session.prompt("go") == "awaiting_review"
    # one push turn + three ignored forced turns, then the run stops
    assert len(provider.requests) == 4
    assert session.store.count == 1


def test_reply_without_tool_call_while_pending_ends_awaiting_review(tmp_path: Path) -> None:
    provider = ProgrammableProvider([reply(call("note", text="a")), reply(text="I'd rather not")])
    session, events = make_session(tmp_path, provider)
    with session:
        assert session.prompt("go") == "awaiting_review"
    assert of_type(events, AgentEnd)[-1].status == "awaiting_review"


def test_downgrade_forced_choice_on_rejection(tmp_path: Path) -> None:
    def reject_forced(request: object) -> object:
        raise ToolChoiceRejected("400: tool_choice object not supported")

    choices: list[object] = []

    def record(request: object):  # type: ignore[no-untyped-def]
        choices.append(request.tool_choice)  # type: ignore[attr-defined]
        if isinstance(request.tool_choice, ForceTool):  # type: ignore[attr-defined]
            raise ToolChoiceRejected("tool_choice must be auto or required")
        return reply(call("resolve", action="apply", reason="ok"))

    provider = ProgrammableProvider(
        [reply(call("note", text="a")), record, record, reply(text="done")]
    )
    session, events = make_session(tmp_path, provider)
    with session:
        assert session.prompt("go") == "done"
    assert choices == [ForceTool("resolve"), "required"]
    assert any("required" in e.message for e in of_type(events, Notice))


def test_provider_that_cannot_force_starts_with_required(tmp_path: Path) -> None:
    provider = ProgrammableProvider(
        [
            reply(call("note", text="a")),
            reply(call("resolve", action="apply", reason="ok")),
            reply(text="x"),
        ],
        can_force_tool=False,
    )
    session, _ = make_session(tmp_path, provider)
    with session:
        session.prompt("go")
    assert provider.requests[1].tool_choice == "required"


def test_human_resolver_never_offers_resolve_and_reports_resolutions(tmp_path: Path) -> None:
    note = PreviewNoteTool()
    provider = ProgrammableProvider(
        [
            reply(call("note", text="a", call_id="c1"), call("note", text="b", call_id="c2")),
            reply(text="thanks"),
        ]
    )
    session, events = make_session(tmp_path, provider, resolver="human", tools=[note])
    with session:
        assert session.prompt("go") == "awaiting_review"
        assert "resolve" not in tool_names(provider.requests[0])
        assert session.resume() == "awaiting_review"  # still pending: returns at once
        assert len(provider.requests) == 1
        first = session.resolve("apply", "b looks right")
        assert not first.is_error and note.applied == [("b", "b looks right")]
        stale_guard = session.resolve("discard", "nope", action_id="pa-2")
        assert stale_guard.is_error and "pa-2 is no longer pending" in stale_guard.text
        assert note.discarded == []
        assert not session.resolve("discard", "a is not needed", action_id="pa-1").is_error
        assert session.resume() == "done"
    report = [
        m for m in provider.requests[1].messages if m.role == "user" and "resolved" in m.content
    ]
    assert len(report) == 1
    assert "applied pa-2 (Note: b). Reason: b looks right" in report[0].content
    assert "discarded pa-1 (Note: a). Reason: a is not needed" in report[0].content
    resolved = of_type(events, PendingResolved)
    assert {e.by for e in resolved} == {"human"}


def test_human_resolver_refuses_model_resolve_call(tmp_path: Path) -> None:
    provider = ProgrammableProvider(
        [reply(call("resolve", action="apply", reason="me")), reply(text="ok")]
    )
    session, events = make_session(tmp_path, provider, resolver="human")
    with session:
        session.prompt("go")
    end = of_type(events, ToolEnd)[0]
    assert end.is_error and end.result.text == RESOLVE_REFUSED


@pytest.mark.parametrize(("resolver", "verb"), [("apply-all", "apply"), ("discard-all", "discard")])
def test_auto_resolvers(tmp_path: Path, resolver: str, verb: str) -> None:
    note = PreviewNoteTool()
    provider = ProgrammableProvider([reply(call("note", text="a")), reply(text="fine")])
    session, events = make_session(tmp_path, provider, resolver=resolver, tools=[note])  # type: ignore[arg-type]
    with session:
        assert session.prompt("go") == "done"
    resolved = of_type(events, PendingResolved)
    assert [(e.action, e.by) for e in resolved] == [(verb, "auto")]
    expected = (
        "auto-applied by --resolver apply-all"
        if verb == "apply"
        else "auto-discarded by --resolver discard-all"
    )
    assert resolved[0].reason == expected
    assert "resolve" not in tool_names(provider.requests[0])


def test_max_turns(tmp_path: Path) -> None:
    provider = ProgrammableProvider([reply(call("echo", value=str(i))) for i in range(10)])
    session, _events = make_session(tmp_path, provider, max_turns=3)
    with session:
        assert session.prompt("loop") == "max_turns"
    assert len(provider.requests) == 3


def test_abort_stops_the_run_and_prompt_while_running_is_an_error(tmp_path: Path) -> None:
    session, events = make_session(tmp_path, SlowProvider())
    statuses: list[str] = []
    worker = threading.Thread(target=lambda: statuses.append(session.prompt("go")))
    worker.start()
    deadline = time.monotonic() + 60  # hang guard
    while not any(e.type == "message_delta" for e in events) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert session.running
    with pytest.raises(SessionError):
        session.prompt("again")
    session.abort()
    # The provider would sleep for 600 s: only the abort ends the run within the hang guard.
    worker.join(60)
    assert not worker.is_alive()
    assert statuses == ["aborted"]
    session.close()


def test_unknown_tool_and_bad_arguments_are_error_results(tmp_path: Path) -> None:
    provider = ProgrammableProvider(
        [reply(call("nope", call_id="c1"), call("echo", call_id="c2", value=3)), reply(text="ok")]
    )
    session, events = make_session(tmp_path, provider)
    with session:
        session.prompt("go")
    ends = of_type(events, ToolEnd)
    assert ends[0].is_error and "Unknown tool 'nope'" in ends[0].result.text
    assert ends[1].is_error and "Invalid arguments for echo" in ends[1].result.text
