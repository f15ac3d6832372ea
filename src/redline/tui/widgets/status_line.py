"""One line: the model (scripted runs say so), the workspace and the agent's state."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

STATE_STYLE = {
    "running": "bold $redline-text-accent",
    "waiting for review": "bold $redline-text-warning",
    "idle": "$text-muted",
    "stopped": "bold $redline-text-warning",
    "failed": "bold $text-error",
}
AGENT_STATES = tuple(STATE_STYLE)


class StatusLine(Widget):
    state: reactive[str] = reactive("idle")
    pending: reactive[int] = reactive(0)

    def __init__(
        self, model_label: str, workspace: str, *, scripted: bool, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.model_label = model_label
        self.workspace = workspace
        self.scripted = scripted

    def validate_state(self, value: str) -> str:
        if value not in STATE_STYLE:
            raise ValueError(f"unknown agent state {value!r}: expected one of {AGENT_STATES}")
        return value

    def render(self) -> Content:
        model = Content.styled(self.model_label, "bold")
        if self.scripted:
            # The session's label may already carry the scripted note; show it once, in colour.
            name, _, note = self.model_label.partition(" (")
            note = f" ({note}" if note else " (scripted — no language model)"
            model = Content.assemble((name, "bold"), (note, "$redline-text-warning"))
        return Content.assemble(
            ("redline ", "bold $text-primary"),
            model,
            ("  │  ", "$text-muted"),
            (self.workspace, ""),
            ("  │  ", "$text-muted"),
            ("agent: ", "$text-muted"),
            (self.state, STATE_STYLE[self.state]),
            ("  │  ", "$text-muted"),
            (f"{self.pending} pending", "bold" if self.pending else "$text-muted"),
        )
