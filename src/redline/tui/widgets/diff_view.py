"""A unified or side-by-side diff drawn with the Line API.

Only visible lines are rendered. Syntax colour is cached per line. A line paints coloured
at once when its lexer is at hand; only before the process's first lexer lookup (a scan of
every Pygments lexer, see :func:`redline.tui.syntax.known_lexer`) does it paint as plain text,
coloured right after the frame.
"""

from __future__ import annotations

import time

from pygments.lexer import Lexer
from rich.cells import cell_len
from rich.segment import Segment
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from redline.tui.diff_model import DiffRow, SplitRow, split_rows, unified_rows
from redline.tui.render import content_strip, fit
from redline.tui.syntax import UNKNOWN, highlight_line, known_lexer, lexer_for, lexer_now
from redline.workspace.hunks import HUNK_CONTEXT
from redline.workspace.preview import FileChange

ROW_STYLE = {
    "add": "on $success-muted",
    "delete": "on $error-muted",
    "hunk": "$redline-text-accent",
    "meta": "italic $text-muted",
    "context": "",
}
SIGN = {"add": "+", "delete": "-", "context": " ", "hunk": "", "meta": ""}
MAX_CACHED_STRIPS = 4_000
HighlightKey = tuple[int, int]


class DiffView(ScrollView, can_focus=True):
    """The diff of one file change, or plain text lines for actions without files."""

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self._change: FileChange | None = None
        self._rows: list[DiffRow] = []
        self._split_rows: list[SplitRow] = []
        self._text_lines: list[Content] = []
        self._split = False
        self._context_lines = 3
        self._gutter = 1
        # Shown context wider than the hunks' own: a ``#N`` column labels each hunk's start.
        self._label_width = 0
        self._lexer_path = ""
        self._highlighted: dict[HighlightKey, Content] = {}
        self._wanted: dict[HighlightKey, str] = {}
        self._highlight_scheduled = False
        self._painting = False  # in render_line: a line's colour may be computed at once
        self._strips: dict[int, Strip] = {}
        self._max_width = 0
        # The hunk cursor (``}``/``{``) and the hunks of this file in the person's selection.
        self.hunk_cursor: int | None = None
        self.marked: frozenset[int] = frozenset()
        # When new content was shown and when its first line was painted (read by the benchmark).
        self.shown_at: float | None = None
        self.first_paint_at: float | None = None
        self.search_hit: int | None = None

    # -- content ------------------------------------------------------------------
    @property
    def split(self) -> bool:
        return self._split

    @property
    def context(self) -> int:
        return self._context_lines

    @property
    def row_count(self) -> int:
        if self._change is None:
            return len(self._text_lines)
        return len(self._split_rows) if self._split else len(self._rows)

    @property
    def hunk_count(self) -> int:
        return max((row.hunk or 0 for row in self._rows), default=0)

    def step_hunk(self, delta: int) -> int | None:
        """Move the hunk cursor (wrapping) and scroll to it; the new hunk number, or None."""
        count = self.hunk_count
        if count == 0:
            return None
        if self.hunk_cursor is None:
            self.hunk_cursor = 1 if delta > 0 else count
        else:
            self.hunk_cursor = (self.hunk_cursor - 1 + delta) % count + 1
        self._strips.clear()
        self.refresh()
        self._scroll_to_hunk(self.hunk_cursor)
        return self.hunk_cursor

    def set_marked(self, hunks: frozenset[int]) -> None:
        """Mark ``hunks`` (numbers in this file) as selected in the gutter."""
        if hunks != self.marked:
            self.marked = hunks
            self._strips.clear()
            self.refresh()

    def _scroll_to_hunk(self, number: int) -> None:
        rows: list[int] = []
        if self._split:
            for index, pair in enumerate(self._split_rows):
                if any(
                    side is not None and side.hunk == number for side in (pair.left, pair.right)
                ):
                    rows.append(index)
        else:
            rows = [index for index, row in enumerate(self._rows) if row.hunk == number]
        if not rows:
            return
        height = self.scrollable_content_region.height or self.size.height
        first = max(rows[0] - 2, 0)
        if first < self.scroll_y or rows[-1] >= self.scroll_y + height:
            self.scroll_to(y=first, animate=False, immediate=True)

    def _mark(self, row: DiffRow) -> str:
        if row.hidden:
            return "⚠"  # the line held control or invisible characters, now shown
        if row.hunk is None:
            return " "
        if row.hunk in self.marked:
            return "●"
        return "▸" if row.hunk == self.hunk_cursor else " "

    def show_change(self, change: FileChange, *, context: int, split: bool) -> None:
        if change is not self._change:
            self.hunk_cursor = None
            self.marked = frozenset()
        self._change = change
        self._context_lines = context
        self._split = split
        self._rows = unified_rows(change, context)
        self._split_rows = split_rows(self._rows) if split else []
        self._text_lines = []
        largest = max((max(row.old_no or 0, row.new_no or 0) for row in self._rows), default=0)
        self._gutter = len(str(largest))
        hunks = max((row.hunk or 0 for row in self._rows), default=0)
        self._label_width = len(f"#{hunks} ") if hunks and context > HUNK_CONTEXT else 0
        self._max_width = max((len(row.text) for row in self._rows), default=0)
        self._lexer_path = change.path
        self._reset()

    def show_text(self, lines: list[Content]) -> None:
        self._change = None
        self.hunk_cursor = None
        self.marked = frozenset()
        self._rows = []
        self._split_rows = []
        self._text_lines = lines
        self._max_width = max((line.cell_length for line in lines), default=0)
        self._lexer_path = ""
        self._reset()

    def _reset(self) -> None:
        self.search_hit = None
        self._highlighted.clear()
        self._wanted.clear()
        self._strips.clear()
        self._update_virtual_size()
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.shown_at = time.perf_counter()
        self.first_paint_at = None
        self.refresh()

    def _update_virtual_size(self) -> None:
        if self._change is not None and self._split:
            width = self.scrollable_content_region.width
        elif self._change is not None:
            width = self._label_width + self._gutter * 2 + 4 + self._max_width
        else:
            width = self._max_width
        self.virtual_size = Size(width, self.row_count)

    def on_resize(self) -> None:
        self._strips.clear()
        self._update_virtual_size()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    @property
    def allow_horizontal_scroll(self) -> bool:
        """Long lines scroll sideways on demand (←/→, shift+wheel) with no scrollbar row."""
        if self._check_disabled() or self._split:
            return False
        return self.max_scroll_x > 0

    # -- rendering ----------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        if self.first_paint_at is None:
            self.first_paint_at = time.perf_counter()
        base = self.visual_style
        width = self.scrollable_content_region.width
        index = int(self.scroll_y) + y
        if index >= self.row_count:
            return Strip.blank(width, base.rich_style)
        strip = self._strips.get(index)
        if strip is None:
            self._painting = True
            try:
                content, complete = self._line(index, width)
            finally:
                self._painting = False
            strip = content_strip(content, base, self.app.stylesheet.parse_style)
            if complete:
                if len(self._strips) > MAX_CACHED_STRIPS:
                    self._strips.clear()
                self._strips[index] = strip
        scroll_x = 0 if self._split else int(self.scroll_x)
        fitted = fit(strip, scroll_x, width, base)
        if self._text_width(index, strip) > scroll_x + width and width > 1:
            # Cut at the edge: say so (the rest is a → away, styles/preview.tcss).
            more = self.app.stylesheet.parse_style("$text-muted")
            fitted = Strip.join(
                [fitted.crop(0, width - 1), Strip([Segment("…", (base + more).rich_style)], 1)]
            )
        if index == self.search_hit:
            fitted = fitted.apply_style(self.app.stylesheet.parse_style("reverse").rich_style)
        return fitted

    def _text_width(self, index: int, strip: Strip) -> int:
        """The cells of row ``index`` that hold text: a changed row is padded to the widest
        line for its colour, and that padding is never "cut"."""
        if self._change is None or self._split or index >= len(self._rows):
            return strip.cell_length
        row = self._rows[index]
        if row.kind in ("hunk", "meta"):
            return strip.cell_length
        return self._label_width + self._gutter * 2 + 4 + cell_len(row.text)

    # -- search (``/``) -------------------------------------------------------------
    def search_rows(self) -> list[str]:
        return self.plain_lines()

    def show_search_hit(self, row: int | None) -> None:
        self.search_hit = row
        if row is not None:
            height = self.scrollable_content_region.height or 1
            self.scroll_to(y=max(row - height // 2, 0), animate=False, immediate=True)
        self.refresh()

    def _line(self, index: int, width: int) -> tuple[Content, bool]:
        if self._change is None:
            return self._text_lines[index], True
        if self._split:
            return self._split_line(index, width)
        return self._unified_line(self._rows[index])

    def _code(self, row: DiffRow) -> tuple[Content, bool]:
        """The row's text, coloured if its highlight is ready (else plain, and queued)."""
        key = (0, row.old_no or 0) if row.new_no is None else (1, row.new_no)
        cached = self._highlighted.get(key)
        if cached is not None:
            return cached, True
        if known_lexer(self._lexer_path) is None:
            return Content(row.text), True  # no colour for this file: the plain text is final
        if self._painting:
            # Coloured in this frame: no plain frame and second pass after it (issue 44: a
            # decision's next action shows whole a frame sooner).
            lexer = lexer_now(self._lexer_path)
            if lexer is not UNKNOWN:
                assert lexer is None or isinstance(lexer, Lexer)
                coloured = self._highlighted[key] = highlight_line(row.text, lexer)
                return coloured, True
        self._wanted[key] = row.text
        if not self._highlight_scheduled:
            self._highlight_scheduled = True
            self.call_after_refresh(self._highlight_wanted)
        return Content(row.text), False

    def _unified_line(self, row: DiffRow) -> tuple[Content, bool]:
        style = ROW_STYLE[row.kind]
        if row.kind in ("hunk", "meta"):
            pad = " " * (self._label_width + self._gutter * 2 + 2)
            return Content.assemble(pad, (row.text, style)), True
        old = f"{row.old_no:>{self._gutter}}" if row.old_no else " " * self._gutter
        new = f"{row.new_no:>{self._gutter}}" if row.new_no else " " * self._gutter
        code, complete = self._code(row)
        line = Content.assemble(
            (self._label(row), "bold $redline-text-accent"),
            (f"{old} {new} ", "$text-muted"),
            (SIGN[row.kind] + self._mark(row), "bold"),
            code,
        )
        if style:
            line = line.extend_right(self._max_width - len(row.text)).stylize_before(style)
        return line, complete

    def _label(self, row: DiffRow) -> str:
        """The ``#N`` column (shown context wider than the hunks'): a hunk's first row."""
        if not self._label_width:
            return ""
        return f"{f'#{row.label}' if row.label else '':>{self._label_width - 1}} "

    def _half(self, row: DiffRow | None, width: int, new_side: bool) -> tuple[Content, bool]:
        if row is None:
            return Content(" " * width), True
        if row.kind in ("hunk", "meta"):
            return Content.styled(row.text, ROW_STYLE[row.kind]).truncate(
                width, ellipsis=True, pad=True
            ), True
        number = row.new_no if new_side else row.old_no
        code, complete = self._code(row)
        line = Content.assemble(
            (self._label(row), "bold $redline-text-accent"),
            (f"{number or '':>{self._gutter}} ", "$text-muted"),
            (SIGN[row.kind] + self._mark(row), "bold"),
            code,
        ).truncate(width, ellipsis=True, pad=True)
        if ROW_STYLE[row.kind]:
            line = line.stylize_before(ROW_STYLE[row.kind])
        return line, complete

    def _split_line(self, index: int, width: int) -> tuple[Content, bool]:
        pair = self._split_rows[index]
        half = max((width - 1) // 2, 1)
        left, left_done = self._half(pair.left, half, new_side=False)
        right, right_done = self._half(pair.right, width - half - 1, new_side=True)
        return Content.assemble(left, ("│", "$text-muted"), right), left_done and right_done

    def _highlight_wanted(self) -> None:
        self._highlight_scheduled = False
        if not self._wanted or self._change is None:
            return
        lexer = lexer_for(self._lexer_path)
        for key, text in self._wanted.items():
            self._highlighted[key] = highlight_line(text, lexer)
        self._wanted.clear()
        self._strips.clear()
        self.refresh()

    def plain_lines(self) -> list[str]:
        """Every row as plain text (tests read the view through this)."""
        width = max(self.scrollable_content_region.width, 80)
        return [self._line(index, width)[0].plain for index in range(self.row_count)]
