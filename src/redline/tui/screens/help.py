"""The key map, grouped the way a reviewer uses it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

KEY_MAP: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Review",
        (
            ("y", "apply the top action (with the reason typed)"),
            ("n", "discard the top action"),
            ("r", "type a reason (Enter / Escape: back to the stack)"),
            ("p", "re-preview the selected stale action"),
            ("a", "always apply this tool's changes under this folder (session rule)"),
            ("u", "undo the last apply (the agent is told)"),
        ),
    ),
    (
        "Move",
        (
            ("j / k", "next / previous action"),
            ("[ / ]", "previous / next file"),
            ("s", "split (side-by-side) view"),
            ("+ / -", "more / less context"),
            ("tab", "next panel"),
        ),
    ),
    (
        "Agent",
        (
            ("ctrl+x", "stop the agent"),
            ("ctrl+p", "commands: apply all, discard all, re-preview, trust, toggles"),
            ("?", "this help"),
            ("ctrl+q", "quit (asks first when actions are pending)"),
        ),
    ),
)


def key_map_cells() -> Iterator[Static]:
    """The key map as grid cells: a heading spanning both columns, then key | description."""
    for title, keys in KEY_MAP:
        yield Static(Content.styled(title, "bold $redline-text-accent"), classes="heading")
        for key, what in keys:
            yield Static(Content.styled(key, "bold"), classes="key")
            yield Static(what, classes="what")


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("redline — keys", id="title")
            # Two columns, so a wrapped description stays under its own text.
            with Grid(id="keys"):
                yield from key_map_cells()
            yield Static("Escape or ? closes this help.", id="closing")

    def action_close(self) -> None:
        self.dismiss(None)
