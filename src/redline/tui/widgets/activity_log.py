"""The agent's live activity: streamed text, tool calls, resolutions, errors.

A Line-API log: lines are kept as ``Content`` and only visible ones are rendered, so
thousands of events per second cost a list append each plus one repaint per frame.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from redline.tui.render import content_strip, fit

MAX_LINES = 20_000
TRIM_TO = 15_000
TEXT_PREFIX = ("▌ ", "$text-primary")


class ActivityLog(ScrollView, can_focus=True):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Content] = []
        self._strips: dict[int, Strip] = {}
        self._open_text: str | None = None
        self._max_width = 0
        self._deferred = False
        self._dirty = False
        # Follow the newest line until the person scrolls up; scrolling back down resumes.
        self._follow = True

    # -- writing -------------------------------------------------------------------
    def write_lines(self, lines: Iterable[Content]) -> None:
        self._close_text()
        new = list(lines)
        if not new:
            return
        self._append(new)

    def stream_text(self, text: str) -> None:
        """Append streamed assistant text, continuing the line that is open."""
        if not text:
            return
        pieces = text.split("\n")
        if self._open_text is None:
            self._open_text = ""
            self.lines.append(Content(""))
        self._open_text += pieces[0]
        self._set_last(self._open_text)
        for piece in pieces[1:]:
            self._open_text = piece
            self.lines.append(Content(""))
            self._set_last(piece)
        self._after_change()

    def end_text(self) -> None:
        self._close_text()

    def _close_text(self) -> None:
        if self._open_text is not None and not self._open_text and self.lines:
            # A message that ended on a newline leaves an empty last line; drop it.
            self.lines.pop()
        self._open_text = None

    def _set_last(self, text: str) -> None:
        index = len(self.lines) - 1
        self.lines[index] = Content.assemble(TEXT_PREFIX, text)
        self._strips.pop(index, None)
        self._max_width = max(self._max_width, len(text) + 2)

    def _append(self, new: list[Content]) -> None:
        self.lines.extend(new)
        self._max_width = max(self._max_width, *(line.cell_length for line in new))
        self._after_change()

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

    def _after_change(self) -> None:
        if self._deferred:
            self._dirty = True
            return
        if len(self.lines) > MAX_LINES:
            del self.lines[: len(self.lines) - TRIM_TO]
            self._strips.clear()
        self.virtual_size = Size(self._max_width, len(self.lines))
        if self._follow:
            # The new virtual size is only known to scrolling after the next layout.
            self.call_after_refresh(self._scroll_to_newest)
        self.refresh()

    def _scroll_to_newest(self) -> None:
        if self._follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._follow = new_value >= self.max_scroll_y - 1

    def clear(self) -> None:
        self.lines.clear()
        self._strips.clear()
        self._open_text = None
        self._max_width = 0
        self.virtual_size = Size(0, 0)
        self.refresh()

    @property
    def plain(self) -> str:
        return "\n".join(line.plain for line in self.lines)

    # -- rendering -------------------------------------------------------------------
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
        return fit(strip, int(self.scroll_x), width, base)
