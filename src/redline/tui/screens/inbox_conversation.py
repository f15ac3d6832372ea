"""The inbox's review-conversation key (docs/review-conversation.md): ``m`` opens the
selected action's comments, viewed marks and interdiff (:class:`ConversationScreen`); its
``n`` comes back here as the inbox's own discard, so a request for changes is decided like
any discard (its comments go to the agent with it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.screen import Screen

from redline.tui.screens.conversation import ConversationScreen

if TYPE_CHECKING:
    from redline.review.store import PendingAction
    from redline.tui.protocol import SessionLike


class InboxConversation(Screen[None]):
    """A base of :class:`~redline.tui.screens.inbox.InboxScreen` (its bindings merge in)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "conversation", "Comments", show=False),
    ]

    if TYPE_CHECKING:
        session: SessionLike

        def selected_action(self) -> PendingAction | None: ...

        def _resolve_selected(self, verb: str, reason: str | None = None) -> None: ...

        def refresh_stack(self) -> None: ...

    def action_conversation(self) -> None:
        action = self.selected_action()
        queue = self.session.queue
        if action is None or queue is None or action.preview is None:
            self.notify(
                "Comments need a queued action with file changes: select one.",
                severity="warning",
            )
            return

        def closed(result: str | None) -> None:
            self.refresh_stack()
            if result == "discard":
                self._resolve_selected("discard")

        self.app.push_screen(ConversationScreen(queue, action.id), closed)

    def _discard_label(self) -> str:
        """``n`` says "Request changes" while the selected action has comments."""
        from redline.tui.screens.conversation import discard_label

        action = self.selected_action()
        return discard_label(self.session.queue, action.id if action is not None else None)
