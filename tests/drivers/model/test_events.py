"""The wire shape of every event type, pinned against examples recorded from real runs.

``fixtures/events.json`` was recorded by ``tests/drivers/model/record_events.py`` before the events
became typed; ``to_dict()`` must still produce exactly those records (keys, order, values).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from redline.review import events as ev
from redline.review.events import (
    AgentState,
    EventFormatError,
    EventStream,
    Notice,
    PendingPushed,
    ResolutionFailed,
    UnknownEvent,
    event_from_dict,
)
from redline.review.session_log import SessionLog, read_log

FIXTURE = Path(__file__).parent / "fixtures" / "events.json"
RECORDED: dict[str, list[dict[str, Any]]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
EXAMPLES = [example for group in RECORDED.values() for example in group]


def _classes() -> list[type[ev.Event]]:
    # The built-in classes (redline.drivers.acp registers its own, pinned in tests/drivers/acp_client).
    return [
        cls for group in ev._REGISTRY.values() for cls in group if cls.__module__ == ev.__name__
    ]


@pytest.mark.parametrize("raw", EXAMPLES, ids=lambda raw: f"{raw['type']}-{raw['seq']}")
def test_recorded_example_round_trips_exactly(raw: dict[str, Any]) -> None:
    event = event_from_dict(raw)
    assert event.type == raw["type"]
    assert event.to_dict() == raw
    # Same key order too, so `exec --json` lines read as before.
    assert json.dumps(event.to_dict()) == json.dumps(raw)


def test_every_event_class_has_a_recorded_example() -> None:
    recorded = {type(event_from_dict(raw)) for raw in EXAMPLES}
    assert recorded == set(_classes())
    assert set(RECORDED) == ev.EVENT_TYPES


def test_failed_resolution_is_a_notice_on_the_wire() -> None:
    failed, plain = RECORDED["notice"][0], RECORDED["notice"][1]
    assert isinstance(event_from_dict(failed), ResolutionFailed)
    assert isinstance(event_from_dict(plain), Notice)
    # It carries every fact the dashboard shows (the old fake's notice lacked two).
    assert {"reason", "label", "source_tool_name"} <= set(failed)


def test_emit_stamps_seq_time_and_session() -> None:
    stream = EventStream("s-1", clock=lambda: 12.5)
    seen: list[ev.Event] = []
    stream.subscribe(seen.append)
    first = stream.emit(Notice(message="hello"))
    second = stream.emit(Notice(message="again"))
    assert (first.seq, first.time, first.session_id) == (1, 12.5, "s-1")
    assert second.seq == 2
    # Sending a delivered event again sends a stamped copy; the first one never changes.
    again = stream.emit(first)
    assert (again.seq, first.seq) == (3, 1) and again.message == "hello"
    assert seen == [first, second, again]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.message = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"type": "pending_pushed", "seq": 1, "time": 0, "session_id": ""}, "action_id"),
        (
            {**RECORDED["agent_end"][0], "status": "finished"},
            "'status'",
        ),
        ({**RECORDED["usage"][0], "input_tokens": "many"}, "'input_tokens'"),
        ({**RECORDED["tool_end"][0], "result": {"content": 3}}, "'result'"),
        (["not", "an", "object"], "must be an object"),
    ],
)
def test_bad_records_name_the_type_and_field(raw: Any, words: str) -> None:
    with pytest.raises(EventFormatError, match=words):
        event_from_dict(raw)


def test_log_replay_passes_newer_types_through_and_skips_broken_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = SessionLog(path, {"session_id": "s"})
    stream = EventStream("s", clock=lambda: 1.0)
    stream.subscribe(log.write_event)
    stream.emit(
        PendingPushed(action_id="pa-1", label="Edit: a.py", source_tool_name="edit", preview=None)
    )
    log.close()
    future = {"type": "queue_moved", "seq": 2, "time": 1.0, "session_id": "s", "to": 3}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(future) + "\n")
        handle.write(json.dumps({"type": "usage", "seq": 3}) + "\n")  # missing fields
        handle.write('{"type": "notice", "seq": 4, "mess')  # torn last line
    _header, events = read_log(path)
    replayed = list(events)
    assert [type(e) for e in replayed] == [PendingPushed, UnknownEvent]
    assert replayed[1].to_dict() == future
    assert replayed[1].type == "queue_moved"


def test_state_after_each_run_status() -> None:
    assert AgentState.after("done") is AgentState.IDLE
    assert AgentState.after("awaiting_review") is AgentState.WAITING_FOR_REVIEW
    assert AgentState.after("aborted") is AgentState.STOPPED
    assert AgentState.after("max_turns") is AgentState.STOPPED
    assert AgentState.after("error") is AgentState.FAILED
    assert AgentState.WAITING_FOR_REVIEW == "waiting for review"


def test_a_new_event_type_is_one_dataclass() -> None:
    @dataclasses.dataclass(frozen=True)
    class Pinged(ev.Event):
        TYPE = "test_pinged_only"
        count: int

    try:
        ev.register(Pinged)
        raw = {"type": "test_pinged_only", "seq": 1, "time": 0.0, "session_id": "", "count": 2}
        assert event_from_dict(raw) == Pinged(count=2, seq=1)
        assert Pinged(count=2, seq=1).to_dict() == raw
        with pytest.raises(TypeError, match="twice"):
            ev.register(Pinged)
    finally:
        ev._REGISTRY.pop("test_pinged_only", None)
