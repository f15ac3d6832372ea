"""Which of the inbox's keys are live: one frozen value of the facts that decide it.

The inbox screen holds a :class:`Controls` in a reactive declared with ``bindings=True``,
so the footer is refreshed only when a fact really changes; :func:`key_state` answers
Textual's ``check_action`` from it (True: live, None: shown greyed out, False: hidden).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Controls:
    """What decides which resolve and preview keys are live (compared as one value)."""

    has_top: bool = False
    top_stale: bool = False
    busy: bool = False
    selected_stale: bool = False
    selected_has_preview: bool = False
    file_count: int = 0
    has_selected: bool = False
    # How many parts of the selected action the person picked, of how many (0, 0: whole only).
    picked: int = 0
    parts: int = 0
    can_undo: bool = True


def key_state(
    action: str,
    controls: Controls,
    *,
    outside_editor: bool,
    has_rules: bool,
    prompting: bool,
    searching: bool,
    search_open: bool,
) -> bool | None:
    """Whether the inbox key for ``action`` is live (True), greyed out (None) or hidden (False).

    ``outside_editor``: $EDITOR can run (not in a browser); ``has_rules``: the session takes
    session rules; ``prompting``: the agent can take a prompt; ``searching``: a search term
    is set; ``search_open``: the search input is open.
    """
    if action in ("apply_top", "discard_top"):
        # A stale selection keeps y live, so the press can say why nothing happened.
        return None if not controls.has_selected or controls.busy else True
    if action in ("step_hunk", "toggle_part", "edit"):
        return True if controls.parts > 0 else None
    if action == "edit_external":
        return True if controls.parts > 0 and outside_editor else None
    if action == "repreview":
        return True if controls.selected_stale else None
    if action == "always_apply":
        return True if has_rules and controls.selected_has_preview else None
    if action == "step_file":
        return True if controls.file_count > 1 else None
    if action in ("toggle_split", "context"):
        return True if controls.file_count > 0 else None
    if action == "focus_prompt":
        return True if prompting else None
    if action == "undo":
        return None if controls.busy or not controls.can_undo else True
    if action == "search_step":
        # Only shown while a search is open, so the footer names them then.
        return searching
    if action == "close_search":
        return search_open
    return True
