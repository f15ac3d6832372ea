"""Rewriting ``F($$$A)`` into ``G($$$A)`` on the `ast` search alone, without libcst.

The commonest rewrite renames a call and keeps its arguments (``print($$$A)`` into
``logger.info($$$A)``). libcst's way (:func:`.rewrite.render`) writes, for such a
template, ``G(`` + what stood between the call's brackets + ``)``: a ``$$$`` capture that
fills a bracketed list takes the whole layout inside the brackets (line breaks, comments,
a trailing comma), an empty one leaves ``G()``, it is never re-indented when the call's
``(`` is on the match's first line, and a call never needs parentheses around it. Here
the same text is spliced from the match spans the `ast` search finds (which are libcst's
spans), so the rewrite imports no libcst, and its template is compiled by libcst only when
a file needs the libcst way after all.

Anything this cannot answer for sure gives None, and the file takes the libcst way with
the same result as before: a search the `ast` way is unsure of, a match whose text does
not start with ``F(`` exactly as the pattern spells it (``a . b(x)``), or a rewritten file
that would not parse (the libcst way then checks statement by statement). As the libcst
way does in a rewrite, a match inside another match is not rewritten on its own.
"""

from __future__ import annotations

import re

from redline.tools.ast_edit.ast_match import search_spans
from redline.tools.ast_edit.results import FileResult, Match, splice
from redline.workspace.pyparse import parse_module

# What may stand between the brackets of a call with no argument.
_NOTHING = re.compile(r"(?:[ \t\f\r\n]|\\\r?\n|\\\r|#[^\r\n]*)*")


def splice_calls(text: str, index: int, source: str, old: str, new: str) -> FileResult | None:
    """The rewrite of operation ``index`` (pattern ``source``: ``old($$$X)``, template
    ``new($$$X)``) in ``text``, or None when the libcst way must decide."""
    found = search_spans(text, [(index, source)])
    if found is None:
        return None
    starts, spans = found
    matches: list[Match] = []
    outer_end = -1
    head = old + "("
    for start, end, _index in spans:
        if start < outer_end:
            continue  # inside the previous match: rewritten with it
        outer_end = end
        piece = text[start:end]
        if not piece.startswith(head) or not piece.endswith(")"):
            return None
        inside = piece[len(head) : -1]
        if _NOTHING.fullmatch(inside):
            inside = ""
        replacement = f"{new}({inside})"
        if replacement == piece:
            continue  # rewriting code into itself is no replacement
        matches.append(Match.at(starts, index, start, end, piece, replacement))
    if not matches:
        return FileResult("")
    kept = tuple(matches)
    new_text = splice(text, kept)
    try:
        parse_module(new_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return FileResult("", kept, old_text=text, new_text=new_text)
