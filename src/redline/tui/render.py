"""Turning one line of ``Content`` into a ``Strip`` for Line-API widgets."""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.style import Style

from redline.termtext import one_line

ParseStyle = Callable[[str | Style], Style]


def content_strip(content: Content, base: Style, parse_style: ParseStyle) -> Strip:
    """Render a single-line ``Content`` on ``base`` (the widget's own colours).

    Every Line-API widget (the pending stack, the diff, the activity log) draws through
    here: text from agents is shown by ``redline.termtext`` (a control or an invisible
    format character as ``\x1b`` / ``<U+202E>``), never sent to the terminal."""
    segments = []
    changed = False
    for text, style in content.render(base, end="", parse_style=parse_style):
        shown = one_line(text, tab=True)
        changed = changed or shown is not text
        segments.append(Segment(shown, style.rich_style))
    return Strip(segments) if changed else Strip(segments, content.cell_length)


def fit(strip: Strip, scroll_x: int, width: int, base: Style) -> Strip:
    """Crop horizontally and pad to the widget's width with its background."""
    return strip.crop_extend(scroll_x, scroll_x + width, base.rich_style)
