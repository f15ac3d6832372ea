"""Instantiating a rewrite template for one match.

Captures go in as their original source text (comments and layout inside them survive),
re-indented when they move to another indentation level, and parenthesised when they
land in a slot that binds tighter than they do. Only the matched span is replaced.
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from collections.abc import Sequence
from functools import lru_cache

import libcst as cst

from redline.tools.ast_edit.match import Capture, Found
from redline.tools.ast_edit.nodes import child_nodes, unwrap
from redline.tools.ast_edit.pattern import CompiledTemplate, TemplateSlot
from redline.tools.ast_edit.positions import Positions, Span
from redline.tools.ast_edit.precedence import is_a, needs_parens

_INDENT_CHARS = " \t\f"


def match_span(found: Found, positions: Positions) -> Span:
    """The replaced text: a matched expression without its own parentheses, or statements."""
    if found.statements:
        return positions.item(found.nodes[0])[0], positions.item(found.nodes[-1])[1]
    return positions.syntactic(found.nodes[0])


def line_indent(code: str, offset: int, start: int | None = None) -> str:
    """The blanks that begin the line holding ``offset`` (``start``: that line's start)."""
    if start is None:
        start = max(code.rfind("\n", 0, offset), code.rfind("\r", 0, offset)) + 1
    end = start
    while end < len(code) and code[end] in _INDENT_CHARS:
        end += 1
    return code[start:end]


def _indent(positions: Positions, offset: int) -> str:
    return line_indent(positions.code, offset, positions.line_start(offset))


def capture_span(capture: Capture, positions: Positions) -> Span | None:
    if not capture.nodes:
        return None
    return positions.item(capture.nodes[0])[0], positions.item(capture.nodes[-1])[1]


_OPENERS = "([{"
_CLOSERS = ")]}"


class _Tokens:
    """Significant tokens of the matched code (comments and line breaks skipped)."""

    def __init__(self, code: str, span: Span, line_start: int) -> None:
        # Only the match is tokenized (never the code before it on its line: a line of
        # thousands of matches must not be read once per match). Indentation before it
        # is kept, so statement blocks inside the span still dedent consistently.
        prefix = code[line_start : span[0]]
        begin = line_start if not prefix.strip(" \t\f") else span[0]
        fragment = code[begin : span[1]]
        rows = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", fragment)]
        self.tokens: list[tuple[int, int, str]] = []
        skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        try:
            for token in tokenize.generate_tokens(io.StringIO(fragment).readline):
                if token.type in skip or token.type == tokenize.ENDMARKER:
                    continue
                lo = begin + rows[token.start[0] - 1] + token.start[1]
                hi = begin + rows[token.end[0] - 1] + token.end[1]
                self.tokens.append((lo, hi, token.string))
        except (tokenize.TokenError, SyntaxError, IndexError):
            self.tokens = []
        self.starts = [token[0] for token in self.tokens]

    def before(self, offset: int) -> tuple[int, int, str] | None:
        index = bisect.bisect_right(self.starts, offset - 1) - 1
        while index >= 0 and self.tokens[index][1] > offset:
            index -= 1
        return self.tokens[index] if index >= 0 else None

    def after(self, offset: int) -> list[tuple[int, int, str]]:
        index = bisect.bisect_left(self.starts, offset)
        return self.tokens[index : index + 2]


class _LineTokens:
    """The same answers as :class:`_Tokens` for a match on one line, without tokenizing.

    On one line, between two tokens there is only ``" \\t\\f"`` (a comment or a line
    break would end the line), and every offset asked about is a token boundary, so the
    neighbouring token is found by skipping blanks. Brackets, commas and colons are
    one-character tokens; for other tokens only their last or first character is
    reported, which is never one of those.
    """

    def __init__(self, code: str, span: Span) -> None:
        self.code = code
        self.lo, self.hi = span

    def before(self, offset: int) -> tuple[int, int, str] | None:
        code, index = self.code, offset
        while index > self.lo and code[index - 1] in _INDENT_CHARS:
            index -= 1
        if index <= self.lo:
            return None
        return index - 1, index, code[index - 1]

    def after(self, offset: int) -> list[tuple[int, int, str]]:
        found: list[tuple[int, int, str]] = []
        code, index = self.code, offset
        while len(found) < 2:
            while index < self.hi and code[index] in _INDENT_CHARS:
                index += 1
            if index >= self.hi:
                break
            found.append((index, index + 1, code[index]))
            if code[index] not in _SINGLE:
                break  # a longer token: what follows it is never asked about
            index += 1
        return found


# Tokens that are one character long wherever they occur.
_SINGLE = frozenset("()[]{},;")


def _tokens(positions: Positions, span: Span) -> _Tokens | _LineTokens:
    """The match's tokens: scanned directly when it is on one line, else tokenized."""
    code = positions.code
    if "\n" in code[span[0] : span[1]] or "\r" in code[span[0] : span[1]]:
        return _Tokens(code, span, positions.line_start(span[0]))
    return _LineTokens(code, span)


def _bracket_layout(tokens: _Tokens | _LineTokens, lo: int, hi: int) -> Span:
    """Widen a whole-list capture to its brackets: keeps line breaks, comments and a
    trailing comma (``f(  # why\n    a,\n    b,\n)``)."""
    opener = tokens.before(lo)
    following = tokens.after(hi)
    if following and following[0][2] == ",":
        following = following[1:]
    if (
        opener is None
        or opener[2] not in _OPENERS
        or not following
        or following[0][2] not in _CLOSERS
    ):
        return lo, hi
    return opener[1], following[0][0]


def _string_spans(capture: Capture, positions: Positions) -> list[Span]:
    spans: list[Span] = []
    stack = list(capture.nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleString, cst.FormattedString)):
            start, end = positions.syntactic(node)
            if "\n" in positions.code[start:end] or "\r" in positions.code[start:end]:
                spans.append((start, end))
            continue
        stack.extend(child for child, _ in child_nodes(node))
    return spans


