"""The inbox's search keys: ``/`` searches the focused log or the diff, F3 steps through
the matches, Escape closes the bar and gives the focus back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen
from textual.widget import Widget

from redline.tui.widgets.activity_log import ActivityLog
from redline.tui.widgets.diff_view import DiffView
from redline.tui.widgets.search_input import Searchable, SearchInput

if TYPE_CHECKING:
    from redline.tui.widgets.pending_stack import PendingStack
    from redline.tui.widgets.preview_panel import PreviewPanel


class InboxSearch(Screen[None]):
    """The base of :class:`~redline.tui.screens.inbox.InboxScreen` for its search keys."""

    if TYPE_CHECKING:

        @property
        def preview(self) -> PreviewPanel: ...

        @property
        def stack(self) -> PendingStack: ...

        @property
        def search(self) -> SearchInput: ...

    def action_search(self) -> None:
        focused = self.focused
        target: Searchable = (
            focused if isinstance(focused, ActivityLog | DiffView) else self.preview.diff_view
        )
        where = "activity" if isinstance(target, ActivityLog) else "diff"
        self.search.open(target, where)

    def action_search_step(self, step: int) -> None:
        self.search.step(step)

    def on_search_input_closed(self, _message: SearchInput.Closed) -> None:
        self.action_close_search()

    def action_close_search(self) -> None:
        target = self.search.close()
        if isinstance(target, Widget):
            target.focus()
        else:
            self.stack.focus()
