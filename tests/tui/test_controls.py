"""Which inbox keys are live, from the facts alone (no app): :func:`key_state`."""

from __future__ import annotations

from typing import Any

from redline.tui.controls import Controls, key_state

IDLE: dict[str, Any] = {
    "outside_editor": True,
    "has_rules": False,
    "prompting": True,
    "searching": False,
    "search_open": False,
}


def test_a_stale_selection_keeps_y_live_and_busy_greys_it_out() -> None:
    stale = Controls(has_top=True, top_stale=True, has_selected=True, selected_stale=True)
    assert key_state("apply_top", stale, **IDLE) is True
    assert key_state("repreview", stale, **IDLE) is True
    busy = Controls(has_selected=True, busy=True)
    assert key_state("apply_top", busy, **IDLE) is None
    assert key_state("undo", busy, **IDLE) is None
    assert key_state("apply_top", Controls(), **IDLE) is None


def test_hunk_file_and_editor_keys_follow_the_preview() -> None:
    whole = Controls(has_selected=True, file_count=0, parts=0)
    for action in ("step_hunk", "toggle_part", "edit", "edit_external", "toggle_split"):
        assert key_state(action, whole, **IDLE) is None
    parts = Controls(has_selected=True, file_count=2, parts=3)
    assert key_state("edit_external", parts, **IDLE) is True
    assert key_state("edit_external", parts, **{**IDLE, "outside_editor": False}) is None
    assert key_state("step_file", parts, **IDLE) is True
    assert key_state("step_file", Controls(file_count=1), **IDLE) is None


def test_search_prompt_and_rule_keys() -> None:
    assert key_state("search_step", Controls(), **IDLE) is False
    assert key_state("search_step", Controls(), **{**IDLE, "searching": True}) is True
    assert key_state("close_search", Controls(), **{**IDLE, "search_open": True}) is True
    assert key_state("focus_prompt", Controls(), **{**IDLE, "prompting": False}) is None
    previewed = Controls(has_selected=True, selected_has_preview=True)
    assert key_state("always_apply", previewed, **IDLE) is None
    assert key_state("always_apply", previewed, **{**IDLE, "has_rules": True}) is True
    assert key_state("help", Controls(), **IDLE) is True
