"""The question before quitting with actions pending (ctrl+q; ctrl+q again quits anyway)."""

from __future__ import annotations

from collections.abc import Iterable

from redline.review.store import PendingAction
from redline.termtext import one_line
from redline.tui.screens.confirm import ConfirmScreen


def quit_question(actions: Iterable[PendingAction]) -> str:
    """What quitting does to ``actions``: previews stay queued, owner actions end here."""
    pending = list(actions)
    owner = [action for action in pending if action.preview is None]
    queued = len(pending) - len(owner)
    lines = []
    if queued:
        noun = "action stays" if queued == 1 else "actions stay"
        lines.append(
            f"{queued} preview {noun} queued: review {'it' if queued == 1 else 'them'} "
            "later here or with `redline pending`."
        )
    if owner:
        lines.append("These actions end with this process (their tool runs here):")
        lines.extend(f"  {action.id} {one_line(action.label)}" for action in owner)
    lines.append("Quit anyway?")
    return "\n".join(lines)


class QuitScreen(ConfirmScreen):
    """Dismissed with True to quit; the app's ctrl+q on it calls :meth:`quit_anyway`."""

    def __init__(self, actions: Iterable[PendingAction]) -> None:
        super().__init__(quit_question(actions), yes="Quit", no="Stay", name="quit-question")

    def quit_anyway(self) -> None:
        """ctrl+q again on the question means "quit anyway", never a second question."""
        self.dismiss(True)
