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
    from redline.review.source import ReviewSource
    from redline.review.store import PendingAction
    from redline.tui.protocol import SessionLike
    from redline.tui.source_list import SourceList
    from redline.tui.widgets.pending_stack import PendingStack
    from redline.workspace.queue import WorkspaceQueue


class InboxConversation(Screen[None]):
    """A base of :class:`~redline.tui.screens.inbox.InboxScreen` (its bindings merge in)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "conversation", "Comments", show=False),
    ]

    if TYPE_CHECKING:
        session: SessionLike
        source: ReviewSource | None

        @property
        def stack(self) -> PendingStack: ...

        @property
        def listing(self) -> SourceList: ...

        def selected_action(self) -> PendingAction | None: ...

        def _resolve_selected(self, verb: str, reason: str | None = None) -> None: ...

        def refresh_stack(self) -> None: ...

    def _conversation_target(self) -> tuple[WorkspaceQueue, str] | None:
        """The selected action's conversation: its workspace's queue and local id there.
        Over a review source (``redline --all``: ``pa-N@WSID``) the source routes it; over
        a session, the session's queue."""
        if self.source is not None:
            selected = self.stack.selected_id
            row = self.listing.row(selected) if selected is not None else None
            if selected is None or row is None or not row.files:
                return None
            return self.source.conversation_target(selected)
        action = self.selected_action()
        queue = self.session.queue
        if action is None or queue is None or action.preview is None:
            return None
        return queue, action.id

    def action_conversation(self) -> None:
        target = self._conversation_target()
        if target is None:
            selected = self.stack.selected_id
            row = self.listing.row(selected) if self.source and selected else None
            self.notify(
                f"Comments are not kept in the {self.source.title}: decide with y or n."
                if self.source is not None and row is not None and row.files
                else "Comments need a queued action with file changes: select one.",
                severity="warning",
            )
            return

        def closed(result: str | None) -> None:
            self.refresh_stack()
            if result == "discard":
                self._resolve_selected("discard")

        self.app.push_screen(ConversationScreen(*target), closed)

    def _discard_label(self) -> str:
        """``n`` says "Request changes" while the selected action has comments."""
        from redline.tui.screens.conversation import discard_label

        target = self._conversation_target()
        return discard_label(*target) if target is not None else "Discard"
