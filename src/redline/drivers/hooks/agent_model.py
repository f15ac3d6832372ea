"""The model behind a hook call, for ``Assisted-by: AGENT:MODEL`` (the post-tool path only).

* Codex sends ``model`` in every hook payload.
* Claude Code sends none in its tool hooks; its transcript (``transcript_path``, JSON
  lines) holds the assistant message that made the call: the entry whose ``tool_use``
  block has the payload's ``tool_use_id`` carries ``message.model``. Read only here, after
  the write: the pre-tool path stays as cheap as it was.
* Gemini CLI sends no call id either; its transcript (``transcript_path``, the chat
  recording's JSON lines) holds each ``gemini`` message with its ``model`` and
  ``toolCalls``: the newest one holding a call of the same tool with the same arguments.

An unknown model is ``(None, why)``: no ``Assisted-by`` is written and the decisions log
says why.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from redline.drivers.hooks.payload import HookPayload

if TYPE_CHECKING:
    from redline.jsontypes import JsonValue

#: The most of a transcript's end read to find the call (the call is near the end).
TRANSCRIPT_TAIL = 8 * 1024 * 1024
_NAMES = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli"}


def model_of(payload: HookPayload) -> tuple[str | None, str]:
    """``(model, "")`` when the agent reported it for this call, else ``(None, why)``."""
    agent = _NAMES.get(payload.agent, payload.agent)
    model = payload.raw.get("model")
    if isinstance(model, str) and model.strip():
        return model.strip(), ""
    path = payload.raw.get("transcript_path")
    if isinstance(path, str) and path and payload.tool_use_id:
        found = _from_transcript(path, payload.tool_use_id, _claude_match(payload.tool_use_id))
        if found:
            return found, ""
        return None, f"{agent}'s transcript does not name the model of call {payload.tool_use_id}"
    if isinstance(path, str) and path and payload.agent == "gemini" and payload.tool_name:
        found = _from_transcript(path, payload.tool_name, _gemini_match(payload))
        if found:
            return found, ""
        return None, f"{agent}'s transcript does not name the model of this {payload.tool_name}"
    return None, f"{agent} did not report its model"


Match = Callable[["JsonValue"], "str | None"]


def _from_transcript(path: str, needle_text: str, match: Match) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            if size > TRANSCRIPT_TAIL:
                handle.seek(size - TRANSCRIPT_TAIL)
                handle.readline()  # a partial line
            lines = handle.read().splitlines()
        except OSError:
            return None
    needle = needle_text.encode("utf-8", "replace")
    for raw in reversed(lines):
        if needle not in raw:
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        model = match(entry)
        if model:
            return model
    return None


def _model(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _claude_match(tool_use_id: str) -> Match:
    """Claude Code: the assistant entry whose ``tool_use`` block is this call."""

    def match(entry: JsonValue) -> str | None:
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(content, list):
            return None
        for block in content:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_use"
                and block.get("id") == tool_use_id
            ):
                return _model(message.get("model"))
        return None

    return match


def _gemini_match(payload: HookPayload) -> Match:
    """Gemini CLI: the ``gemini`` message holding a call of this tool with these args."""

    def match(entry: JsonValue) -> str | None:
        if not isinstance(entry, dict) or entry.get("type") != "gemini":
            return None
        calls = entry.get("toolCalls")
        for call in calls if isinstance(calls, list) else ():
            if (
                isinstance(call, dict)
                and call.get("name") == payload.tool_name
                and call.get("args") == payload.tool_input
            ):
                return _model(entry.get("model"))
        return None

    return match


__all__ = ["model_of"]
