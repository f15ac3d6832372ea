"""A reason field and Apply / Discard buttons for the selected action (or its picked hunks)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button

from redline.tui.widgets.reason_input import ReasonInput


class ResolveBar(Horizontal):
    # Labels change with the target (``Apply 2 of 5 hunks``): size them to the whole label.
    DEFAULT_CSS = """
    ResolveBar > Button {
        text-wrap: nowrap;
    }
    /* Textual dims only focusable disabled widgets; these buttons take no focus. */
    ResolveBar > Button:disabled {
        opacity: 0.7;
    }
    """

    class Requested(Message):
        """A button asked to apply or discard the top action."""

        def __init__(self, verb: str) -> None:
            self.verb = verb
            super().__init__()

    def compose(self) -> ComposeResult:
        yield ReasonInput(placeholder="reason (r)", id="reason")
        # Clickable but never focused: Tab from the reason field must not reach Apply, where
        # Enter would apply what the person meant to discard.
        apply = Button("Apply (y)", variant="success", id="apply", compact=True)
        discard = Button("Discard (n)", variant="error", id="discard", compact=True)
        apply.can_focus = discard.can_focus = False
        yield apply
        yield discard

    @property
    def reason(self) -> str:
        return self.query_one(ReasonInput).value.strip()

    def focus_reason(self) -> None:
        self.query_one(ReasonInput).focus()

    def clear_reason(self) -> None:
        self.query_one(ReasonInput).value = ""

    def set_enabled(self, *, apply: bool, discard: bool) -> None:
        self.query_one("#apply", Button).disabled = not apply
        self.query_one("#discard", Button).disabled = not discard

    def set_target(
        self,
        action_id: str | None,
        *,
        picked: int = 0,
        parts: int = 0,
        whole_only: bool = False,
        marked: int = 0,
    ) -> None:
        """Name what ``y``/``n`` act on: ``Apply pa-2``, ``Apply 2 of 5 hunks``, ``Apply 3
        marked``."""
        if marked:
            apply, discard = f"Apply {marked} marked (y)", f"Discard {marked} marked (n)"
        elif action_id is None:
            apply, discard = "Apply (y)", "Discard (n)"
        elif picked:
            what = f"{picked} of {parts} hunk{'s' if parts != 1 else ''}"
            # The bar is narrow: the discard button names only the count (its tooltip says more).
            apply, discard = f"Apply {what}", f"Discard {picked}"
        else:
            apply, discard = f"Apply {action_id} (y)", f"Discard {action_id} (n)"
        apply_button = self.query_one("#apply", Button)
        discard_button = self.query_one("#discard", Button)
        for button, label in ((apply_button, apply), (discard_button, discard)):
            if str(button.label) != label:
                button.label = label
                # Room for the whole label and the button's padding (auto width clips it).
                button.styles.width = max(len(label) + 4, 16)
        tip = (
            "This action has no file preview: it applies or discards only as a whole."
            if whole_only
            else "space picks hunks; y/n then act on the picked ones only"
        )
        apply_button.tooltip = tip
        discard_button.tooltip = tip

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id in ("apply", "discard"):
            self.post_message(self.Requested(event.button.id))
