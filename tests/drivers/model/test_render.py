"""The CLI printer reads every recorded event type without guessing keys."""

from __future__ import annotations

import io
import json
from pathlib import Path

from redline.commands.render import EventPrinter
from redline.review.events import event_from_dict

FIXTURE = Path(__file__).parent / "fixtures" / "events.json"
EXAMPLES = [e for group in json.loads(FIXTURE.read_text(encoding="utf-8")).values() for e in group]


def printed(raw: dict[str, object]) -> str:
    out = io.StringIO()
    printer = EventPrinter(out)
    printer(event_from_dict(raw))
    printer(
        event_from_dict({"type": "message_end", "seq": 0, "time": 0, "session_id": "", "text": ""})
    )
    return out.getvalue()


def test_every_recorded_event_prints_without_missing_fields() -> None:
    quiet = {"turn_start", "turn_end", "message_start", "message_end", "usage"}
    for raw in EXAMPLES:
        text = printed(raw)
        assert "None" not in text, (raw["type"], text)
        assert bool(text.strip()) == (raw["type"] not in quiet), (raw["type"], text)


def test_readable_lines_name_the_facts() -> None:
    by_type = {raw["type"]: raw for raw in reversed(EXAMPLES)}  # the first of each type
    assert printed(by_type["pending_pushed"]) == "[pending] pa-1 Edit: app.py [edit] +1 -1\n"
    assert printed(by_type["pending_resolved"]) == (
        "[applied] pa-1 Edit: app.py [edit] by agent: looks right\n"
    )
    by_rule = next(raw for raw in EXAMPLES if raw.get("by") == "rule")
    assert printed(by_rule) == (
        "[discarded] pa-4 Note: draft [custom_tool] by rule no-notes: notes are kept by hand\n"
    )
    assert printed(by_type["agent_end"]) == "== agent end: error (1 pending); agent failed\n"
    assert printed(by_type["undone"]) == "[undone] 000001 (pa-1) Edit: app.py: app.py\n"
