"""The search input (``/``): the term, the view it searches and the match shown there.

The search runs over whichever view had focus (the diff or the activity). Enter finds
the first match and hands focus back to that view; the next / previous match keys step
on while ``searching`` (a reactive with ``bindings=True``, so the footer follows it).
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
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

    # A term is set and a view is searched: the next / previous match keys are live.
    searching: reactive[bool] = reactive(False, bindings=True, init=False)

    class Closed(Message):
        """The person closed the search."""

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(placeholder=placeholder, id=id)
        self.target: Searchable | None = None
        self.term = ""
        self.hit: int | None = None

    def open(self, target: Searchable, where: str) -> None:
        """Show the input and take the term for ``target`` (``where`` names it)."""
        if self.target is not None and self.target is not target:
            self.target.show_search_hit(None)
        self.target = target
        self.hit = None
        self.placeholder = f"search the {where} (Enter finds, Escape closes)"
        self.add_class("-active")
        self.focus()
        self._follow()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.term = event.value.strip()
        self.hit = None
        self.step(1)
        target = self.target
        if isinstance(target, Widget):
            target.focus()
        self._follow()

    def step(self, step: int) -> None:
        """Show the next (``1``) or previous (``-1``) match, wrapping."""
        target = self.target
        if target is None or not self.term:
            return
        rows = target.search_rows()
        first = 0 if step > 0 else len(rows) - 1
        start = first if self.hit is None else self.hit + step
        hit = find_row(rows, self.term, start, step)
        self.hit = hit
        target.show_search_hit(hit)
        if hit is None:
            self.notify(f"No match for {self.term!r}.", severity="warning")

    def close(self) -> Searchable | None:
        """Hide the input and the match; the view that was searched, if any."""
        target = self.target
        if target is not None:
            target.show_search_hit(None)
        self.target = None
        self.term = ""
        self.hit = None
        self.remove_class("-active")
        self._follow()
        return target

    def action_close(self) -> None:
        self.post_message(self.Closed())

    def _follow(self) -> None:
        self.searching = bool(self.term) and self.target is not None
