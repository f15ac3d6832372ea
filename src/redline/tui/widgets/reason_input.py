"""The reason field under the stack (``r``): the text goes with the next ``y`` / ``n``."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class ReasonInput(Input):
    """Enter or Escape hand focus back to the stack; the text stays for the next y/n."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "done", "Back to stack", show=False)]

    class Done(Message):
        """The person finished typing a reason."""

    def action_done(self) -> None:
        self.post_message(self.Done())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Done())
