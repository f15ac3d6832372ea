"""Searching on Python's own `ast` tree, with libcst's match semantics, for common shapes.

libcst parses about nine times slower than :func:`ast.parse`, and a search (no rewrite)
needs no libcst tree at all when its matches can be found and placed on the `ast` tree
exactly as the libcst matcher finds and places them. This module does that for the
patterns whose every part has a known one-to-one counterpart in `ast` (calls,
attributes, comparisons, binary and unary operators, subscripts, comprehensions,
lambdas, names and literals, and ``raise``/``assert`` statements; ``$X`` and ``$$$X``
without repeated names). Any other pattern is *unsupported*: it goes the libcst way.

The translation stays exact by refusing, not by guessing: where `ast` and libcst could
disagree about a node (f-string parts `ast` cannot place for sure, ``case`` patterns,
a parenthesised tuple index it cannot tell apart, starred subscripts, a statement
before ``;``), a match there makes :func:`search_text` answer
``None`` and the whole file takes the libcst way. The same matcher serves rewrites as a
filter (:func:`node_may_match`): without the source text it answers "maybe" wherever it
cannot be sure, so it never drops a statement that libcst would match in.

Positions: `ast` columns count UTF-8 bytes; matches report character offsets into the
text. An `ast` expression's span leaves out its own parentheses, as the libcst matcher's
spans do (a parenthesised tuple is the exception, hence no tuple roots here).

This module walks a file's tree and reports matches; compiling a pattern is
:mod:`ast_pattern`, comparing one node with it :mod:`ast_compare`, and the byte prefilter
that spares parsing files without a match :mod:`ast_prefilter` (their public names are
importable from here too).
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from redline.tools.ast_edit.ast_compare import Source, Unsure, match_node, node_may_match
from redline.tools.ast_edit.ast_pattern import AstPattern, compile_ast_pattern, pattern_for
from redline.tools.ast_edit.ast_prefilter import (
    bytes_have_symbols,
    bytes_may_match,
    required_symbols,
)
from redline.tools.ast_edit.results import FileResult, Match
from redline.tools.ast_edit.skeleton import rarest
from redline.workspace.pyparse import parse_expression, parse_module

__all__ = [
    "AstPattern",
    "Located",
    "Source",
    "anchor_lines",
    "bytes_have_symbols",
    "bytes_may_match",
    "compile_ast_pattern",
    "find_spans",
    "locate_matches",
    "node_may_match",
    "pattern_for",
    "required_symbols",
    "search_spans",
    "search_text",
]


def _placed(node: ast.AST, fstring: ast.AST, src: Source, index: int) -> tuple[int, int, int]:
    """The span of a match inside an f-string, if `ast` surely placed it right.

    Before Python 3.12, `ast` places an f-string's parts by searching the string for
    their text, so only text found once in the f-string is trusted, and it must parse
    back to the same tree.
    """
    start, end = src.span(node)
    outer_start, outer_end = src.span(fstring)
    if src.text[outer_start:outer_end].count(src.text[start:end]) != 1:
        raise Unsure("an f-string part that may be placed loosely")
    try:
        again = parse_expression(src.text[start:end])
    except (SyntaxError, ValueError, RecursionError):
        raise Unsure("an f-string part placed loosely") from None
    if ast.dump(again) != ast.dump(node):
        raise Unsure("an f-string part placed loosely")
    return start, end, index


_OPAQUE = (ast.JoinedStr, ast.match_case)
# Fields never holding a node worth visiting: names, flags, operators, contexts.
_SCALAR_FIELDS = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "id",
        "attr",
        "arg",
        "type_comment",
        "kind",
        "level",
        "module",
        "is_async",
        "conversion",
        "simple",
        "name",
        "asname",
        "names",
        "type_ignores",
        "tag",
    }
)
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {ast.Constant: ()}


def _child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of ``kind`` that hold nodes (or lists of nodes) to walk into."""
    if issubclass(kind, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
        fields: tuple[str, ...] = ()
    else:
        fields = tuple(f for f in kind._fields if f not in _SCALAR_FIELDS)
    _CHILD_FIELDS[kind] = fields
    return fields


_STATEMENTS = frozenset(
    kind for kind in vars(ast).values() if isinstance(kind, type) and issubclass(kind, ast.stmt)
)
_DECORATED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def anchor_lines(src: Source, sources: Sequence[str]) -> list[int] | None:
    """Sorted numbers of the lines holding each pattern's rarest anchor (see
    :mod:`skeleton`): a statement that spans none of them holds no match. None when a
    pattern has no anchor (every statement may then hold a match)."""
    text = src.text
    offsets: list[int] = []
    for source in sources:
        anchor = rarest(text, source)
        if anchor is None:
            return None
        offsets.extend(found.start() for found in anchor.text.finditer(text))
    starts = src.starts
    return sorted({bisect.bisect_right(starts, offset) for offset in offsets})


def find_spans(
    tree: ast.Module,
    src: Source,
    patterns: Sequence[tuple[int, AstPattern]],
    lines: Sequence[int] | None = None,
) -> list[tuple[int, int, int]] | None:
    """(start, end, op) of every match, nested ones included; None when unsure.

    With ``lines`` (:func:`anchor_lines`), statements spanning none of those lines are
    not walked into: every match's text holds an anchor, and lies inside each statement
    that contains it.
    """
    wanted: dict[type[ast.AST], list[tuple[int, AstPattern]]] = {}
    for index, pattern in patterns:
        wanted.setdefault(pattern.root_type, []).append((index, pattern))
    found: list[tuple[int, int, int]] = []
    opaque: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    count = len(lines) if lines is not None else 0
    bisect_left = bisect.bisect_left
    try:
        while True:
            while stack:
                node = stack.pop()
                if node is None:
                    continue  # a dict's `**` entry has no key
                kind = type(node)
                if lines is not None and kind in _STATEMENTS:
                    first: int = node.lineno  # type: ignore[attr-defined]
                    if kind in _DECORATED and node.decorator_list:  # type: ignore[attr-defined]
                        first = node.decorator_list[0].lineno  # type: ignore[attr-defined]
                    at = bisect_left(lines, first)
                    if at == count or lines[at] > node.end_lineno:  # type: ignore[attr-defined]
                        continue
                entries = wanted.get(kind)
                if entries is not None:
                    for index, pattern in entries:
                        if match_node(pattern.root, node, src):
                            start, end = src.span(node)
                            found.append((start, end, index))
                if kind in _OPAQUE:
                    opaque.append(node)
                    continue
                fields = _CHILD_FIELDS.get(kind)
                if fields is None:
                    fields = _child_fields(kind)
                for name in fields:
                    value = getattr(node, name)
                    if type(value) is list:
                        stack.extend(value)
                    elif value is not None:
                        stack.append(value)
            if not opaque:
                break
            # f-strings and `case` patterns: a match inside them makes the file unsure
            # (`ast` places f-string parts loosely before 3.12); the guard and body of a
            # case are ordinary code.
            holder = opaque.pop()
            part: ast.AST = holder
            if isinstance(holder, ast.match_case):
                part = holder.pattern
                stack.extend(holder.body)
                if holder.guard is not None:
                    stack.append(holder.guard)
            for inner in ast.walk(part):
                for index, pattern in wanted.get(type(inner), ()):
                    if not match_node(pattern.root, inner, None):
                        continue
                    if part is not holder or not match_node(pattern.root, inner, src):
                        raise Unsure("a match inside a case pattern")
                    found.append(_placed(inner, holder, src, index))
    except (Unsure, RecursionError):
        return None
    # The libcst way reports by start, then operation, a match before those nested in it.
    found.sort(key=lambda item: (item[0], item[2], -item[1]))
    return found


@dataclass(frozen=True)
class Located:
    """Where the `ast` search put each operation's matches: the lines they start on."""

    tree: ast.Module
    lines: dict[int, list[int]]


def _search(
    text: str, ops: Sequence[tuple[int, str]]
) -> tuple[ast.Module, Source, list[tuple[int, int, int]]] | None:
    """The tree, the source and the spans of every match (see :func:`find_spans`), or
    None when the libcst way must decide."""
    patterns: list[tuple[int, AstPattern]] = []
    for index, source in ops:
        pattern = pattern_for(source)
        if pattern is None:
            return None
        patterns.append((index, pattern))
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    src = Source(text)
    spans = find_spans(tree, src, patterns, anchor_lines(src, [source for _, source in ops]))
    return None if spans is None else (tree, src, spans)


def search_spans(
    text: str, ops: Sequence[tuple[int, str]]
) -> tuple[list[int], list[tuple[int, int, int]]] | None:
    """The line starts and the (start, end, op) spans of every match, nested ones
    included (as :func:`find_spans`), or None when the libcst way must decide."""
    found = _search(text, ops)
    if found is None:
        return None
    _tree, src, spans = found
    return src.starts, spans


def locate_matches(text: str, ops: Sequence[tuple[int, str]]) -> Located | None:
    """The `ast` tree and, per operation, the sorted lines where its matches (nested ones
    included) start; None when the libcst way must decide (as for :func:`search_text`).
    A rewrite hands libcst only the statements holding those lines."""
    found = _search(text, ops)
    if found is None:
        return None
    tree, src, spans = found
    starts = src.starts
    lines: dict[int, set[int]] = {index: set() for index, _ in ops}
    for start, _end, index in spans:
        lines[index].add(bisect.bisect_right(starts, start))
    return Located(tree, {index: sorted(numbers) for index, numbers in lines.items()})


def search_text(text: str, ops: Sequence[tuple[int, str]]) -> FileResult | None:
    """The search result (no rewrite) for ``(op index, pattern source)`` pairs in
    ``text``, or None when the libcst way must decide (unsupported pattern, code `ast`
    cannot parse, or a match where the two could differ)."""
    found = _search(text, ops)
    if found is None:
        return None
    _tree, src, spans = found
    if not spans:
        return FileResult("")
    starts = src.starts
    matches: list[Match] = []
    for start, end, index in spans:
        matches.append(Match.at(starts, index, start, end, text[start:end]))
    return FileResult("", tuple(matches))
