"""A rule's resolution reads ``by rule NAME`` in the activity log and in exec's output."""

from __future__ import annotations

import io

from redline.commands.render import EventPrinter
from redline.review import describe
from redline.review.events import PendingResolved, ResolutionFailed, event_from_dict
from redline.review.result import ToolResult
from redline.tui.activity_format import format_event

RESOLVED = PendingResolved(
    action_id="pa-1",
    action="discard",
    reason="hand-written",
    by="rule",
    rule="migrations",
    label="Write: migrations/1.py",
    source_tool_name="write",
    result=ToolResult.text_result("Discarded"),
)

FAILED = ResolutionFailed(
    message="Refused to apply Write: migrations/1.py: it is stale (changed on disk).",
    action_id="pa-1",
    action="apply",
    reason="",
    label="Write: migrations/1.py",
    source_tool_name="write",
    by="rule",
    rule="migrations",
)


def test_resolver_wording() -> None:
    assert describe.resolver("rule", "migrations") == "rule migrations"
    assert describe.resolver("human") == "human"
    assert describe.resolver("human", "migrations") == "human"  # a rule name only with by rule


def test_activity_log_says_by_rule() -> None:
    lines = format_event(RESOLVED, {})
    assert "by rule migrations" in lines[0].plain


def test_activity_log_says_by_rule_for_a_refused_resolution() -> None:
    lines = format_event(FAILED, {})
    assert "by rule migrations" in lines[0].plain
    assert any("it is stale" in line.plain for line in lines)


def test_exec_output_says_by_rule() -> None:
    out = io.StringIO()
    EventPrinter(out)(RESOLVED)
    assert "by rule migrations: hand-written" in out.getvalue()


def test_the_rule_is_on_the_wire_only_when_set() -> None:
    wire = RESOLVED.to_dict()
    assert (wire["by"], wire["rule"]) == ("rule", "migrations")
    assert event_from_dict(wire) == RESOLVED
    failed = FAILED.to_dict()
    assert (failed["type"], failed["failed"], failed["rule"]) == ("notice", True, "migrations")
    assert event_from_dict(failed) == FAILED
    by_person = PendingResolved(
        action_id="pa-2",
        action="apply",
        reason="",
        by="human",
        label="Write: a.py",
        source_tool_name="write",
        result=ToolResult.text_result("Applied"),
    )
    assert "rule" not in by_person.to_dict()
    assert event_from_dict(by_person.to_dict()) == by_person
