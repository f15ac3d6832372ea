"""A reason field and Apply / Discard buttons for the selected action (or its picked hunks).

The reason field keeps at least :data:`REASON_MIN` columns at any width: the bar names the
action on its buttons when there is room (``Apply pa-3 (y)``); when there is not, it
shortens them (``Apply (y)``) or puts them on a row of their own under the field — on a
tall terminal the second row comes first, on a short one the shorter labels do.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button

from redline.tui.widgets.reason_input import ReasonInput

# The fewest columns the reason field keeps (one row or two).
REASON_MIN = 20
# Room around a button's label (Textual's own padding is one column each side).
BUTTON_PAD = 2
BUTTON_MIN = 12
# The left margin of each button (styles/stack.tcss).
BUTTON_MARGIN = 1
# From this terminal height on a second row costs little (the app's ``-tall``).
ROWS_FIRST_FROM = 32

Labels = tuple[str, str]


def button_width(label: str) -> int:
    return max(len(label) + BUTTON_PAD, BUTTON_MIN)


def arrangement(
    width: int, long: Labels, short: Labels, *, rows_first: bool = False
) -> tuple[bool, Labels]:
    """How a bar ``width`` columns wide shows its buttons: (on a row of their own, labels).

    The first that leaves the reason field :data:`REASON_MIN` columns: one row with the
    long labels, one row with the short ones, two rows with the long, two with the short.
    ``rows_first`` (a tall terminal, where a row is cheap) tries two rows with the long
    labels before the short ones: the buttons keep naming the action.
    """
    second, third = ((True, long), (False, short)) if rows_first else ((False, short), (True, long))
    for two_rows, labels in ((False, long), second, third):
        buttons = sum(button_width(label) + BUTTON_MARGIN for label in labels)
        if buttons + (0 if two_rows else REASON_MIN) <= width:
            return two_rows, labels
    return True, short


class ResolveBar(Vertical):
    # Labels change with the target (``Apply 2 of 5 hunks``): each button is sized to its
    # whole label in code. With ``-two-rows`` the buttons go under the reason field.
    DEFAULT_CSS = """
    ResolveBar {
        layout: horizontal;
        height: auto;
    }
    ResolveBar.-two-rows {
        layout: vertical;
    }
    ResolveBar Button {
        text-wrap: nowrap;
        min-width: 0;
    }
    ResolveBar #resolve-buttons {
        width: auto;
        height: auto;
    }
    ResolveBar.-two-rows #resolve-buttons {
        width: 1fr;
        align-horizontal: right;
    }
    /* Greyed while they cannot act (nothing selected, busy): the buttons sit in
       #resolve-buttons, and Textual only fades a disabled button's text. */
    ResolveBar #resolve-buttons Button:disabled {
        background: $panel;
        color: $text-disabled;
        text-style: none;
    }
    """

    class Requested(Message):
        """A button asked to apply or discard the top action."""

        def __init__(self, verb: str) -> None:
            self.verb = verb
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._long: Labels = ("Apply (y)", "Discard (n)")
        self._short: Labels = self._long
        self._enabled = (True, True)  # kept for buttons mounted after set_enabled

    def compose(self) -> ComposeResult:
        yield ReasonInput(placeholder="reason (r)", id="reason")
        # Clickable but never focused: Tab from the reason field must not reach Apply, where
        # Enter would apply what the person meant to discard.
        with Horizontal(id="resolve-buttons"):
            apply = Button("Apply (y)", variant="success", id="apply", compact=True)
            discard = Button("Discard (n)", variant="error", id="discard", compact=True)
            apply.can_focus = discard.can_focus = False
            yield apply
            yield discard

    def on_mount(self) -> None:
        self.set_enabled(apply=self._enabled[0], discard=self._enabled[1])
        self._arrange()

    @property
    def reason(self) -> str:
        return self.query_one(ReasonInput).value.strip()

    @property
    def two_rows(self) -> bool:
        """The buttons sit on a row of their own, under the reason field."""
        return self.has_class("-two-rows")

    def focus_reason(self) -> None:
        self.query_one(ReasonInput).focus()

    def clear_reason(self) -> None:
        self.query_one(ReasonInput).value = ""

    def _buttons(self) -> tuple[Button, Button] | None:
        """Apply and Discard; None while they are not mounted (before the bar's compose
        has run, or while the screen is being taken down: a resize or an update can
        arrive then, and must not fail)."""
        found = {button.id: button for button in self.query(Button)}
        apply, discard = found.get("apply"), found.get("discard")
        return None if apply is None or discard is None else (apply, discard)

    def set_enabled(self, *, apply: bool, discard: bool) -> None:
        self._enabled = (apply, discard)
        buttons = self._buttons()
        if buttons is not None:
            buttons[0].disabled = not apply
            buttons[1].disabled = not discard

    def set_target(
        self,
        action_id: str | None,
        *,
        picked: int = 0,
        parts: int = 0,
        whole_only: bool = False,
        marked: int = 0,
        request_changes: bool = False,
    ) -> None:
        """Name what ``y``/``n`` act on: ``Apply pa-2``, ``Apply 2 of 5 hunks``, ``Apply 3
        marked``; ``request_changes``: the action has review comments, so its discard
        is a request for changes (the comments go to the agent with it)."""
        if marked:
            self._long = (f"Apply {marked} marked (y)", f"Discard {marked} marked (n)")
            self._short = (f"Apply {marked} (y)", f"Discard {marked} (n)")
        elif action_id is None:
            self._long = self._short = ("Apply (y)", "Discard (n)")
        elif picked:
            what = f"{picked} of {parts} hunk{'s' if parts != 1 else ''}"
            self._long = (f"Apply {what}", f"Discard {what}")
            self._short = (f"Apply {picked}/{parts}", f"Discard {picked}/{parts}")
        elif request_changes:
            self._long = (f"Apply {action_id} (y)", "Request changes (n)")
            self._short = ("Apply (y)", "Request changes (n)")
        else:
            self._long = (f"Apply {action_id} (y)", f"Discard {action_id} (n)")
            self._short = ("Apply (y)", "Discard (n)")
        tip = (
            "This action has no file preview: it applies or discards only as a whole."
            if whole_only
            else "space picks hunks; y/n then act on the picked ones only"
        )
        for button in self._buttons() or ():
            button.tooltip = tip
        self._arrange()

    def on_resize(self, _event: events.Resize) -> None:
        self._arrange()

    def _arrange(self) -> None:
        """Fit the labels and the rows to the bar's width (the field keeps its columns)."""
        width = self.size.width
        if width > 0:
            tall = self.app.size.height >= ROWS_FIRST_FROM
            two_rows, labels = arrangement(width, self._long, self._short, rows_first=tall)
            self.set_class(two_rows, "-two-rows")
        else:  # before the first layout: the names, fitted once the width is known
            labels = self._long
        for button, label in zip(self._buttons() or (), labels, strict=False):
            if str(button.label) != label:
                button.label = label
            # Auto width would clip a label that changes after the first layout.
            button.styles.width = button_width(label)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id in ("apply", "discard"):
            self.post_message(self.Requested(event.button.id))
