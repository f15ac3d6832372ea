"""The one-time question whether to load this workspace's project plugins."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from redline.extensibility.custom_tools.loader import plugin_files
from redline.termtext import one_line

MAX_LISTED = 12


def _listing(plugin_dir: Path) -> Content:
    files = plugin_files(plugin_dir)
    if not files:
        return Content.styled("(no plugin files found right now)", "$text-muted")
    names = [f"  • {one_line(path.name)}" for path in files[:MAX_LISTED]]
    if len(files) > MAX_LISTED:
        names.append(f"  … and {len(files) - MAX_LISTED} more")
    return Content("\n".join(names))


class TrustScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "answer(True)", "Trust"),
        Binding("escape,n", "answer(False)", "Not now"),
    ]

    def __init__(self, plugin_dir: Path | str) -> None:
        super().__init__()
        self.plugin_dir = str(plugin_dir)

    def compose(self) -> ComposeResult:
        # Scrolls when the terminal is too short for it; text wraps at word boundaries.
        with VerticalScroll(id="dialog"):
            yield Label("Trust this workspace's plugins?", id="question")
            yield Static(
                f"{self.plugin_dir} holds project tools. They are Python code and run with "
                "your permissions. Only trust a workspace you know. These files would run:",
                id="explanation",
            )
            yield Static(_listing(Path(self.plugin_dir)), id="plugin-files")
            yield Static(
                "Your answer “trust” is remembered for this workspace; "
                "`redline trust --revoke` takes it back. “Not now” asks again next time.",
                id="remembered",
            )
            with Horizontal(id="buttons"):
                yield Button("Trust and load (t)", variant="warning", id="trust", compact=True)
                yield Button("Not now (n)", variant="primary", id="skip", compact=True)

    def on_mount(self) -> None:
        self.query_one("#skip", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "trust")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
