"""Codex's ``apply_patch`` format: read a patch into per-file changes, write one back.

No maintained Python library parses this format (the PyPI packages that do are one-person
experiments), so this is a small reading of the grammar Codex documents::

    *** Begin Patch
    *** Add File: PATH        then lines "+text"
    *** Delete File: PATH
    *** Update File: PATH     then an optional "*** Move to: PATH", then chunks:
    @@ [context line]         then lines " ctx", "-old", "+new", optional "*** End of File"
    *** End Patch

Applying a chunk follows Codex 0.171.0: the context line and the old lines are looked for
from the previous chunk on (exactly, then ignoring trailing, then surrounding whitespace,
then with typographic punctuation folded to ASCII); an update always ends the file with a
newline. :func:`generate` writes a patch that makes Codex produce exactly the given texts
(a whole-file replacement per file); :func:`expressible` says when it cannot (Codex ends
every written file with a newline and drops a carriage return before one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARK = "*** End of File"


class PatchError(ValueError):
    """The patch is not valid, or does not fit the file; the message uses Codex's words."""


@dataclass(frozen=True)
class Chunk:
    context: str | None
    old: list[str]
    new: list[str]
    end_of_file: bool = False


@dataclass(frozen=True)
class FilePatch:
    """One file section: ``op`` is ``add``, ``delete`` or ``update``."""

    op: str
    path: str
    move_to: str | None = None
    contents: str = ""  # add
    chunks: list[Chunk] = field(default_factory=list)  # update


def parse(text: str) -> list[FilePatch]:
    """The file sections of ``text`` (lenient like Codex: markers may carry padding, and a
    ``<<'EOF'`` heredoc around the patch is unwrapped)."""
    lines = text.strip().split("\n")
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if (
        len(lines) >= 4
        and lines[0] in ("<<EOF", "<<'EOF'", '<<"EOF"')
        and lines[-1].endswith("EOF")
        and lines[1].strip() == BEGIN
    ):
        lines = lines[1:-1]
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError("invalid patch: The first line of the patch must be '*** Begin Patch'")
    if lines[-1].strip() != END or len(lines) < 2:
        raise PatchError("invalid patch: The last line of the patch must be '*** End Patch'")
    body = lines[1:-1]
    sections: list[FilePatch] = []
    index = 0
    while index < len(body):
        number = index + 2
        header = body[index].strip()
        index += 1
        if header.startswith(ADD):
            added = []
            while index < len(body) and body[index].startswith("+"):
                added.append(body[index][1:] + "\n")
                index += 1
            sections.append(FilePatch("add", header[len(ADD) :], contents="".join(added)))
        elif header.startswith(DELETE):
            sections.append(FilePatch("delete", header[len(DELETE) :]))
        elif header.startswith(UPDATE):
            path = header[len(UPDATE) :]
            move_to = None
            if index < len(body) and body[index].startswith(MOVE):
                move_to = body[index][len(MOVE) :]
                index += 1
            chunks: list[Chunk] = []
            while index < len(body):
                if not body[index].strip():
                    index += 1
                    continue
                if body[index].startswith("*"):
                    break
                chunk, index = _chunk(body, index, first=not chunks)
                chunks.append(chunk)
            if not chunks:
                raise PatchError(
                    f"invalid hunk at line {number}, Update file hunk for path '{path}' is empty"
                )
            sections.append(FilePatch("update", path, move_to, chunks=chunks))
        else:
            raise PatchError(
                f"invalid hunk at line {number}, '{header}' is not a valid hunk header. Valid "
                "hunk headers: '*** Add File: {path}', '*** Delete File: {path}', "
                "'*** Update File: {path}'"
            )
    return sections


