"""The activity log's lines for every recorded event type (no guessed or missing keys)."""

from __future__ import annotations

import json
from pathlib import Path

from redline.review.events import event_from_dict
from redline.tui.activity_format import format_event

FIXTURE = Path(__file__).parents[1] / "drivers" / "model" / "fixtures" / "events.json"
EXAMPLES = [e for group in json.loads(FIXTURE.read_text(encoding="utf-8")).values() for e in group]
QUIET = {"turn_start", "turn_end", "message_start", "message_delta", "message_end", "usage"}


def lines(raw: dict[str, object]) -> list[str]:
    return [line.plain for line in format_event(event_from_dict(raw), {})]


def test_every_recorded_event_reads_without_missing_fields() -> None:
    for raw in EXAMPLES:
        text = "\n".join(lines(raw))
        assert "None" not in text, (raw["type"], text)
        assert bool(text) == (raw["type"] not in QUIET), (raw["type"], text)


def test_failed_resolution_block_names_label_source_and_reason() -> None:
    failed = next(raw for raw in EXAMPLES if raw.get("failed"))
    text = "\n".join(lines(failed))
    assert "APPLY FAILED" in text and "Write: notes.md" in text and " write " in text
    assert "reason: try anyway" in text and "by human" in text
    assert "it is stale" in text


def test_an_undo_names_its_entry_and_the_action_it_came_from() -> None:
    undone = {
        "type": "undone",
        "seq": 1,
        "time": 0.0,
        "session_id": "s",
        "entry_id": "000003",
        "label": "Edit: app.py",
        "files": ["app.py"],
    }
    assert lines({**undone, "action_id": "pa-7"}) == ["↶ undone 000003 (pa-7) Edit: app.py"]
    # Journal entries written before actions had ids name only the entry.
    assert lines(undone) == ["↶ undone 000003 Edit: app.py"]


def test_a_resolution_says_its_reason_once() -> None:
    from redline.tui.activity_format import resolution_block

    block = resolution_block(
        "apply",
        "Batch rename: 3 files",
        "batch_rename_preview",
        "no reason given",
        by="human",
        result_text="Renamed 3 files. Reason: no reason given",
    )
    text = "\n".join(line.plain for line in block)
    assert text.count("no reason given") == 1
    assert "reason: no reason given" in text and "Renamed 3 files." in text
    # A result that only repeats the reason adds no line; one that says more keeps it.
    only = resolution_block("discard", "x", "edit", "dup", result_text="Reason: dup")
    assert [line.plain for line in only][1:] == ["   reason: dup"]
    other = resolution_block("apply", "x", "edit", "ok", result_text="Applied x. Reason: other")
    assert other[-1].plain == "   Applied x. Reason: other"


def test_a_carriage_return_in_a_label_or_result_is_shown_not_taken_as_a_break() -> None:
    """An agent's ``\\r`` (or another character ``str.splitlines`` breaks at) is shown in
    the activity, and the text after it is not cut off: only ``\\n`` ends a line there."""
    from redline.tui.activity_format import resolution_block

    label = "Fix \x1b[31mred\x1b[0m\r label"
    for failed in (False, True):
        block = resolution_block(
            "discard",
            label,
            "propose_edit",
            "no",
            result_text=f"Discarded: {label}.\x0b tail\ncomment line",
            failed=failed,
            origin="mcp:cursor",
        )
        head, _reason, outcome = (line.plain for line in block[:3])
        assert "Fix \\x1b[31mred\\x1b[0m\\x0d label" in head
        assert "\\x0d label." in outcome and "\\x0b tail" in outcome
        assert "\r" not in "".join(line.plain for line in block)


def test_a_results_first_line_ends_at_a_newline_only() -> None:
    from redline.review.describe import first_line
    from redline.review.result import ToolResult

    result = ToolResult.text_result("Applied x\r label.\nmore")
    assert first_line(result) == "Applied x\r label."
    assert first_line(ToolResult.text_result("  ")) == ""
