"""The search input (``/``): Enter finds the next match, Escape closes the search."""

from __future__ import annotations

from typing import ClassVar, Protocol

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class Searchable(Protocol):
    """A view ``/`` can search: its rows as plain text, and a way to show one row."""

    def search_rows(self) -> list[str]: ...

    def show_search_hit(self, row: int | None) -> None: ...


def find_row(rows: list[str], term: str, start: int, step: int) -> int | None:
    """The next row (from ``start``, moving by ``step``, wrapping) containing ``term``."""
    if not rows or not term:
        return None
    needle = term.casefold()
    count = len(rows)
    for offset in range(count):
        index = (start + step * offset) % count
        if needle in rows[index].casefold():
            return index
    return None


class SearchInput(Input):
    """The search term; Enter finds the next match, Escape closes the search."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close search")]

    class Closed(Message):
        """The person closed the search."""

    def action_close(self) -> None:
        self.post_message(self.Closed())
