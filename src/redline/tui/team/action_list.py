"""The team dashboard's list: the open actions of every workspace, newest first."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from redline.termtext import one_line as clean

# A row's state other than plain pending, as the list marks it.
STATE_NOTE = {
    "conflict": "conflict: decide again",
    "failed": "failed: decide again",
    "refused": "refused by its workspace",
}


def row_prompt(row: dict[str, Any]) -> Content:
    """Two lines: ``pa-3@WS ‹exec› +1 -0 Edit a.txt [state]`` and the workspace's path."""
    parts: list[tuple[str, str] | str] = [
        (clean(row["id"]), "bold"),
        "  ",
        (f"‹{clean(row['source'])}›", "$accent"),
        "  ",
        (f"+{row['added']}", "$success"),
        " ",
        (f"-{row['removed']}", "$error"),
        "  ",
        clean(row["label"]),
    ]
    note = STATE_NOTE.get(str(row["state"]))
    if note:
        parts += ["  ", (f"[{note}]", "$warning")]
    parts += ["\n", (f"  {clean(row['workspace']['path'])}", "$text-muted")]
    return Content.assemble(*parts)


class TeamActionList(OptionList):
    """One option per open action (its id is the team id); ``j``/``k`` move."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[dict[str, Any]] = []

    @property
    def selected_id(self) -> str | None:
        option = self.highlighted_option
        return option.id if option is not None else None

    def set_rows(self, rows: list[dict[str, Any]], select: str | None) -> None:
        """Show ``rows``; highlight ``select`` (when listed), else nothing."""
        if [r["id"] for r in rows] == [r["id"] for r in self.rows] and rows == self.rows:
            if select != self.selected_id:
                self.select(select)
            return
        self.rows = rows
        self.set_options(Option(row_prompt(row), id=row["id"]) for row in rows)
        self.select(select)

    def select(self, team_id: str | None) -> None:
        ids = [row["id"] for row in self.rows]
        self.highlighted = ids.index(team_id) if team_id in ids else None
