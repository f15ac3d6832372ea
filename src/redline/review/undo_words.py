"""What ``u`` would undo in a workspace, in words for the person to confirm (the inbox over
a review source asks before it undoes: over every workspace, the apply undone may be in
another workspace than the one the person last looked at)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.review.source import WorkspaceRef


def undo_question(root: Path, workspace: WorkspaceRef | None = None) -> str:
    """``Undo “Edit a.py” (pa-3@g1a2b3c4d5e6: a.py) in /home/me/api?`` for the newest
    apply the journal of ``root`` can undo; "" when there is none (or the journal cannot
    be read: the undo itself then says why)."""
    from redline.termtext import one_line
    from redline.workspace.journal import undo_history

    try:
        history = undo_history(root)
    except Exception:
        return ""
    if not history:
        return ""
    newest = history[0]
    label = one_line(newest.label) if newest.label else "the last apply"
    action = newest.action_id or ""
    if action and workspace is not None:
        action = f"{action}@{workspace.id}"
    files = ", ".join(one_line(f) for f in newest.files[:3])
    if len(newest.files) > 3:
        files += f" and {len(newest.files) - 3} more"
    what = "; ".join(part for part in (action, files) if part)
    where = f"workspace {workspace.id}, {one_line(workspace.path)}" if workspace else str(root)
    return f"Undo “{label}” ({what}) in {where}?"


__all__ = ["undo_question"]
