"""Turning one line of ``Content`` into a ``Strip`` for Line-API widgets."""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.style import Style

ParseStyle = Callable[[str | Style], Style]


def content_strip(content: Content, base: Style, parse_style: ParseStyle) -> Strip:
    """Render a single-line ``Content`` on ``base`` (the widget's own colours)."""
    segments = [
        Segment(text, style.rich_style)
        for text, style in content.render(base, end="", parse_style=parse_style)
    ]
    return Strip(segments, content.cell_length)


def fit(strip: Strip, scroll_x: int, width: int, base: Style) -> Strip:
    """Crop horizontally and pad to the widget's width with its background."""
    return strip.crop_extend(scroll_x, scroll_x + width, base.rich_style)
