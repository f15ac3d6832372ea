"""Parsing a user's Python text with :mod:`ast`, without the parser's warnings.

Python's parser warns about code it still accepts (an invalid escape such as ``'\\d'``, a
keyword glued to a number as in ``1if``); for a user's files that is noise on the
terminal or over the dashboard. Everything parsed here is parsed under one name that a
warnings filter silences, so other warnings stay untouched and no thread swaps the
process-wide filters (as ``warnings.catch_warnings()`` would).
"""

from __future__ import annotations

import ast
import re
import warnings

_PARSED_NAME = "<redline parse>"
_QUIET_MODULE = re.compile(re.escape(_PARSED_NAME))
_QUIET_CATEGORIES = (SyntaxWarning, DeprecationWarning)
# The entries `warnings.filterwarnings` makes for them, to see whether they are in force.
_QUIET = tuple(("ignore", None, category, _QUIET_MODULE, 0) for category in _QUIET_CATEGORIES)


def _quiet() -> None:
    # Checked at every parse: restoring a `warnings.catch_warnings()` (pytest does around
    # each test, an SDK user may) drops a filter added at import.
    if not all(item in warnings.filters for item in _QUIET):
        for category in _QUIET_CATEGORIES:
            warnings.filterwarnings("ignore", category=category, module=_QUIET_MODULE.pattern)


def parse_module(text: str) -> ast.Module:
    """:func:`ast.parse` of a module, silently (the same errors)."""
    _quiet()
    return ast.parse(text, filename=_PARSED_NAME)


def parse_expression(text: str) -> ast.expr:
    """The expression ``text`` holds, parsed silently (the same errors)."""
    _quiet()
    return ast.parse(text, filename=_PARSED_NAME, mode="eval").body
