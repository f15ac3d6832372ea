"""Which of the inbox's keys are live: one frozen value of the facts that decide it.

The inbox screen holds a :class:`Controls` in a reactive declared with ``bindings=True``,
so the footer is refreshed only when a fact really changes; :func:`key_state` answers
Textual's ``check_action`` from it (True: live, None: shown greyed out, False: hidden).
"""

from __future__ import annotations

from dataclasses import dataclass

BUSY_REFUSAL = "Still resolving the previous action: wait for it to finish."


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
    # How many actions are marked (space in the stack) for one y / n on them all.
    marked: int = 0
    selected_id: str = ""
    # Why the selected action's hunks cannot be picked, edited or re-previewed ("": they
    # can): another process's action may allow less than the session's own.
    parts_refusal: str = ""
    edit_refusal: str = ""
    repreview_refusal: str = ""
    # What the review source cannot do at all, and why ("": it can): the team queue undoes,
    # marks, runs checks and takes session rules nowhere, and runs no agent to prompt.
    undo_refusal: str = ""
    marks_refusal: str = ""
    checks_refusal: str = ""
    rules_refusal: str = ""
    prompt_refusal: str = ""
    # The selected action is shown as a diff its source mirrored (no file contents): why
    # its hunks, files, split view and context cannot be stepped or changed.
    view_refusal: str = ""


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
    refused = _source_refusal(action, controls)
    if refused:
        return None
    if action in ("apply_top", "discard_top"):
        # A stale selection keeps y live, so the press can say why nothing happened.
        if controls.busy:
            return None
        return True if controls.has_selected or controls.marked else None
    if action == "step_hunk":
        return True if controls.parts > 0 else None
    if action == "toggle_part":
        return True if controls.parts > 0 and not controls.parts_refusal else None
    if action == "edit":
        return True if controls.parts > 0 and not controls.edit_refusal else None
    if action == "edit_external":
        live = controls.parts > 0 and outside_editor and not controls.edit_refusal
        return True if live else None
    if action == "repreview":
        return True if controls.selected_stale and not controls.repreview_refusal else None
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


def _source_refusal(action: str, controls: Controls) -> str:
    """Why the review source cannot do ``action`` at all ("" when it can)."""
    if action == "undo":
        return controls.undo_refusal
    if action == "toggle_mark":
        return controls.marks_refusal
    if action in ("run_checks", "discard_citing_checks"):
        return controls.checks_refusal
    if action == "always_apply":
        return controls.rules_refusal
    if action == "focus_prompt":
        return controls.prompt_refusal
    if action in ("step_hunk", "step_file", "toggle_split", "context"):
        return controls.view_refusal
    return ""


def refusal(
    action: str,
    controls: Controls,
    *,
    outside_editor: bool,
    has_rules: bool,
    prompting: bool,
) -> str:
    """Why the greyed-out key for ``action`` does nothing now (empty: no reason to give).

    The inbox says it when such a key is pressed, so no key is ever refused silently.
    """
    refused = _source_refusal(action, controls)
    if refused:
        return refused
    selected = controls.selected_id
    nothing = (
        "Nothing is selected: pick an action with j / k (g: the top)."
        if controls.has_top
        else "Nothing is pending."
    )
    if controls.busy and action in ("apply_top", "discard_top", "undo"):
        return BUSY_REFUSAL
    if action in ("apply_top", "discard_top"):
        return nothing
    if not controls.has_selected and action in (
        "step_hunk",
        "toggle_part",
        "edit",
        "edit_external",
        "repreview",
        "always_apply",
        "step_file",
        "toggle_split",
        "context",
    ):
        return nothing
    if action == "toggle_part" and controls.parts_refusal:
        return controls.parts_refusal
    if action in ("edit", "edit_external") and controls.edit_refusal:
        return controls.edit_refusal
    if action == "repreview" and controls.repreview_refusal:
        return controls.repreview_refusal
    if action in ("step_hunk", "toggle_part", "edit", "edit_external"):
        if controls.parts == 0:
            return f"{selected} has no file preview: it applies or discards only as a whole."
        return "$EDITOR cannot run in a browser: edit in the dashboard with e."
    if action == "repreview":
        return f"{selected} is not stale: its preview still matches the files."
    if action == "always_apply":
        if not has_rules:
            return "This session takes no session rules."
        return "Only changes to files can get a session rule."
    if action == "step_file":
        return f"{selected} changes only one file."
    if action in ("toggle_split", "context"):
        return f"{selected} has no file changes to show."
    if action == "focus_prompt" and not prompting:
        return "The agent has ended: it cannot take a prompt."
    if action == "undo":
        return "Nothing to undo: the journal has no apply left to revert."
    return ""
