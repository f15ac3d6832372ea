"""The search bar (``/``): the term, the view it searches, the match shown there and the
count beside the input (``3 matches`` while typing, ``2 of 3`` once a match is shown).

The search runs over whichever view had focus (the diff or the activity). Enter finds
the first match and hands focus back to that view; the next / previous match keys step
on while ``searching`` (a reactive with ``bindings=True``, so the footer follows it).
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, Static


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


def matching_rows(rows: list[str], term: str) -> list[int]:
    """Every row containing ``term`` (case-insensitive), in order."""
    if not term:
        return []
    needle = term.casefold()
    return [index for index, row in enumerate(rows) if needle in row.casefold()]


def count_text(matches: list[int], hit: int | None, term: str) -> str:
    """``2 of 5`` when a match is shown, ``5 matches`` before, ``no match`` for none."""
    if not term:
        return ""
    if not matches:
        return "no match"
    if hit is not None and hit in matches:
        return f"{matches.index(hit) + 1} of {len(matches)}"
    return f"{len(matches)} match" + ("" if len(matches) == 1 else "es")


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
        term = self.value.strip()
        self._show_count(matching_rows(target.search_rows(), term), None, term)

    def on_input_changed(self, event: Input.Changed) -> None:
        # While typing: how many rows the term would find (no match is shown yet).
        event.stop()
        if self.target is not None:
            term = event.value.strip()
            self._show_count(matching_rows(self.target.search_rows(), term), None, term)

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
        self._show_count(matching_rows(rows, self.term), hit, self.term)
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
        self._show_count([], None, "")
        return target

    def action_close(self) -> None:
        self.post_message(self.Closed())

    def _follow(self) -> None:
        self.searching = bool(self.term) and self.target is not None

    def _show_count(self, matches: list[int], hit: int | None, term: str) -> None:
        bar = self.parent
        if isinstance(bar, SearchBar):
            bar.show(count_text(matches, hit, term), active=self.has_class("-active"))


class SearchBar(Horizontal):
    """The search input and, beside it, how many rows match and which one is shown."""

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self._placeholder = placeholder
        self._count = ""

    def compose(self) -> ComposeResult:
        yield SearchInput(placeholder=self._placeholder, id="search")
        yield Static("", id="search-count")

    @property
    def count(self) -> str:
        """What the count beside the input says (``2 of 5``, ``no match``, or "")."""
        return self._count

    def show(self, count: str, *, active: bool) -> None:
        self.set_class(active, "-active")
        if count != self._count:
            self._count = count
            self.query_one("#search-count", Static).update(count)
