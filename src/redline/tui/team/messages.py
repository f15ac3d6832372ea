"""What the team dashboard's worker threads post back to it."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class RowsArrived(Message):
    """A fresh list of the open actions (after a notification, a reconnect, a poll)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        super().__init__()


class LinkChanged(Message):
    """The watch reached the database (``online``) or lost it (``text`` says why)."""

    def __init__(self, online: bool, text: str) -> None:
        self.online = online
        self.text = text
        super().__init__()


class ActionShown(Message):
    """One action with its diff, or why it could not be read."""

    def __init__(self, team_id: str, data: dict[str, Any] | None, error: str = "") -> None:
        self.team_id = team_id
        self.data = data
        self.error = error
        super().__init__()


class DecisionMade(Message):
    """This reviewer's decision came back: won, lost a race (``text`` names the winner),
    or failed (``failed``: the database refused or was away)."""

    def __init__(self, team_id: str, won: bool, text: str, *, failed: bool = False) -> None:
        self.team_id = team_id
        self.won = won
        self.text = text
        self.failed = failed
        super().__init__()


class DecidedElsewhere(Message):
    """The selected action left the list because someone else decided it."""

    def __init__(self, team_id: str, text: str) -> None:
        self.team_id = team_id
        self.text = text
        super().__init__()
