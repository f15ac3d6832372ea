"""The selected team action: who proposed what where, and its mirrored diff.

The diff is the unified diff the workspace mirrored with its proposal (the team queue
keeps no file contents), drawn by the workspace dashboard's :class:`DiffView`.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from redline.termtext import diff_line, hides
from redline.termtext import one_line as clean
from redline.tui.widgets.diff_view import DiffView


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


def header(data: dict[str, Any]) -> Content:
    files = ", ".join(clean(name) for name in data["files"]) or "(no files)"
    parts: list[tuple[str, str] | str] = [
        (clean(data["id"]), "bold"),
        "  ",
        (f"‹{clean(data['source'])}›", "$accent"),
        "  ",
        clean(data["label"]),
        "\n",
        ("workspace ", "$text-muted"),
        clean(data["workspace"]["id"]),
        "  ",
        clean(data["workspace"]["path"]),
        "\n",
        ("files ", "$text-muted"),
        f"{files} (+{data['added']} -{data['removed']})",
        ("  proposed ", "$text-muted"),
        clean(data["created_at"] or "?"),
    ]
    if data["state"] != "pending":
        parts += ["\n", (f"state {clean(data['state'])}", "$warning")]
        if data.get("result"):
            parts += [": ", clean(data["result"])]
    return Content.assemble(*parts)


class TeamDetail(Vertical):
    DEFAULT_CSS = """
    TeamDetail #team-header {
        height: auto;
        padding: 0 1;
        border-bottom: solid $panel-lighten-2;
    }
    TeamDetail DiffView {
        height: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.team_id: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="team-header")
        yield DiffView(id="team-diff")

    @property
    def diff(self) -> DiffView:
        return self.query_one(DiffView)

    def show_action(self, data: dict[str, Any]) -> None:
        self.team_id = data["id"]
        self.query_one("#team-header", Static).update(header(data))
        text = data.get("diff") or ""
        self.diff.show_text(diff_lines(text) or [Content("(no diff was mirrored)")])

    def show_note(self, text: str, *, team_id: str | None = None) -> None:
        self.team_id = team_id
        self.query_one("#team-header", Static).update(Content(clean(text)))
        self.diff.show_text([])
