"""One line: the model (scripted runs say so), the workspace and the agent's state.

The agent's state and the pending count sit on the right and always stay; the model and
the workspace give way first when the terminal is narrow.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from redline.review.events import AgentState

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
    sources: reactive[tuple[tuple[str, int], ...]] = reactive(())
    # Over a review source with a link (the team queue): whether it is reached, in place of
    # the agent's state ("" over a session). ``link_bad``: offline.
    link: reactive[str] = reactive("")
    link_bad: reactive[bool] = reactive(False)

    def __init__(
        self, model_label: str, workspace: str, *, scripted: bool, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.model_label = model_label
        self.workspace = workspace
        self.scripted = scripted

    def _model(self, *, short: bool) -> Content:
        if not self.scripted:
            return Content.styled(self.model_label, "bold")
        # The session's label may already carry the scripted note; show it once, in colour.
        name, _, note = self.model_label.partition(" (")
        if short:
            return Content.assemble((name, "bold"), (" (scripted)", "$redline-text-warning"))
        note = f" ({note}" if note else " (scripted — no language model)"
        return Content.assemble((name, "bold"), (note, "$redline-text-warning"))

    def _right(self, *, with_sources: bool) -> Content:
        bar = ("  │  ", "$text-muted")
        parts: list[tuple[str, str] | str] = [
            ("agent: ", "$text-muted"),
            (self.state.value, STATE_STYLE[self.state]),
        ]
        if self.link:
            parts = [(self.link, "bold $text-error" if self.link_bad else "$redline-text-success")]
        parts += [bar, (f"{self.pending} pending", "bold" if self.pending else "$text-muted")]
        if with_sources and len(self.sources) > 1:
            counts = ", ".join(f"{badge} {count}" for badge, count in self.sources)
            parts.append((f" ({counts})", "$text-muted"))
        return Content.assemble(*parts)

    def render(self) -> Content:
        width = self.content_region.width or 200
        bar = Content.styled("  │  ", "$text-muted")
        brand = Content.styled("redline ", "bold $text-primary")
        right = self._right(with_sources=True)
        if right.cell_length > width:
            right = self._right(with_sources=False)
        # The widest left part that fits next to the right part; less on the right first.
        candidates = [
            Content.assemble(brand, self._model(short=False), bar, self.workspace),
            Content.assemble(brand, self._model(short=True), bar, self.workspace),
            Content.assemble(brand, self._model(short=False)),
            Content.assemble(brand, self._model(short=True)),
            brand,
            Content(""),
        ]
        for left in candidates:
            if left.cell_length + 2 + right.cell_length <= width:
                break
        gap = max(width - left.cell_length - right.cell_length, 1 if left.cell_length else 0)
        return Content.assemble(left, " " * gap, right)
