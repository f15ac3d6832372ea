"""A pattern's token skeleton: what every match spells out, found without parsing.

For a pattern the `ast` search supports (:mod:`ast_match`), a match differs from the
pattern's own text only in what its metavariables stand for and in what Python lets
code put between two tokens without changing the tree: whitespace, line breaks and
backslash continuations, comments, parentheses, and trailing commas. So two pattern
tokens with no metavariable between them appear in every match with only such a *gap*
between them; ``$A == None`` holds ``==`` then ``None``, ``len($X) == 0`` holds
``==`` then ``0``, ``$A.append($B)`` holds ``.`` then ``append``. A file without such a
run cannot match, and is never parsed.

The same runs, and the pattern's single tokens, are *anchors*: every match's text holds
each of them, so a statement none of whose lines holds the rarest anchor cannot hold a
match, and the search does not walk into it.

Parentheses and commas of the pattern itself are gap, not tokens: ``print((x))`` and
``print(x,)`` are the same tree as ``print(x)``, with one exception: the parenthesis
that opens a call's arguments always follows its callee, with only gap between that
opens no parenthesis (``(f)(x)``, ``f (x)``). The pattern's literals (strings and
numbers) are compared by their spelling, so they are tokens like any other. A
metavariable after ``.`` stands for an attribute name, which is always one identifier,
so it does not break a run (``self.$A.$B(`` is one run).
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from dataclasses import dataclass
from functools import lru_cache

from redline.tools.ast_edit.locate import edge_after, edge_before
from redline.tools.ast_edit.metavars import PLACEHOLDER_PREFIX, PatternError, substitute

# What may stand between two tokens of a match that are adjacent in the pattern. It is
# possessive (it never gives back what it took: no token starts with what it takes), so
# a search stays linear; a backtracking gap is exponential on a long comment.
_GAP = r"(?>[ \t\f\r\n\\(),]|#[^\r\n]*+)*+"
# Before a call's own `(`: the same, opening no parenthesis.
_CALL_GAP = r"(?>[ \t\f\r\n\\),]|#[^\r\n]*+)*+"
_TEXT_NAME = r"[^\W\d]\w*+"
_DATA_NAME = r"[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*+"
_SKIPPED = frozenset(
    {
        tokenize.NEWLINE,
        tokenize.NL,
        tokenize.COMMENT,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
)
_GAP_TOKENS = frozenset({"(", ")", ","})
_CALLEE_ENDS = frozenset({")", "]", "}"})


@dataclass(frozen=True)
class Anchor:
    """One run of pattern tokens, as a regex over the text and over the file's bytes;
    ``literal`` is its longest token (a cheap count of it ranks anchors)."""

    literal: str
    text: re.Pattern[str]
    data: re.Pattern[bytes]


@dataclass(frozen=True)
class Skeleton:
    """``runs``: anchors of two or more pieces (each must occur in a matching file);
    ``anchors``: every anchor, runs and single tokens."""

    runs: tuple[Anchor, ...]
    anchors: tuple[Anchor, ...]


@dataclass(frozen=True)
class _Piece:
    """A token of the pattern (``kind`` "token"), an attribute name standing for any
    identifier ("name"), or a call's opening parenthesis ("call")."""

    kind: str
    string: str
    word: bool = False


def _placeholder(token: tokenize.TokenInfo) -> bool:
    return token.type == tokenize.NAME and token.string.startswith(PLACEHOLDER_PREFIX)


def _opens_call(previous: tokenize.TokenInfo | None) -> bool:
    """Whether a `(` after ``previous`` opens a call's arguments (not a group)."""
    if previous is None:
        return False
    if previous.type == tokenize.NAME:
        return not keyword.iskeyword(previous.string)
    return previous.type == tokenize.STRING or previous.string in _CALLEE_ENDS


def _regex(pieces: list[_Piece], data: bool) -> str:
    name = _DATA_NAME if data else _TEXT_NAME
    out: list[str] = []
    for index, piece in enumerate(pieces):
        if index:
            out.append(_CALL_GAP if piece.kind == "call" else _GAP)
        if piece.kind == "name":
            out.append(name)
        elif piece.kind == "call":
            out.append(r"\(")
        else:
            out.append(re.escape(piece.string))
    if pieces[0].word:
        # The edge before a word is checked after it (a lookbehind over it): a regex that
        # starts with a lookbehind loses the fast scan for its first literal.
        word = pieces[0].string
        out.insert(1, f"(?<!{edge_before(word, data)}{re.escape(word)})")
    if pieces[-1].word:
        out.append(edge_after(data))
    return "".join(out)


def _anchor(pieces: list[_Piece]) -> Anchor:
    literal = max((p.string for p in pieces if p.kind != "name"), key=len, default="")
    text = _regex(pieces, data=False)
    data = _regex(pieces, data=True)
    return Anchor(literal, re.compile(text), re.compile(data.encode()))


def _pieces(tokens: list[tokenize.TokenInfo]) -> list[list[_Piece]]:
    """The pattern's tokens cut into runs at each metavariable (see the module text)."""
    significant = [token for token in tokens if token.type not in _SKIPPED]
    runs: list[list[_Piece]] = [[]]
    previous: tokenize.TokenInfo | None = None
    for index, token in enumerate(significant):
        following = significant[index + 1] if index + 1 < len(significant) else None
        if _placeholder(token):
            if previous is not None and previous.string == "." and runs[-1]:
                runs[-1].append(_Piece("name", ""))  # `.$A`: an attribute name
            else:
                runs.append([])
        elif token.type == tokenize.OP and token.string == "(" and _opens_call(previous):
            runs[-1].append(_Piece("call", "("))
        elif token.type == tokenize.OP and token.string in _GAP_TOKENS:
            pass
        elif token.string in ("*", "**") and following is not None and _placeholder(following):
            pass  # `*$$$A` / `**$$$A` in a call belong to the metavariable (maybe empty)
        else:
            word = token.type in (tokenize.NAME, tokenize.NUMBER)
            runs[-1].append(_Piece("token", token.string, word))
        previous = token
    return runs


@lru_cache(maxsize=64)
def skeleton(source: str) -> Skeleton:
    """The skeleton of an expression or statement pattern's text (for a pattern the
    `ast` search supports; the caller checks that)."""
    try:
        text = substitute(source, "pattern").text
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (PatternError, tokenize.TokenError, SyntaxError):
        return Skeleton((), ())
    single: list[Anchor] = []
    long_runs: list[Anchor] = []
    seen: set[str] = set()
    for run in _pieces(tokens):
        for piece in run:
            if piece.kind == "token" and piece.string not in seen:
                seen.add(piece.string)
                single.append(_anchor([piece]))
        if len(run) > 1:
            long_runs.append(_anchor(run))
    return Skeleton(tuple(long_runs), tuple(long_runs) + tuple(single))


def data_fits(data: bytes, source: str) -> bool:
    """False when the file's bytes lack one of the pattern's token runs (so it cannot
    match)."""
    return all(run.data.search(data) is not None for run in skeleton(source).runs)


def text_fits(text: str, source: str) -> bool:
    return all(run.text.search(text) is not None for run in skeleton(source).runs)


def rarest(text: str, source: str) -> Anchor | None:
    """The anchor of the pattern that the text spells least often (by a count of its
    longest token), or None when the pattern has no token at all (``$A``)."""
    anchors = skeleton(source).anchors
    if not anchors:
        return None
    return min(anchors, key=lambda anchor: text.count(anchor.literal))
