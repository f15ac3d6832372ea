"""The model behind a hook call, for ``Assisted-by: AGENT:MODEL`` (the post-tool path only).

* Codex sends ``model`` in every hook payload.
* Claude Code sends none in its tool hooks; its transcript (``transcript_path``, JSON
  lines) holds the assistant message that made the call: the entry whose ``tool_use``
  block has the payload's ``tool_use_id`` carries ``message.model``. Read only here, after
  the write: the pre-tool path stays as cheap as it was.
* Gemini CLI: a transcript entry with the same shape when one is given; else unknown.

An unknown model is ``(None, why)``: no ``Assisted-by`` is written and the decisions log
says why.
"""

from __future__ import annotations

import json
import os
from typing import Any

from redline.drivers.hooks.payload import HookPayload

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
        found = _from_transcript(path, payload.tool_use_id)
        if found:
            return found, ""
        return None, f"{agent}'s transcript does not name the model of call {payload.tool_use_id}"
    return None, f"{agent} did not report its model"


def _from_transcript(path: str, tool_use_id: str) -> str | None:
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
    needle = tool_use_id.encode("utf-8", "replace")
    for raw in reversed(lines):
        if needle not in raw:
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        model = _model_of_entry(entry, tool_use_id)
        if model:
            return model
    return None


def _model_of_entry(entry: Any, tool_use_id: str) -> str | None:
    message = entry.get("message") if isinstance(entry, dict) else None
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if not isinstance(content, list):
        return None
    for block in content:
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_use"
            and block.get("id") == tool_use_id
        ):
            model = message.get("model")
            return model.strip() if isinstance(model, str) and model.strip() else None
    return None


__all__ = ["model_of"]
