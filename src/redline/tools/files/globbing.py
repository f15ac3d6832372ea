"""Glob patterns for find and grep: `*`, `?`, `[...]`, `**` and `{a,b}`."""

from __future__ import annotations

import re
from collections.abc import Callable

_MAX_BRACE_EXPANSIONS = 256


def expand_braces(pattern: str) -> list[str]:
    """``a.{py,md}`` -> ``["a.py", "a.md"]`` (nested groups too; unmatched braces stay literal)."""
    depth = 0
    start = -1
    for index, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                inner = pattern[start + 1 : index]
                options = _split_top_level(inner)
                if len(options) < 2:
                    continue
                head, tail = pattern[:start], pattern[index + 1 :]
                out: list[str] = []
                for option in options:
                    for expanded in expand_braces(head + option + tail):
                        out.append(expanded)
                        if len(out) > _MAX_BRACE_EXPANSIONS:
                            raise ValueError(f"pattern {pattern!r} expands to too many patterns")
                return out
    return [pattern]


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        current.append(char)
    parts.append("".join(current))
    return parts


def _translate(pattern: str) -> str:
    out: list[str] = []
    index = 0
    length = len(pattern)
    while index < length:
        char = pattern[index]
        if char == "*":
            if pattern.startswith("**", index):
                index += 2
                if index < length and pattern[index] == "/":
                    index += 1
                    out.append("(?:.*/)?")
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            close = pattern.find("]", index + 2)
            if close == -1:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1 : close]
                negate = body.startswith(("!", "^"))
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                out.append(f"[{'^/' if negate else ''}{body}]")
                index = close
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def compile_glob(pattern: str) -> Callable[[str, str], bool]:
    """A matcher taking ``(path relative to the search folder, path relative to the root)``.

    A pattern without ``/`` matches file names at any depth (like ``find -name``); one
    with ``/`` matches the whole relative path, from either the search folder or the root.
    Raises ValueError for a pattern that cannot be compiled.
    """
    text = pattern.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/")
    if not text:
        raise ValueError("the glob pattern is empty")
    try:
        regexes = [re.compile(_translate(p) + r"\Z", re.DOTALL) for p in expand_braces(text)]
    except re.error as exc:
        raise ValueError(f"invalid glob pattern {pattern!r}: {exc}") from None
    by_name = "/" not in text

    def matches(rel_to_base: str, rel_to_root: str) -> bool:
        if by_name:
            name = rel_to_root.rsplit("/", 1)[-1]
            return any(regex.match(name) for regex in regexes)
        return any(regex.match(rel_to_base) or regex.match(rel_to_root) for regex in regexes)

    return matches
