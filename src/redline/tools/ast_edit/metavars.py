"""Metavariables: finding ``$NAME``, ``$$$NAME``, ``$_`` and ``$$$`` in pattern text.

libcst only parses Python, so every metavariable is swapped for a placeholder identifier
before parsing; the placeholder spells the kind and the name, which lets the matcher
recognise it again. ``$`` inside string literals and comments is left alone: a pattern
that mentions ``"$X"`` matches that string literally.
"""

from __future__ import annotations

import io
import re
import textwrap
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass

SINGLE_PREFIX = "__rlS_"
MULTI_PREFIX = "__rlM_"
ANON_SINGLE_PREFIX = "__rlAS_"
ANON_MULTI_PREFIX = "__rlAM_"
PLACEHOLDER_PREFIX = "__rl"

_NAME_RE = re.compile(r"[A-Z_][A-Z0-9_]*")
_ANY_WORD_RE = re.compile(r"[A-Za-z0-9_]+")


class PatternError(ValueError):
    """A pattern or rewrite template that cannot be used (the message says why)."""


@dataclass(frozen=True)
class Meta:
    """One metavariable kind: ``name`` is None for ``$_`` and ``$$$``."""

    name: str | None
    multi: bool

    @property
    def spelled(self) -> str:
        dollars = "$$$" if self.multi else "$"
        return f"{dollars}{self.name if self.name is not None else ('' if self.multi else '_')}"


@dataclass(frozen=True)
class Occurrence:
    """Where a metavariable sits in the original text and which placeholder replaced it."""

    start: int
    end: int
    placeholder: str
    meta: Meta


@dataclass(frozen=True)
class Substituted:
    """The text split around its metavariables, ready to be rendered with placeholders."""

    segments: tuple[str, ...]
    occurrences: tuple[Occurrence, ...]

    def render(self, prefixes: tuple[str, ...] | None = None) -> tuple[str, tuple[int, ...]]:
        """Text with placeholders (each preceded by its prefix, e.g. ``*``) and their offsets.

        A ``$$$`` after keyword arguments or in a dict only parses as ``*name``/``**name``,
        so the compiler retries with those prefixes.
        """
        out = [self.segments[0]]
        starts: list[int] = []
        size = len(self.segments[0])
        for index, occ in enumerate(self.occurrences):
            prefix = prefixes[index] if prefixes is not None else ""
            out.append(prefix)
            size += len(prefix)
            starts.append(size)
            out.append(occ.placeholder)
            size += len(occ.placeholder)
            segment = self.segments[index + 1]
            out.append(segment)
            size += len(segment)
        return "".join(out), tuple(starts)

    @property
    def text(self) -> str:
        return self.render()[0]


def placeholder_meta(value: str) -> Meta | None:
    """The metavariable a placeholder identifier stands for, or None for ordinary names."""
    if not value.startswith(PLACEHOLDER_PREFIX):
        return None
    if value.startswith(SINGLE_PREFIX):
        return Meta(value[len(SINGLE_PREFIX) :], False)
    if value.startswith(MULTI_PREFIX):
        return Meta(value[len(MULTI_PREFIX) :], True)
    if value.startswith(ANON_SINGLE_PREFIX):
        return Meta(None, False)
    if value.startswith(ANON_MULTI_PREFIX):
        return Meta(None, True)
    return None


def _skip_string(text: str, index: int) -> int:
    """Index just past the string literal whose opening quote is at ``index``."""
    quote = text[index]
    triple = text.startswith(quote * 3, index)
    closing = quote * 3 if triple else quote
    pos = index + len(closing)
    while pos < len(text):
        char = text[pos]
        if char == "\\":
            pos += 2
            continue
        if not triple and char == "\n":
            return pos
        if text.startswith(closing, pos):
            return pos + len(closing)
        pos += 1
    return pos


def substitute(text: str, what: str) -> Substituted:
    """Replace every metavariable in ``text`` by its placeholder identifier."""
    out: list[str] = []
    segments: list[str] = []
    occurrences: list[Occurrence] = []
    anon = 0
    pos = 0
    length = len(text)
    while pos < length:
        char = text[pos]
        if char in "'\"":
            end = _skip_string(text, pos)
            out.append(text[pos:end])
            pos = end
            continue
        if char == "#":
            end = text.find("\n", pos)
            end = length if end < 0 else end
            out.append(text[pos:end])
            pos = end
            continue
        if char != "$":
            out.append(char)
            pos += 1
            continue
        multi = text.startswith("$$$", pos)
        name_at = pos + (3 if multi else 1)
        found = _NAME_RE.match(text, name_at)
        name = found.group(0) if found else ""
        follow = _ANY_WORD_RE.match(text, name_at + len(name))
        if follow is not None:
            word = text[name_at : follow.end()]
            raise PatternError(
                f"{what}: metavariable ${'$$' if multi else ''}{word} is not a valid name: "
                "names are upper case letters, digits and _ ([A-Z_][A-Z0-9_]*)"
            )
        if not name and not multi:
            raise PatternError(
                f"{what}: '$' at offset {pos} must start a metavariable ($NAME, $$$NAME, $_ or $$$)"
            )
        if name in ("", "_"):
            anon += 1
            placeholder = f"{ANON_MULTI_PREFIX if multi else ANON_SINGLE_PREFIX}{anon}"
            meta = Meta(None, multi)
        else:
            placeholder = f"{MULTI_PREFIX if multi else SINGLE_PREFIX}{name}"
            meta = Meta(name, multi)
        end = name_at + len(name)
        occurrences.append(Occurrence(pos, end, placeholder, meta))
        segments.append("".join(out))
        out = []
        pos = end
    segments.append("".join(out))
    return Substituted(tuple(segments), tuple(occurrences))


def normalize(text: str) -> str:
    return textwrap.dedent(text.replace("\r\n", "\n")).strip()


def pattern_words(text: str) -> frozenset[str]:
    """Identifiers and keywords of the pattern: every match contains each as a whole word."""
    words: set[str] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and not token.string.startswith(PLACEHOLDER_PREFIX):
                words.add(token.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return frozenset()
    return frozenset(words)


def check_kinds(sub: Substituted, what: str) -> dict[str, Meta]:
    """The names the pattern binds; PatternError when one is both ``$X`` and ``$$$X``."""
    bound: dict[str, Meta] = {}
    for occ in sub.occurrences:
        if occ.meta.name is None:
            continue
        previous = bound.setdefault(occ.meta.name, occ.meta)
        if previous.multi != occ.meta.multi:
            raise PatternError(
                f"{what} uses both ${occ.meta.name} and $$${occ.meta.name}: "
                "a name stands either for one node or for a list of items"
            )
    return bound


def check_template_names(sub: Substituted, bound: Mapping[str, Meta], what: str) -> None:
    """PatternError unless every metavariable of a template is one the pattern binds
    (``bound``), of the same kind; ``what`` starts the message."""
    for occ in sub.occurrences:
        if occ.meta.name is None:
            raise PatternError(
                f"{what} uses {occ.meta.spelled}, which captures nothing: "
                "name the metavariable in the pattern and use that name"
            )
        meta = bound.get(occ.meta.name)
        if meta is None:
            raise PatternError(
                f"{what} uses {occ.meta.spelled}, but the pattern does not bind it"
                + (
                    f" (the pattern binds {', '.join(sorted(m.spelled for m in bound.values()))})"
                    if bound
                    else ""
                )
            )
        if meta.multi != occ.meta.multi:
            raise PatternError(
                f"{what} uses {occ.meta.spelled}, but the pattern binds {meta.spelled}"
            )
