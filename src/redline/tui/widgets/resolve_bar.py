"""A reason field and Apply / Discard buttons for the top pending action."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input


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


class ResolveBar(Horizontal):
    class Requested(Message):
        """A button asked to apply or discard the top action."""

        def __init__(self, verb: str) -> None:
            self.verb = verb
            super().__init__()

    def compose(self) -> ComposeResult:
        yield ReasonInput(placeholder="reason (r)", id="reason")
        yield Button("Apply (y)", variant="success", id="apply", compact=True)
        yield Button("Discard (n)", variant="error", id="discard", compact=True)

    @property
    def reason(self) -> str:
        return self.query_one(ReasonInput).value.strip()

    def clear_reason(self) -> None:
        self.query_one(ReasonInput).value = ""

    def set_enabled(self, *, apply: bool, discard: bool) -> None:
        self.query_one("#apply", Button).disabled = not apply
        self.query_one("#discard", Button).disabled = not discard

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id in ("apply", "discard"):
            self.post_message(self.Requested(event.button.id))