def _reindent(text: str, start: int, source: str, target: str, strings: list[Span]) -> str:
    """Move continuation lines from indentation ``source`` to ``target``."""
    if source == target or ("\n" not in text and "\r" not in text):
        return text
    lines = text.splitlines(keepends=True)
    out = [lines[0]]
    offset = start + len(lines[0])
    for line in lines[1:]:
        inside = any(lo < offset < hi for lo, hi in strings)
        if inside or not line.strip():
            out.append(line)
        else:
            width = len(line) - len(line.lstrip(_INDENT_CHARS))
            removed = min(width, len(source))
            out.append(target + line[removed:])
        offset += len(line)
    return "".join(out)


def _indent_template_text(
    template: CompiledTemplate, lo: int, hi: int, base: str, line_starts: Sequence[int]
) -> str:
    """Template text ``[lo, hi)`` with the match's indentation added to each new line."""
    piece = template.text[lo:hi]
    if not base or "\n" not in piece:
        return piece
    out: list[str] = []
    last = 0
    for index, char in enumerate(piece):
        if char != "\n":
            continue
        out.append(piece[last : index + 1])
        last = index + 1
        line_no = bisect.bisect_right(line_starts, lo + index + 1) - 1
        rest = template.text[lo + index + 1 :].split("\n", 1)[0]
        if line_no not in template.string_lines and rest.strip():
            out.append(base)
    out.append(piece[last:])
    return "".join(out)


@lru_cache(maxsize=64)
def _line_starts(text: str) -> tuple[int, ...]:
    return (0, *(i + 1 for i, c in enumerate(text) if c == "\n"))


def _empty_cut(template: CompiledTemplate, slot: TemplateSlot, floor: int) -> Span:
    """What to remove for a ``$$$`` that captured nothing: its line, or it and one comma."""
    text = template.text
    if slot.own_line:
        start = text.rfind("\n", 0, slot.start) + 1
        end = text.find("\n", slot.end)
        if end >= 0:
            return max(start, floor), end + 1
        return max(start - 1 if start > 0 else 0, floor), len(text)
    right = slot.end
    while right < len(text) and text[right] in " \t":
        right += 1
    if right < len(text) and text[right] == ",":
        right += 1
        while right < len(text) and text[right] in " \t":
            right += 1
        return slot.start, right
    left = slot.start
    while left > floor and text[left - 1] in " \t":
        left -= 1
    if left > floor and text[left - 1] == ",":
        return left - 1, slot.end
    return slot.start, slot.end


