"""The reason field under the stack (``r``): the text goes with the next ``y`` / ``n``."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class ReasonInput(Input):
    """Enter discards the selected action with this reason; Escape goes back to the stack.

    Enter never applies: a person who typed a reason (why not) and pressed Enter meant
    to discard. The Apply and Discard buttons beside it take no focus, so Tab never lands
    on Apply either.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "done", "Back to stack", show=False)]

    class Done(Message):
        """The person left the field (Escape); the text stays for the next y/n."""

    class DiscardRequested(Message):
        """Enter: discard the selected action (or the marked ones) with this reason."""

    def action_done(self) -> None:
        self.post_message(self.Done())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.DiscardRequested())
