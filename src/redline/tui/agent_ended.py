"""What the dashboard shows when an external agent's process has ended.

An action an ended agent left in the queue carries ``agent_ended`` in its details: a short
text saying how the agent ended (``exited with status 1``, ``was killed by SIGKILL``).
Details come from the queue, which other processes write: anything there is untrusted, so
:func:`ended_note` reads the field defensively and never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.content import Content

from redline.termtext import one_line
from redline.tui.activity_format import error_lines
from redline.workspace.details import details_to_json

# The longest note shown; a longer one is cut (the full text stays in the queue record).
NOTE_WIDTH = 80
ENDED_FIELD = "agent_ended"


def _printable(text: str) -> str:
    """``text`` on one line, whitespace runs as one space, every other control or
    invisible character shown (``redline.termtext``: ``\x1b``, ``<U+202E>``)."""
    return one_line(" ".join(text.split()))


def ended_note(details: Any) -> str | None:
    """How the agent behind an action ended, from the action's details, or None.

    A non-empty string is shown cleaned up and cut to :data:`NOTE_WIDTH`; ``True`` (an
    action marked before the exit was known) reads ``ended``; anything else is ignored.
    """
    details = details_to_json(details)  # typed details (redline's own kinds) as stored
    if not isinstance(details, Mapping):
        return None
    try:
        value = details.get(ENDED_FIELD)
    except Exception:
        return None
    if value is True:
        return "ended"
    if not isinstance(value, str):
        return None
    text = _printable(value)
    if len(text) > NOTE_WIDTH:
        text = text[: NOTE_WIDTH - 1] + "…"
    return text or None


def banner_text(agent: str, how: str, *, left: int) -> Content:
    """The persistent line under the status line once the agent's process has ended."""
    agent = _printable(agent) or "the agent"
    how = _printable(how) or "ended"
    if left:
        after = (
            f"{left} action{'s' if left != 1 else ''} it left {'stay' if left != 1 else 'stays'}"
        )
        after += " for review"
    else:
        after = "it left nothing pending"
    return Content.assemble(
        (" AGENT ENDED ", "bold $redline-text-error on $error-muted"),
        " ",
        (f"{agent} {how}", "bold $redline-text-error"),
        ("  ·  ", "$text-muted"),
        (f"{after} · prompting is off", "$text-muted"),
    )


def exit_error_lines(message: str, how: str) -> list[Content]:
    """The error a turn ends with after the process died, without repeating how it died.

    The exit line already said how the process ended; what the error adds is the agent's
    last output. A message that is not about this exit is shown whole.
    """
    head, _, rest = message.partition("\n")
    if f"the process {how}" not in head:
        return error_lines(message)
    tail = [line for line in rest.splitlines() if line.strip()]
    if not tail:
        return []
    return [
        Content.styled("  the agent's last output:", "$text-muted"),
        *(Content.styled(f"    {line.strip()}", "$redline-text-error") for line in tail),
    ]


__all__ = ["ENDED_FIELD", "NOTE_WIDTH", "banner_text", "ended_note", "exit_error_lines"]
