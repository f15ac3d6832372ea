"""The demo's agent: the scripted plan, plus an answer to every decision a person makes.

The plan (``plan.json``) queues the changes. When a person resolves them in the
dashboard, the model is told the decisions at its next turn (a ``<system-reminder>`` from
``resolution_reminder``); a scripted plan cannot know them in advance, so this agent
reads that report and answers it: what was applied, what was discarded and why, and what
it will do next. That is the loop a real model closes, shown without a key or a network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from redline.drivers.model.providers.base import (
    ForceTool,
    Message,
    ModelRequest,
    ModelResponse,
    TextSink,
)
from redline.drivers.model.providers.scripted import ScriptedProvider

REPORT_START = "<system-reminder>Since your last turn, pending actions were resolved:"
_LINE = re.compile(
    r"^- (?P<verb>applied|discarded|undid) (?P<id>\S+) \((?P<label>.*?)\)\."
    r"(?: Reason: (?P<reason>.*?))? Result: "
)


@dataclass(frozen=True)
class Decision:
    verb: str
    action_id: str
    label: str
    reason: str


def read_report(text: str) -> list[Decision]:
    """The decisions of one resolution report, in its order."""
    found = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            found.append(
                Decision(
                    match["verb"], match["id"], match["label"], (match["reason"] or "").strip()
                )
            )
    return found


def answer(decisions: list[Decision]) -> str:
    """What the demo agent says about the decisions, and what it does next."""
    if not decisions:
        return "I see the review changed; nothing for me to act on yet."
    parts = ["Thanks for the review."]
    for item in decisions:
        why = f" ({item.reason})" if item.reason else ""
        if item.verb == "applied":
            parts.append(f"{item.action_id} is applied: {item.label}{why}.")
        elif item.verb == "discarded":
            parts.append(
                f"{item.action_id} is discarded: {item.label}{why}; I will not redo it "
                "unless you ask."
            )
        else:
            parts.append(f"{item.action_id} was undone: {item.label}.")
    silent = [i.action_id for i in decisions if i.verb != "undid" and not i.reason]
    if silent:
        parts.append(f"(For {_listed(silent)}, no reason given.)")
    if any(item.verb == "applied" and "models.py" in item.label for item in decisions):
        parts.append(
            "Next: run the project's tests (pytest) to confirm the price fix; then tell me "
            "in the prompt box what to change next."
        )
    else:
        parts.append("Next: tell me in the prompt box what to change next.")
    return " ".join(parts)


def _listed(ids: list[str]) -> str:
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]


class DemoProvider(ScriptedProvider):
    """:class:`ScriptedProvider` that answers each report of a person's decisions."""

    def __init__(self, plan_path: Path, *, wait_scale: float | None = None) -> None:
        super().__init__(plan_path, wait_scale=wait_scale)
        self._answered = 0  # reports already answered

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        reports = [m for m in request.messages if _is_report(m)]
        if len(reports) > self._answered and not _forced(request):
            self._answered = len(reports)
            # The plan's own closing line assumed its own resolutions: the answer replaces it.
            self._next = len(self.steps)
            text = answer(read_report(reports[-1].content))
            await self._say(text, on_text)
            return ModelResponse(text=text, stop_reason="stop")
        return await super().complete(request, on_text)


def _is_report(message: Message) -> bool:
    return message.role == "user" and message.content.startswith(REPORT_START)


def _forced(request: ModelRequest) -> bool:
    return isinstance(request.tool_choice, ForceTool)
