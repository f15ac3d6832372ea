"""The key map, grouped the way a reviewer uses it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from redline.review.source import CapabilityName

KEY_MAP: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Review",
        (
            ("y", "apply the marked actions, else the selected one or its picked hunks"),
            ("n", "discard the marked actions, else the selected one or its picked hunks"),
            ("} / {", "next / previous hunk in the diff"),
            ("space", "stack: mark the action for y / n; diff: pick the hunk (file list: file)"),
            ("e", "edit the file's proposed text here (ctrl+s saves as an edited action)"),
            ("E", "edit it in $VISUAL / $EDITOR (not in a browser)"),
            ("r", "type a reason (Enter: discard with it; Escape: back to the stack)"),
            ("p", "re-preview the selected stale action"),
            ("a", "always apply this tool's changes under this folder (session rule)"),
            ("u", "undo the last apply (the agent is told; greyed out when nothing to undo)"),
            ("c", "run the configured checks on the selected action again"),
            ("N", "discard, citing the new check findings as the reason"),
            ("m", "comments, viewed files and a revision's interdiff of the selected action"),
        ),
    ),
    (
        "Comments (m)",
        (
            ("a", "comment on the cursor's line (a header line: the whole file)"),
            ("x", "delete the comment at the cursor (on a line: its last one)"),
            ("v", "mark the file viewed and go to the next unviewed one"),
            ("t", "a revision: since the previous revision / the full diff"),
            ("n", "discard; with comments it reads Request changes, and they go along"),
        ),
    ),
    (
        "Move",
        (
            ("j / k", "next / previous action (in the activity: next / previous entry)"),
            ("g / G", "top / bottom of the stack"),
            ("f", "show only one source's actions (again: the next source, then all)"),
            ("[ / ]", "previous / next file"),
            ("s", "split (side-by-side) view"),
            ("+ / -", "more / less context"),
            ("d", "focus the diff"),
            ("i", "focus the prompt (Escape: back to the stack)"),
            ("tab", "next panel"),
        ),
    ),
    (
        "Read",
        (
            ("← / →", "in the diff: scroll long lines (cut with …) sideways"),
            ("/", "search the diff or the activity, whichever has focus"),
            ("f3 / shift+f3", "next / previous match (while searching)"),
            ("escape", "close the search"),
            ("enter", "in the activity: show the full tool call or result; again folds it"),
        ),
    ),
    (
        "Agent",
        (
            ("ctrl+x", "stop the agent"),
            ("ctrl+p", "commands: apply all, discard all, re-preview, trust, toggles"),
            ("?", "this help"),
            ("ctrl+q", "quit (asks first when actions are pending; again: quit anyway)"),
        ),
    ),
)


#: The keys of each capability a review source may lack (review.source.SourceCapabilities).
CAPABILITY_KEYS: dict[CapabilityName, tuple[str, ...]] = {
    "parts": ("} / {", "space"),
    "edit": ("e", "E"),
    "repreview": ("p",),
    "undo": ("u",),
    "rules": ("a",),
    "checks": ("c", "N"),
}


def key_map_cells(unavailable: Mapping[str, str] | None = None) -> Iterator[Static]:
    """The key map as grid cells: a heading spanning both columns, then key | description.

    ``unavailable``: keys (as the map names them) greyed out, with why instead of what."""
    greyed = unavailable or {}
    for title, keys in KEY_MAP:
        yield Static(Content.styled(title, "bold $redline-text-accent"), classes="heading")
        for key, what in keys:
            why = greyed.get(key)
            if why is None:
                yield Static(Content.styled(key, "bold"), classes="key")
                yield Static(what, classes="what")
            else:
                yield Static(Content.styled(key, "$text-disabled"), classes="key")
                yield Static(Content.styled(f"not here: {why}", "$text-muted"), classes="what")


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "close", "Close")]

    def __init__(self, unavailable: Mapping[str, str] | None = None) -> None:
        """``unavailable``: the keys this dashboard cannot serve, and why (greyed out)."""
        super().__init__()
        self.unavailable = dict(unavailable or {})

    def compose(self) -> ComposeResult:
        # Scrolls (arrow and page keys, the mouse) when the terminal is too short for it.
        with VerticalScroll(id="dialog"):
            yield Static("redline — keys", id="title")
            # Two columns, so a wrapped description stays under its own text.
            with Grid(id="keys"):
                yield from key_map_cells(self.unavailable)
            yield Static("Escape or ? closes this help.", id="closing")

    def on_mount(self) -> None:
        self.query_one("#dialog", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