def _header_comments(code: str, tokens: _Tokens | _LineTokens, start: int) -> list[str]:
    """Comments between a block's header and its first statement, which starts at
    ``start``: they belong to the block, and a rewrite of the block keeps them."""
    previous = tokens.before(start)
    if previous is None or previous[2] != ":":
        return []
    return re.findall(r"#[^\r\n]*", code[previous[1] : start])


def _inline_suite(template: CompiledTemplate, slot: TemplateSlot) -> bool:
    """Whether the slot is the body written on its header's line (``def f(): $$$B``)."""
    return template.text[: slot.start].rstrip(" \t").endswith(":")


def _indent_step(inner: str, outer: str) -> str:
    return inner[len(outer) :] if inner.startswith(outer) and inner != outer else "    "


def render(
    template: CompiledTemplate,
    found: Found,
    positions: Positions,
) -> str:
    """The replacement text for ``found``, ready to splice over its span."""
    code = positions.code
    span = match_span(found, positions)
    base = _indent(positions, span[0])
    line_starts = _line_starts(template.text)
    pieces: list[str] = []
    cursor = 0
    tokens: _Tokens | _LineTokens | None = None
    for slot in template.slots:
        capture = found.env[slot.name]
        cut = (slot.start, slot.end)
        if slot.multi and not capture.nodes:
            cut = _empty_cut(template, slot, cursor)
        if cut[0] < cursor:
            cut = (cursor, max(cut[1], cursor))
        pieces.append(_indent_template_text(template, cursor, cut[0], base, line_starts))
        cursor = cut[1]
        captured = capture_span(capture, positions)
        if captured is None:
            continue
        if (
            capture.multi
            and slot.start > 0
            and template.text[slot.start - 1] in _OPENERS
            and template.text[slot.end : slot.end + 1] in tuple(_CLOSERS)
        ):
            if tokens is None:
                tokens = _tokens(positions, span)
            captured = _bracket_layout(tokens, captured[0], captured[1])
        text = code[captured[0] : captured[1]]
        target = base + slot.line_indent
        statements = capture.multi and is_a(
            capture.nodes[0], (cst.BaseSmallStatement, cst.BaseCompoundStatement)
        )
        comments: list[str] = []
        if statements:
            if tokens is None:
                tokens = _tokens(positions, span)
            comments = _header_comments(code, tokens, captured[0])
        newline = positions.newline
        if (
            statements
            and _inline_suite(template, slot)
            and ("\n" in text or "\r" in text or comments)
        ):
            # Statements over several lines cannot follow `def f():` on its line: open an
            # indented block, or the later statements would leave the body. The comment
            # after the original header stays after the new one.
            step = _indent_step(_indent(positions, captured[0]), base)
            target = target + step
            while pieces[-1].endswith(" "):
                pieces[-1] = pieces[-1][:-1]
            if comments:
                pieces.append("  " + comments.pop(0))
            pieces.append(newline + target)
        if comments:
            # Comments between the header and the first statement go above it.
            text = "".join(comment + newline + target for comment in comments) + text
        if "\n" in text or "\r" in text:
            source = _indent(positions, captured[0])
            text = _reindent(text, captured[0], source, target, _string_spans(capture, positions))
            if (
                is_a(slot.parent, cst.ImportAlias)
                and template.text[slot.start - 1 : slot.start] not in _OPENERS
            ):
                # A name list over several lines needs the brackets it had.
                text = f"({text})"
        if not capture.multi:
            parent, field = slot.parent, slot.field
            if parent is None:
                parent, field = found.parent, found.field
                if getattr(found.nodes[0], "lpar", None):
                    parent = None
            if needs_parens(unwrap(capture.node), parent, field):
                text = f"({text})"
        pieces.append(text)
    pieces.append(_indent_template_text(template, cursor, len(template.text), base, line_starts))
    result = "".join(pieces)
    root = template.root
    if (
        root is not None
        and not found.statements
        and not getattr(found.nodes[0], "lpar", None)
        and not (
            is_a(root, cst.Name)
            and template.slots
            and len(template.slots) == 1
            and template.slots[0].parent is None
        )
        and needs_parens(root, found.parent, found.field)
    ):
        result = f"({result})"
    return result
