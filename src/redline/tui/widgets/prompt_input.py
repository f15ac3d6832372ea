"""The prompt input (``i``): a line to the agent; Escape hands focus back to the stack."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class PromptInput(Input):
    """The line to the agent; Escape returns to the stack (the text stays)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "done", "Back to stack")]

    class Done(Message):
        """The person left the prompt without sending."""

    def action_done(self) -> None:
        self.post_message(self.Done())
