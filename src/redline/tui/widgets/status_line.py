"""One line: the model (scripted runs say so), the workspace and the agent's state."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from redline.agent.events import AgentState

STATE_STYLE = {
    AgentState.RUNNING: "bold $redline-text-accent",
    AgentState.WAITING_FOR_REVIEW: "bold $redline-text-warning",
    AgentState.IDLE: "$text-muted",
    AgentState.STOPPED: "bold $redline-text-warning",
    AgentState.FAILED: "bold $text-error",
}


class StatusLine(Widget):
    state: reactive[AgentState] = reactive(AgentState.IDLE)
    pending: reactive[int] = reactive(0)

    def __init__(
        self, model_label: str, workspace: str, *, scripted: bool, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.model_label = model_label
        self.workspace = workspace
        self.scripted = scripted

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
            (self.state.value, STATE_STYLE[self.state]),
            ("  │  ", "$text-muted"),
            (f"{self.pending} pending", "bold" if self.pending else "$text-muted"),
        )
