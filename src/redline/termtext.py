"""Untrusted text made safe to show on a terminal: the one place that decides how.

Labels, paths, reasons, diff lines, a model's words and a plugin's errors come from agents
and other people. Written raw, a control sequence (``ESC[2K``, ``ESC[1A``, an OSC 52
clipboard write, a BEL) rewrites what a reviewer sees, a ``\\r`` overwrites a line from its
start, and Unicode's bidirectional and invisible format characters ("Trojan Source") make
code read differently from what runs. Every such character is *shown*, one scheme
everywhere (docs/safety.md):

- a C0 control (except newline, and tab where tabs are kept), DEL and a C1 control as
  ``\\xNN`` — ``\\x1b``, ``\\x0d``, ``\\x07``, ``\\x7f``, ``\\x9b``;
- a format character — the bidirectional embeddings, overrides and isolates, the
  zero-width ones, the line and paragraph separators, the byte-order mark, the invisible
  tag characters — as ``<U+202E>``.

:func:`visible` does it to text, :func:`one_line` to a field that must stay on one line (a
newline shown as ``\\x0a``), :func:`diff_line` to one line of a file's body (a CRLF file's
``\\r`` said once by :func:`crlf`, in the file's header, instead of on each line).
:class:`TerminalWriter` is ``sys.stdout``/``sys.stderr`` of every text-mode command
(installed by :func:`terminal_streams` in ``cli.main``), so no printer can forget;
``JsonWriter`` stands there for ``--json``, where the same characters become JSON's own
``\\uXXXX`` escapes and the output means the same JSON.

Standard library only: the bottom layer (``redline.paths``' neighbour).
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import TextIO

__all__ = [
    "JsonWriter",
    "TerminalWriter",
    "crlf",
    "diff_line",
    "hides",
    "one_line",
    "terminal_streams",
    "visible",
]

#: Format characters shown as ``<U+XXXX>``: every Unicode ``Cf`` character that draws
#: nothing (bidi controls U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069; zero-width
#: U+200B–U+200D, U+2060–U+2064, U+FEFF; the soft hyphen; tag characters), and the line
#: and paragraph separators U+2028/U+2029.
_FORMAT_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
_CONTROL_RANGES: tuple[tuple[int, int], ...] = ((0x00, 0x1F), (0x7F, 0x9F))


def _class(ranges: tuple[tuple[int, int], ...], keep: str = "") -> str:
    """A regex character class body for ``ranges`` without the characters in ``keep``."""
    kept = {ord(char) for char in keep}
    parts: list[str] = []
    for low, high in ranges:
        start = low
        for code in range(low, high + 2):
            if code > high or code in kept:
                if start < code:
                    last = code - 1
                    parts.append(
                        f"\\U{start:08x}" if start == last else f"\\U{start:08x}-\\U{last:08x}"
                    )
                start = code + 1
    return "".join(parts)


#: The astral format characters (tags and the like): the patterns match any astral
#: character, which is fast, and :func:`_hidden` keeps the others (emoji) as they are.
_ASTRAL = frozenset(
    code for low, high in _FORMAT_RANGES if low > 0xFFFF for code in range(low, high + 1)
)
_BMP_FORMAT = tuple(item for item in _FORMAT_RANGES if item[1] <= 0xFFFF)


def _pattern(keep: str) -> re.Pattern[str]:
    return re.compile(
        f"[{_class(_CONTROL_RANGES, keep)}{_class(_BMP_FORMAT)}\\U00010000-\\U0010ffff]"
    )


# Text (newline and tab kept), one line (nothing kept), a diff body line (tab kept).
_TEXT = _pattern("\n\t")
_LINE = _pattern("")
_BODY = _pattern("\t")


def _hidden(char: str) -> bool:
    code = ord(char)
    return code <= 0xFFFF or code in _ASTRAL


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code <= 0x9F:
        return f"\\x{code:02x}"
    if code > 0xFFFF and code not in _ASTRAL:
        return char
    return f"<U+{code:04X}>"


def _apply(pattern: re.Pattern[str], value: str) -> str:
    return pattern.sub(_shown, value) if pattern.search(value) else value


def visible(text: object) -> str:
    """``text`` with every control and invisible format character shown (newline and tab
    kept as they are)."""
    return _apply(_TEXT, str(text))


def one_line(text: object, *, tab: bool = False) -> str:
    """``text`` for a one-line field (a label, a path, a reason, a name): like
    :func:`visible`, and a newline is shown too, so it cannot print several lines; a tab
    as well unless ``tab``."""
    return _apply(_BODY if tab else _LINE, str(text))


def hides(text: str, *, tab: bool = True) -> bool:
    """True when ``text`` holds a character :func:`visible` would show (``tab``: a tab is
    fine) — a diff line marks it so a reviewer knows to look."""
    pattern = _BODY if tab else _LINE
    return any(_hidden(m.group()) for m in pattern.finditer(text.rstrip("\n")))


def crlf(text: str) -> bool:
    """True for text whose every line ends with ``\\r\\n`` (a Windows file): its ``\\r``
    is said once, in the file's header (``CRLF line endings``), not on each line."""
    if "\n" not in text:
        return False
    lines = text.split("\n")
    return all(line.endswith("\r") for line in lines[:-1])


def diff_line(line: str, *, crlf_file: bool = False) -> str:
    """One line of a file's body as a diff shows it: the line break dropped (and the
    ``\\r`` before it in a CRLF file), every other control shown; tabs kept."""
    body = line[:-1] if line.endswith("\n") else line
    if crlf_file and body.endswith("\r"):
        body = body[:-1]
    return _apply(_BODY, body)


# -- the streams --------------------------------------------------------------------
class TerminalWriter(io.TextIOBase):
    """A text stream that writes what it is given with :func:`visible` applied."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target = target

    def _render(self, text: str) -> str:
        return visible(text)

    def write(self, text: str) -> int:
        self.target.write(self._render(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:  # type: ignore[override]
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.target.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.target, "encoding", "utf-8") or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.target, "errors", None)

    @property
    def buffer(self) -> object:
        return self.target.buffer


_JSON_UNSAFE = _pattern("\n\t")


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if not _hidden(match.group()):
        return match.group()
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class JsonWriter(TerminalWriter):
    """``--json`` output: the same characters as JSON's ``\\uXXXX`` escapes (valid inside a
    JSON string, where alone they can occur), so the JSON read back is unchanged."""

    def _render(self, text: str) -> str:
        return _JSON_UNSAFE.sub(_json_escape, text) if _JSON_UNSAFE.search(text) else text


@contextmanager
def terminal_streams(*, json_stdout: bool = False) -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` wrapped for the length of one command (stdout as
    JSON with ``json_stdout``); the streams found are put back after."""
    out, err = sys.stdout, sys.stderr
    if out is not None:
        sys.stdout = JsonWriter(out) if json_stdout else TerminalWriter(out)
    if err is not None:
        sys.stderr = TerminalWriter(err)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        sys.stdout, sys.stderr = out, err
