"""The exact texts the model receives when a person resolves part of an action.

Whole-action texts (``Applied: <label>.``, ``Discarded: <label>. Reason: <reason>``) live
in :mod:`redline.review.resolve` and are unchanged. These are listed verbatim in
docs/resolve-runtime.md; change them only together.
"""

from __future__ import annotations

from collections.abc import Sequence

from redline.workspace.hunks import PartialApply, PartialDiscard, Unit
from redline.workspace.preview import FileCreate, FileModify, Preview
from redline.workspace.rebase import RebaseResult

__all__ = [
    "applied_edited_text",
    "applied_partial_text",
    "conflict_reason",
    "counted",
    "discarded_partial_text",
    "edit_diff",
    "partial_apply_text",
    "partial_discard_text",
    "rebased_text",
    "remaining_label",
    "whole_only_text",
]


def remaining_label(original_label: str, remaining: int, total: int) -> str:
    """``<original label> (remaining: K of N hunks)``; always from the original label."""
    return f"{original_label} (remaining: {remaining} of {total} hunks)"


def applied_partial_text(
    label: str,
    reason: str,
    applied: int,
    total: int,
    remaining_id: str,
    remaining: Sequence[Unit],
) -> str:
    """``Applied K of N hunks: <label>. Reason: <reason>`` and one line per unit left.

    ``remaining`` are the new action's units (its numbering, lines as on disk now):
    ``Still pending as <id>: <path> hunk <i> (lines a–b)``.
    """
    lines = [f"Applied {applied} of {total} hunks: {label}. Reason: {reason}"]
    lines.extend(f"Still pending as {remaining_id}: {unit.describe()}" for unit in remaining)
    return "\n".join(lines)


def discarded_partial_text(label: str, reason: str, discarded: Sequence[Unit], total: int) -> str:
    """``Discarded K of N hunks: <label>. Reason: <reason>`` and one line per dropped unit.

    ``discarded`` are the units as numbered in the discarded-from action, with their
    lines in the file on disk (a discard writes nothing): ``<path> hunk <i> (lines a–b)``.
    """
    lines = [f"Discarded {len(discarded)} of {total} hunks: {label}. Reason: {reason}"]
    lines.extend(unit.describe() for unit in discarded)
    return "\n".join(lines)


def partial_apply_text(split: PartialApply, label: str, reason: str, remaining_id: str) -> str:
    """:func:`applied_partial_text` for a split whose remaining action is ``remaining_id``."""
    return applied_partial_text(
        label, reason, len(split.selected_units), split.total, remaining_id, split.remaining_units
    )


def partial_discard_text(split: PartialDiscard, label: str, reason: str) -> str:
    """:func:`discarded_partial_text` for a split."""
    return discarded_partial_text(label, reason, split.discarded_units, split.total)


def _texts(preview: Preview) -> dict[str, str]:
    return {
        change.path: change.new_text
        for change in preview.changes
        if isinstance(change, (FileModify, FileCreate))
    }


def edit_diff(proposal: Preview, edited: Preview) -> str:
    """The unified diff from the model's proposed texts to the person's, file by file."""
    proposed = _texts(proposal)
    out: list[str] = []
    for path, text in _texts(edited).items():
        before = proposed.get(path)
        if before is None or before == text:
            continue
        change = FileModify(path, "", before, text)
        diff = Preview([change]).file_diff(change)
        body = diff.split("\n", 2)[2]  # past git's "--- a/..." and "+++ b/..." headers
        out.append(f"--- proposed/{path}\n+++ written/{path}\n{body}")
    return "".join(out)


def applied_edited_text(label: str, reason: str, proposal: Preview, edited: Preview) -> str:
    """``Applied with your proposal edited by the reviewer: <label>. Reason: <reason>``,
    then the unified diff from the model's proposal to what was written."""
    return (
        f"Applied with your proposal edited by the reviewer: {label}. Reason: {reason}\n"
        f"{edit_diff(proposal, edited)}"
    )


def rebased_text(old_id: str, new_id: str, onto_id: str) -> str:
    """The activity line for a carried-over action: ``rebased pa-4 as pa-9 onto pa-6``."""
    return f"rebased {old_id} as {new_id} onto {onto_id}"


def conflict_reason(result: RebaseResult) -> str:
    """The stale reason of an action that could not be re-based (conflicting hunks named)."""
    return f"conflicts with a change applied out of order: {result.describe()}"


def whole_only_text(action_id: str, label: str) -> str:
    """Why a selection is refused for an action without a preview (its apply is code)."""
    return (
        f"{action_id} ({label}) has no preview of file changes; it can only be applied or "
        "discarded as a whole. Nothing was applied or discarded."
    )


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 line``, ``2 lines``: a count with its noun in the right number."""
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"
