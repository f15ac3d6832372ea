"""Per-line syntax highlighting with Pygments and Textual's highlight theme.

Lines are lexed one at a time so only what is on screen is ever highlighted; a
multi-line string may be coloured a little wrong, which a diff reader tolerates.
"""

from __future__ import annotations

from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound
from textual.content import Content, Span
from textual.highlight import HighlightTheme

#: Returned by :func:`known_lexer` for a path not looked up yet.
UNKNOWN = object()
_looked_up: dict[str, Lexer | None] = {}


@lru_cache(maxsize=64)
def lexer_for(path: str) -> Lexer | None:
    try:
        found = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        found = None
    if len(_looked_up) < 256:
        _looked_up[path] = found
    return found


def known_lexer(path: str) -> Lexer | object | None:
    """The lexer of ``path`` if it was looked up before, else :data:`UNKNOWN`: the first
    lookup in a process scans every Pygments lexer's file patterns (about a third of a
    second), so a diff paints plain first and looks it up a frame later."""
    return _looked_up.get(path, UNKNOWN)


def lexer_now(path: str) -> Lexer | object | None:
    """The lexer of ``path`` if finding it costs no scan of every lexer's patterns (it was
    looked up before, or this process has made its first lookup), else :data:`UNKNOWN`."""
    found = _looked_up.get(path, UNKNOWN)
    if found is UNKNOWN and _looked_up:
        return lexer_for(path)
    return found


def highlight_line(text: str, lexer: Lexer | None) -> Content:
    if lexer is None or not text:
        return Content(text)
    styles = HighlightTheme.STYLES
    spans: list[Span] = []
    start = 0
    for token_type, token in lexer.get_tokens(text):
        end = start + len(token)
        kind = token_type
        while kind is not None:
            style = styles.get(kind)
            if style:
                spans.append(Span(start, end, style))
                break
            kind = kind.parent
        start = end
    return Content(text, spans=spans)