def _chunk(body: list[str], index: int, *, first: bool) -> tuple[Chunk, int]:
    context: str | None = None
    line = body[index]
    if line == "@@":
        index += 1
    elif line.startswith("@@ "):
        context = line[3:]
        index += 1
    elif not first:
        raise PatchError(
            f"invalid hunk at line {index + 2}, Expected update hunk to start with a @@ "
            f"context marker, got: '{line}'"
        )
    old: list[str] = []
    new: list[str] = []
    end_of_file = False
    parsed = 0
    while index < len(body):
        line = body[index]
        if line == EOF_MARK:
            if parsed == 0:
                break
            end_of_file = True
            index += 1
            break
        marker = line[:1]
        if marker == "":
            old.append("")
            new.append("")
        elif marker == " ":
            old.append(line[1:])
            new.append(line[1:])
        elif marker == "+":
            new.append(line[1:])
        elif marker == "-":
            old.append(line[1:])
        else:
            if parsed == 0:
                raise PatchError(
                    f"invalid hunk at line {index + 2}, Unexpected line found in update hunk: "
                    f"'{line}'. Every line should start with ' ' (context line), '+' (added "
                    "line), or '-' (removed line)"
                )
            break
        parsed += 1
        index += 1
    if parsed == 0:
        raise PatchError(
            f"invalid hunk at line {index + 2}, Update hunk does not contain any lines"
        )
    return Chunk(context, old, new, end_of_file), index


_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a", " "),
        **dict.fromkeys("\u202f\u205f\u3000", " "),
    }
)


def _exact(line: str) -> str:
    return line


def _folded(line: str) -> str:
    return line.strip().translate(_PUNCTUATION)


def _seek(lines: list[str], pattern: list[str], start: int, end_of_file: bool) -> int | None:
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if end_of_file else start
    last = len(lines) - len(pattern)
    for fold in (_exact, str.rstrip, str.strip, _folded):
        wanted = [fold(line) for line in pattern]
        for at in range(first, last + 1):
            if all(fold(lines[at + k]) == wanted[k] for k in range(len(pattern))):
                return at
    return None


def apply_chunks(text: str, chunks: list[Chunk], path: str) -> str:
    """``text`` after ``chunks``, as Codex computes it (the result ends with a newline)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    replacements: list[tuple[int, int, list[str]]] = []
    at = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = _seek(lines, [chunk.context], at, False)
            if found is None:
                raise PatchError(f"Failed to find context '{chunk.context}' in {path}")
            at = found + 1
        if not chunk.old:
            insert = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((insert, 0, list(chunk.new)))
            continue
        pattern, new = chunk.old, chunk.new
        found = _seek(lines, pattern, at, chunk.end_of_file)
        if found is None and pattern[-1] == "":
            pattern = pattern[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            found = _seek(lines, pattern, at, chunk.end_of_file)
        if found is None:
            raise PatchError(f"Failed to find expected lines in {path}:\n" + "\n".join(chunk.old))
        replacements.append((found, len(pattern), list(new)))
        at = found + len(pattern)
    replacements.sort(key=lambda r: r[0])
    for start, length, new in reversed(replacements):
        lines[start : start + length] = new
    if not lines or lines[-1] != "":
        lines.append("")
    return "\n".join(lines)


def expressible(text: str) -> bool:
    """Whether a patch can make Codex write exactly ``text`` (see the module's note)."""
    return "\r" not in text and (text == "" or text.endswith("\n"))


def _lines(text: str) -> list[str]:
    body = text[:-1] if text.endswith("\n") else text
    return body.split("\n") if body else []


def generate(files: list[tuple[str, str | None, str | None]]) -> str:
    """A patch making Codex turn each ``(path, current, wanted)`` into ``wanted``.

    ``current`` None: the file does not exist (Add File); ``wanted`` None: delete it;
    otherwise one chunk replacing the whole file, which Codex finds at its first line.
    """
    out = [BEGIN]
    for path, current, wanted in files:
        if wanted is None:
            out.append(DELETE + path)
        elif current is None:
            out.append(ADD + path)
            out.extend("+" + line for line in _lines(wanted))
        else:
            out.append(UPDATE + path)
            out.append("@@")
            out.extend("-" + line for line in _lines(current))
            out.extend("+" + line for line in _lines(wanted))
    out.append(END)
    return "\n".join(out) + "\n"
