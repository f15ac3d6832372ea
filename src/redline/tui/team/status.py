"""The team dashboard's status line: the link, the reviewer, the filter, the counts, and
the last outcome (a decision, a lost race, an error) until the next one."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from redline.termtext import one_line as clean


class TeamStatus(Static):
    DEFAULT_CSS = """
    TeamStatus {
        height: auto;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.online: bool | None = None
        self.link_text = "connecting…"
        self.reviewer = ""
        self.counts = ""
        self.filter = "all workspaces"
        self.outcome = ""
        self.outcome_bad = False

    def show_outcome(self, text: str, *, bad: bool = False) -> None:
        self.outcome, self.outcome_bad = clean(text), bad
        self.redraw()

    def redraw(self) -> None:
        if self.online:
            link: tuple[str, str] = ("● online", "$success")
        elif self.online is None:
            link = ("○ connecting…", "$text-muted")
        else:
            link = (f"○ offline: {clean(self.link_text)} (retrying)", "$error")
        first = Content.assemble(
            link,
            "  ",
            f"connected as {clean(self.reviewer)}",
            "  ·  ",
            self.counts,
            "  ·  ",
            (f"showing {clean(self.filter)}", "$text-muted"),
        )
        if self.outcome:
            style = "bold $error" if self.outcome_bad else "$success"
            self.update(Content.assemble(first, "\n", (self.outcome, style)))
        else:
            self.update(first)
