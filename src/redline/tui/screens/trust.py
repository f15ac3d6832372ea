"""The one-time question whether to load this workspace's project plugins."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class TrustScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "answer(True)", "Trust"),
        Binding("escape,n", "answer(False)", "Not now"),
    ]

    def __init__(self, plugin_dir: Path | str) -> None:
        super().__init__()
        self.plugin_dir = str(plugin_dir)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Trust this workspace's plugins?", id="question")
            yield Static(
                f"{self.plugin_dir} holds project tools. They are Python code and run with "
                "your permissions. Only trust a workspace you know.",
                id="explanation",
            )
            with Horizontal(id="buttons"):
                yield Button("Trust and load (t)", variant="warning", id="trust")
                yield Button("Not now (n)", variant="primary", id="skip")

    def on_mount(self) -> None:
        self.query_one("#skip", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "trust")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
