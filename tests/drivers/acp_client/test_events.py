"""The ACP events are typed events of the one stream: pinned wire shape, both printers."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from redline.commands.render import EventPrinter
from redline.drivers.acp import events as acp_events
from redline.review import events as ev
from redline.review.events import Notice, event_from_dict
from redline.tui.activity_format import format_event

FIXTURE = Path(__file__).parent / "fixtures" / "events.json"
RECORDED: dict[str, list[dict[str, Any]]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
EXAMPLES = [example for group in RECORDED.values() for example in group]


def _acp_classes() -> set[type[ev.Event]]:
    return {
        cls
        for group in ev._REGISTRY.values()
        for cls in group
        if cls.__module__ == acp_events.__name__
    }


@pytest.mark.parametrize("raw", EXAMPLES, ids=lambda raw: f"{raw['type']}-{raw['seq']}")
def test_example_round_trips_exactly(raw: dict[str, Any]) -> None:
    event = event_from_dict(raw)
    assert json.dumps(event.to_dict()) == json.dumps(raw)


def test_every_acp_class_is_registered_and_has_an_example() -> None:
    assert {type(event_from_dict(raw)) for raw in EXAMPLES} == _acp_classes()
    assert len(_acp_classes()) == 10


def test_agent_notice_is_a_notice_with_facts() -> None:
    (raw,) = RECORDED["notice"]
    event = event_from_dict(raw)
    assert isinstance(event, acp_events.AcpNotice) and isinstance(event, Notice)
    assert (event.path, event.entry_id) == ("app.py", "j-1")
    # A plain notice is still read as the built-in class.
    plain = {k: raw[k] for k in ("type", "seq", "time", "session_id", "message")}
    assert type(event_from_dict(plain)) is Notice


def test_the_exec_printer_shows_acp_activity() -> None:
    out = io.StringIO()
    printer = EventPrinter(out)
    for raw in EXAMPLES:
        printer(event_from_dict(raw))
    text = out.getvalue()
    assert "None" not in text
    assert "agent: Hello\nthinking: thinking hard\n" in text
    assert "-> [edit] Edit app.py (pending)\n" in text
    assert "   Edit app.py: completed\n" in text
    assert "plan:\n  [completed] read\n  [pending] edit\n" in text
    assert "usage: 1200 of 200000 tokens\n" in text
    assert "== agent process exited with status 0\n" in text
    assert "scripted agent started" not in text
    assert "note: The agent wrote app.py itself" in text


def test_the_activity_log_shows_acp_activity() -> None:
    names: dict[str, str] = {}
    shown = {
        raw["type"]: "\n".join(line.plain for line in format_event(event_from_dict(raw), names))
        for raw in EXAMPLES
    }
    assert "None" not in "".join(shown.values())
    # Text is streamed by the log itself; thoughts, usage and stderr stay in the session log.
    quiet = {"acp_message", "acp_thought", "acp_usage", "acp_stderr"}
    assert {kind for kind, text in shown.items() if not text} == quiet
    assert shown["acp_tool_call"].startswith("→ edit: Edit app.py")
    assert shown["acp_tool_call_update"] == "← edit: Edit app.py completed"
    assert "[pending] edit" in shown["acp_plan"]
