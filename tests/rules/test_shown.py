"""A rule's resolution reads ``by rule NAME`` in the activity log and in exec's output."""

from __future__ import annotations

import io

from redline.agent.events import Event
from redline.agent.render import EventPrinter, resolver_name
from redline.tui.activity_format import format_event

RESOLVED = {
    "action_id": "pa-1",
    "action": "discard",
    "reason": "hand-written",
    "by": "rule",
    "rule": "migrations",
    "label": "Write: migrations/1.py",
    "source_tool_name": "write",
    "result": {"content": [{"type": "text", "text": "Discarded"}], "is_error": False},
}


def test_resolver_name() -> None:
    assert resolver_name(RESOLVED) == "rule migrations"
    assert resolver_name({"by": "human"}) == "human"


def test_activity_log_says_by_rule() -> None:
    lines = format_event("pending_resolved", RESOLVED, {})
    assert "by rule migrations" in lines[0].plain


def test_exec_output_says_by_rule() -> None:
    out = io.StringIO()
    EventPrinter(out)(Event("pending_resolved", 1, 0.0, "s", RESOLVED))
    assert "by rule migrations: hand-written" in out.getvalue()
