"""A persistent line under the status line: the external agent's process has ended."""

from __future__ import annotations

from textual.widgets import Static

from redline.tui.agent_ended import banner_text


class EndedBanner(Static):
    """Hidden until :meth:`show_ended`; then says who ended, how, and what is left."""

    DEFAULT_CSS = """
    EndedBanner {
        display: none;
        height: auto;
        max-height: 2;
        padding: 0 1;
    }
    EndedBanner.-ended {
        display: block;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.agent = ""
        self.how = ""
        self.left = 0

    @property
    def ended(self) -> bool:
        return self.has_class("-ended")

    def show_ended(self, agent: str, how: str, left: int) -> None:
        self.agent, self.how, self.left = agent, how, left
        self.add_class("-ended")
        self.update(banner_text(agent, how, left=left))

    def set_left(self, left: int) -> None:
        """How many of the ended agent's actions are still pending."""
        if self.ended and left != self.left:
            self.left = left
            self.update(banner_text(self.agent, self.how, left=left))
