"""The agent's live activity: streamed text, tool calls, resolutions, errors.

A Line-API log: only visible lines are rendered, so thousands of events per second cost
a list append each plus one repaint per frame. Every entry is word-wrapped to the log's
width (never scrolled sideways); a resize re-wraps them all, and the open paragraph of
streamed text is re-wrapped as each delta arrives.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from redline.tui.render import content_strip, fit

MAX_LINES = 20_000
TRIM_TO = 15_000
TEXT_PREFIX = Content.styled("▌ ", "$text-primary")
# Wrapped lines of an unindented entry hang under its text, clear of its marker.
HANGING_INDENT = 2
# Before the first layout the width is unknown; the first resize re-wraps at the real one.
FALLBACK_WIDTH = 80


DETAIL_INDENT = Content("    ")


@dataclass(slots=True)
class _Entry:
    """One logical line: ``first`` starts its first row, ``rest`` every wrapped row.

    ``detail`` is the full text behind the line, shown under it while ``expanded``.
    """

    first: Content
    body: Content
    rest: Content
    detail: tuple[Content, ...] = ()
    expanded: bool = False

    @property
    def plain(self) -> str:
        return self.first.plain + self.body.plain

    def wrap(self, width: int) -> list[Content]:
        if self.first.cell_length + self.body.cell_length <= width:
            rows = [self.first + self.body]
        else:
            indent = max(self.first.cell_length, self.rest.cell_length)
            wrapped = self.body.wrap(max(width - indent, 1))
            rows = [self.first + wrapped[0], *(self.rest + row for row in wrapped[1:])]
        if self.expanded:
            room = max(width - DETAIL_INDENT.cell_length, 1)
            for line in self.detail:
                rows.extend(DETAIL_INDENT + row for row in (line.wrap(room) or [Content("")]))
        return rows


def _text_entry(text: str) -> _Entry:
    return _Entry(TEXT_PREFIX, Content(text), TEXT_PREFIX)


def _line_entry(line: Content) -> _Entry:
    plain = line.plain
    lead = len(plain) - len(plain.lstrip(" "))
    return _Entry(line[:lead], line[lead:], Content(" " * (lead or HANGING_INDENT)))


class ActivityLog(ScrollView, can_focus=True):
    """The log; with focus, a cursor picks an entry and ``enter`` shows its full text."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "cursor(1)", "Down", show=False),
        Binding("k,up", "cursor(-1)", "Up", show=False),
        Binding("enter", "toggle_entry", "Expand"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # What was written (``_entries``) and the rows it wraps to (``lines``).
        self._entries: list[_Entry] = []
        self._heights: list[int] = []
        self.lines: list[Content] = []
        self._strips: dict[int, Strip] = {}
        self._open_text: str | None = None
        self._wrap_width = 0
        self._deferred = False
        self._dirty = False
        # Follow the newest line until the person scrolls up; scrolling back down resumes.
        self._follow = True
        self.search_hit: int | None = None
        # The entry ``enter`` acts on (None: the newest, until the person moves).
        self.cursor: int | None = None

    # -- writing -------------------------------------------------------------------
    def write_lines(self, lines: Iterable[Content], detail: Iterable[Content] = ()) -> None:
        """Append ``lines``; ``detail`` is the full text behind the last of them."""
        self._close_text()
        new = list(lines)
        if not new:
            return
        for line in new:
            self._push(_line_entry(line))
        more = tuple(detail)
        if more:
            self._entries[-1].detail = more
        self._after_change()

    def stream_text(self, text: str) -> None:
        """Append streamed assistant text, continuing the paragraph that is open."""
        if not text:
            return
        pieces = text.split("\n")
        if self._open_text is None:
            self._open_text = pieces[0]
            self._push(_text_entry(self._open_text))
        else:
            self._open_text += pieces[0]
            self._replace_last(_text_entry(self._open_text))
        for piece in pieces[1:]:
            self._open_text = piece
            self._push(_text_entry(piece))
        self._after_change()

    def end_text(self) -> None:
        self._close_text()

    def _close_text(self) -> None:
        if self._open_text is not None and not self._open_text and self._entries:
            # A message that ended on a newline leaves an empty last line; drop it.
            self._drop_last()
        self._open_text = None

    def _width(self) -> int:
        width = self.scrollable_content_region.width
        return width if width > 0 else FALLBACK_WIDTH

    def _push(self, entry: _Entry) -> None:
        rows = entry.wrap(self._width())
        self._entries.append(entry)
        self._heights.append(len(rows))
        self.lines.extend(rows)

    def _drop_last(self) -> None:
        self._entries.pop()
        start = len(self.lines) - self._heights.pop()
        for index in range(start, len(self.lines)):
            self._strips.pop(index, None)
        del self.lines[start:]

    def _replace_last(self, entry: _Entry) -> None:
        self._drop_last()
        self._push(entry)

    def _rewrap(self) -> None:
        width = self._width()
        self.lines = []
        self._heights = []
        for entry in self._entries:
            rows = entry.wrap(width)
            self._heights.append(len(rows))
            self.lines.extend(rows)
        self._strips.clear()

    @contextmanager
    def batch_writes(self) -> Iterator[None]:
        """Write many lines, then update the scroll size and repaint once."""
        self._deferred = True
        try:
            yield
        finally:
            self._deferred = False
            if self._dirty:
                self._dirty = False
                self._after_change()

    def _trim(self) -> None:
        dropped_entries = dropped_lines = 0
        while len(self.lines) - dropped_lines > TRIM_TO:
            dropped_lines += self._heights[dropped_entries]
            dropped_entries += 1
        if self.cursor is not None:
            self.cursor = max(self.cursor - dropped_entries, 0)
        del self._entries[:dropped_entries]
        del self._heights[:dropped_entries]
        del self.lines[:dropped_lines]
        self._strips.clear()

    def _after_change(self) -> None:
        if self._deferred:
            self._dirty = True
            return
        if len(self.lines) > MAX_LINES:
            self._trim()
        self.virtual_size = Size(0, len(self.lines))
        if self._follow:
            # Scrolled now, against the last layout's height (the log's box seldom changes),
            # so the newest line shows in this frame rather than in a frame after it (issue
            # 44); and again after the next layout, which knows the new virtual size for sure
            # (a no-op when nothing moved).
            self._scroll_to_newest()
            self.call_after_refresh(self._scroll_to_newest)
        self.refresh()

    def _scroll_to_newest(self) -> None:
        if self._follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._follow = new_value >= self.max_scroll_y - 1

    def clear(self) -> None:
        self._entries.clear()
        self._heights.clear()
        self.lines.clear()
        self._strips.clear()
        self._open_text = None
        self.cursor = None
        self.virtual_size = Size(0, 0)
        self.refresh()

    @property
    def plain(self) -> str:
        """Everything written, one logical line each (as written, not as wrapped)."""
        return "\n".join(entry.plain for entry in self._entries)

    # -- rendering -------------------------------------------------------------------
    def on_resize(self) -> None:
        width = self._width()
        if width != self._wrap_width:
            self._wrap_width = width
            self._rewrap()
            self._after_change()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def render_line(self, y: int) -> Strip:
        base = self.visual_style
        width = self.scrollable_content_region.width
        index = int(self.scroll_y) + y
        if index >= len(self.lines):
            return Strip.blank(width, base.rich_style)
        strip = self._strips.get(index)
        if strip is None:
            strip = content_strip(self.lines[index], base, self.app.stylesheet.parse_style)
            self._strips[index] = strip
        fitted = fit(strip, 0, width, base)
        if self.has_focus and self._entries:
            start, end = self._entry_rows(self._cursor_index())
            if start <= index < end:
                fitted = fitted.apply_style(
                    self.app.stylesheet.parse_style("on $block-hover-background").rich_style
                )
        if index == self.search_hit:
            fitted = fitted.apply_style(self.app.stylesheet.parse_style("reverse").rich_style)
        return fitted

    # -- search (``/``) -------------------------------------------------------------
    def search_rows(self) -> list[str]:
        return [line.plain for line in self.lines]

    def show_search_hit(self, row: int | None) -> None:
        self.search_hit = row
        if row is not None:
            self._follow = False
            height = self.scrollable_content_region.height or 1
            self.scroll_to(y=max(row - height // 2, 0), animate=False, immediate=True)
        self.refresh()

    # -- the entry cursor and expanding --------------------------------------------------
    def _cursor_index(self) -> int:
        last = len(self._entries) - 1
        return last if self.cursor is None else max(0, min(self.cursor, last))

    def _entry_rows(self, entry: int) -> tuple[int, int]:
        start = sum(self._heights[:entry])
        return start, start + self._heights[entry]

    def action_cursor(self, delta: int) -> None:
        if not self._entries:
            return
        self.cursor = max(0, min(self._cursor_index() + delta, len(self._entries) - 1))
        self._show_cursor()

    def _show_cursor(self) -> None:
        start, end = self._entry_rows(self._cursor_index())
        height = self.scrollable_content_region.height or 1
        if start < self.scroll_y:
            self.scroll_to(y=start, animate=False, immediate=True)
        elif end > self.scroll_y + height:
            self.scroll_to(y=max(end - height, start), animate=False, immediate=True)
        self.refresh()

    @property
    def expandable(self) -> bool:
        return bool(self._entries) and bool(self._entries[self._cursor_index()].detail)

    def action_toggle_entry(self) -> None:
        """Show the full text behind the entry under the cursor, or fold it again."""
        if not self._entries:
            return
        index = self._cursor_index()
        entry = self._entries[index]
        if not entry.detail:
            self.app.bell()
            return
        self.cursor = index
        entry.expanded = not entry.expanded
        self._follow = False
        self._rewrap()
        self.virtual_size = Size(0, len(self.lines))
        self.call_after_refresh(self._show_cursor)
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
