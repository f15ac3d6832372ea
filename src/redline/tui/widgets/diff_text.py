"""A unified diff given as text (the team queue's mirrored diff: it keeps no file
contents), drawn line by line as the workspace dashboard colours a diff."""

from __future__ import annotations

from textual.content import Content

from redline.termtext import diff_line, hides


def diff_lines(text: str) -> list[Content]:
    """The mirrored diff's lines, coloured as the workspace dashboard colours a diff.

    Shown by ``redline.termtext`` as the workspace dashboard shows them: a CRLF file's
    ``\r`` said once on its ``+++`` line, every other control or invisible character
    shown, and a ``⚠`` in a gutter (there only when some line needs it) marking them."""
    raws = text.split("\n")
    if raws and raws[-1] == "":
        raws.pop()
    ends = [
        raw
        for at, raw in enumerate(raws)
        if raw[:1] in (" ", "+", "-")
        and not raw.startswith(("+++ ", "--- "))
        and not (at + 1 < len(raws) and raws[at + 1].startswith("\\"))
    ]
    crlf_file = bool(ends) and all(raw.endswith("\r") for raw in ends)
    hidden = [hides(raw[:-1] if crlf_file and raw.endswith("\r") else raw) for raw in raws]
    lines: list[Content] = []
    for raw, marked in zip(raws, hidden, strict=True):
        line = diff_line(raw, crlf_file=crlf_file)
        if crlf_file and raw.startswith("+++ "):
            line += "  (CRLF line endings)"
        if any(hidden):
            line = ("⚠ " if marked else "  ") + line
        if raw.startswith(("+++", "---")):
            style = "bold $text-muted"
        elif raw.startswith("@@"):
            style = "$accent"
        elif raw.startswith("+"):
            style = "on $success-muted"
        elif raw.startswith("-"):
            style = "on $error-muted"
        else:
            style = ""
        lines.append(Content.styled(line, style) if style else Content(line))
    return lines
