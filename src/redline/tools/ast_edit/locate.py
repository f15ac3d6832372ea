"""Cheap steps before libcst: the word prefilter and locating candidate statements.

A match contains every identifier and keyword of its pattern as a whole word, so a file
or statement lacking one cannot match (punctuation is never used: ``print (x)`` must not
be missed). The ``ast`` module parses far faster than libcst; its statement tree tells
which statements (as small as possible) can contain a match, and only those reach libcst.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import keyword
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


# Non-ASCII bytes count as identifier characters: conservative, never loses a match.
_BYTES_WORD_CHAR = "[A-Za-z0-9_\\x80-\\xff]"
# A keyword may follow a number with nothing between (`x = 1if y else 2` parses, with a
# warning): before a keyword, only a character that cannot end a number literal (not a
# digit, a hex digit or the imaginary j) makes the two one word.
_TEXT_KEYWORD_BEFORE = r"[^\W\da-fA-FjJ]"
_BYTES_KEYWORD_BEFORE = "[G-IK-Zg-ik-z_\\x80-\\xff]"


def edge_before(word: str, data: bool) -> str:
    """The class of characters that, just before ``word``, make it part of a longer word."""
    if keyword.iskeyword(word):
        return _BYTES_KEYWORD_BEFORE if data else _TEXT_KEYWORD_BEFORE
    return _BYTES_WORD_CHAR if data else r"\w"


def edge_after(data: bool) -> str:
    """A lookahead: no identifier character follows the word."""
    return f"(?!{_BYTES_WORD_CHAR})" if data else r"(?!\w)"


# The edge before a word is checked after it (a lookbehind over the word): a regex that
# starts with a lookbehind loses the fast scan for its literal, about thirty times slower.
@lru_cache(maxsize=512)
def word_regex(word: str) -> re.Pattern[str]:
    escaped = re.escape(word)
    return re.compile(f"{escaped}(?<!{edge_before(word, False)}{escaped}){edge_after(False)}")


@lru_cache(maxsize=512)
def word_bytes_regex(word: str) -> re.Pattern[bytes]:
    escaped = re.escape(word)
    pattern = f"{escaped}(?<!{edge_before(word, True)}{escaped}){edge_after(True)}"
    return re.compile(pattern.encode())


def bytes_have_words(data: bytes, words: Iterable[str]) -> bool:
    for word in words:
        encoded = word.encode()
        if encoded not in data or word_bytes_regex(word).search(data) is None:
            return False
    return True


def text_has_words(text: str, words: Iterable[str]) -> bool:
    return all(word in text and word_regex(word).search(text) for word in words)


def line_starts(text: str) -> list[int]:
    """Offsets where lines start (Python's own line breaks only), plus the text length."""
    if "\r" not in text:
        # Only "\n" breaks lines: summing line lengths runs in C.
        lengths = map((1).__add__, map(len, text.split("\n")))
        starts = [0, *itertools.accumulate(lengths)]
        starts.pop()  # the offset one past the end
        if starts[-1] != len(text):
            starts.append(len(text))
        return starts
    starts = [0]
    starts.extend(found.end() for found in _LINE_BREAK.finditer(text))
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts


@dataclass(frozen=True)
class Unit:
    """Lines ``[first, last]`` (1-based) holding whole statements, and the ops to run there."""

    first: int
    last: int
    ops: frozenset[int]


KIND_PREFIX = "\0kind:"


class _Words:
    """Offsets of each word; a key starting with KIND_PREFIX is a structural
    candidate whose (sorted) offsets the caller gives."""

    def __init__(
        self, text: str, words: Iterable[str], given: dict[str, list[int]] | None = None
    ) -> None:
        self.offsets = {
            w: [m.start() for m in word_regex(w).finditer(text)]
            for w in set(words)
            if not w.startswith(KIND_PREFIX)
        }
        self.offsets.update(given or {})

    def within(self, word: str, ranges: Sequence[tuple[int, int]]) -> bool:
        offsets = self.offsets[word]
        for lo, hi in ranges:
            index = bisect.bisect_left(offsets, lo)
            if index < len(offsets) and offsets[index] < hi:
                return True
        return False

    def all_within(self, words: Iterable[str], ranges: Sequence[tuple[int, int]]) -> bool:
        return all(self.within(word, ranges) for word in words)


_WHOLE = None


def _children(statement: ast.stmt) -> list[list[ast.stmt]]:
    lists: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(statement, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            lists.append(value)
    for holder in getattr(statement, "handlers", ()) or getattr(statement, "cases", ()):
        if holder.body:
            lists.append(holder.body)
    return lists


def _first_line(statement: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(statement, "decorator_list", None) or []
    first: int = statement.lineno
    for decorator in decorators:
        first = min(first, decorator.lineno)
    return first


class Locator:
    """Finds the statements each operation's words can match in, smallest first."""

    def __init__(
        self,
        text: str,
        tree: ast.Module,
        op_words: dict[int, frozenset[str]],
        compound: dict[int, tuple[type[ast.AST], ...]],
        given: dict[str, list[int]] | None = None,
    ) -> None:
        self.text = text
        self.tree = tree
        self.starts = line_starts(text)
        self.lines = len(self.starts) - 1
        self.op_words = op_words
        self.compound = compound
        self.words = _Words(text, (w for words in op_words.values() for w in words), given)

    def _range(self, first: int, last: int) -> tuple[int, int]:
        return self.starts[first - 1], self.starts[min(last, len(self.starts) - 1)]

    def _starts_line(self, statement: ast.stmt) -> bool:
        """Whether only indentation precedes the statement on its first line."""
        if getattr(statement, "decorator_list", None):
            return True
        lo = self.starts[statement.lineno - 1]
        line = self.text[lo : self.starts[min(statement.lineno, len(self.starts) - 1)]]
        prefix = (
            line[: statement.col_offset]
            if line.isascii()
            else line.encode("utf-8")[: statement.col_offset].decode("utf-8", "replace")
        )
        return not prefix.strip()

    def units(self) -> list[Unit]:
        raw: list[Unit] = []
        every = frozenset(self.op_words)
        for statement in self.tree.body:
            found = self._visit(statement, every, elif_child=False)
            if found is _WHOLE:
                ops = self._ops_in(statement, every)
                raw.append(
                    Unit(_first_line(statement), statement.end_lineno or statement.lineno, ops)
                )
            else:
                raw.extend(found)
        return _merge(raw)

    def _ops_in(self, statement: ast.stmt, ops: frozenset[int]) -> frozenset[int]:
        span = [self._range(_first_line(statement), statement.end_lineno or statement.lineno)]
        return frozenset(op for op in ops if self.words.all_within(self.op_words[op], span))

    def _visit(
        self, statement: ast.stmt, ops: frozenset[int], elif_child: bool
    ) -> list[Unit] | None:
        here = self._ops_in(statement, ops)
        if not here:
            return []
        children = _children(statement)
        if not children:
            return _WHOLE
        for op in here:
            kinds = self.compound.get(op)
            if kinds and isinstance(statement, kinds):
                return _WHOLE
        covered = sorted(
            (_first_line(child), child.end_lineno or child.lineno)
            for block in children
            for child in block
        )
        header: list[tuple[int, int]] = []
        line = _first_line(statement)
        for first, last in covered:
            if first > line:
                header.append(self._range(line, first - 1))
            line = max(line, last + 1)
        end = statement.end_lineno or statement.lineno
        if line <= end:
            header.append(self._range(line, end))
        for op in here:
            if self.words.all_within(self.op_words[op], header):
                return _WHOLE
        units: list[Unit] = []
        for block in children:
            for child in block:
                if not self._starts_line(child):
                    return _WHOLE
                is_elif = (
                    isinstance(statement, ast.If)
                    and block is statement.orelse
                    and isinstance(child, ast.If)
                    and self.text.startswith("elif", self._offset(child))
                )
                found = self._visit(child, here, is_elif)
                if found is _WHOLE:
                    if is_elif:
                        return _WHOLE
                    units.append(
                        Unit(
                            _first_line(child),
                            child.end_lineno or child.lineno,
                            self._ops_in(child, here),
                        )
                    )
                else:
                    units.extend(found)
        return units

    def _offset(self, statement: ast.stmt) -> int:
        lo = self.starts[statement.lineno - 1]
        line = self.text[lo : self.starts[min(statement.lineno, len(self.starts) - 1)]]
        if line.isascii():
            return lo + statement.col_offset
        return lo + len(line.encode("utf-8")[: statement.col_offset].decode("utf-8", "replace"))


def _merge(units: list[Unit]) -> list[Unit]:
    units.sort(key=lambda unit: (unit.first, unit.last))
    merged: list[Unit] = []
    for unit in units:
        if merged and unit.first <= merged[-1].last:
            last = merged[-1]
            merged[-1] = Unit(last.first, max(last.last, unit.last), last.ops | unit.ops)
        else:
            merged.append(unit)
    return merged
