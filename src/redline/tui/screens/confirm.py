"""A yes/no question (quitting with actions pending)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from redline.termtext import visible


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(
        self, question: str, *, yes: str = "Yes", no: str = "No", name: str | None = None
    ) -> None:
        super().__init__(name=name)
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        # Scrolls when the terminal is too short for it; the question wraps at word boundaries.
        with VerticalScroll(id="dialog"):
            # Content, not markup: the question may quote labels and paths (shown).
            yield Label(Content(visible(self.question)), id="question")
            with Horizontal(id="buttons"):
                yield Button(f"{self.yes} (y)", variant="error", id="yes", compact=True)
                yield Button(f"{self.no} (n)", variant="primary", id="no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
