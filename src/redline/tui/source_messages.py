"""What a source dashboard's watch worker posts back to it (`tui/source_app.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.message import Message

from redline.review.source import ListedAction


class RowsArrived(Message):
    """A fresh list of the open actions (after a notification, a reconnect, a poll)."""

    def __init__(self, rows: Sequence[ListedAction]) -> None:
        self.rows = rows
        super().__init__()


class LinkChanged(Message):
    """The watch reached the database (``online``) or lost it (``text`` says why)."""

    def __init__(self, online: bool, text: str) -> None:
        self.online = online
        self.text = text
        super().__init__()
