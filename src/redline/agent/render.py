"""Events as readable lines, for ``redline exec`` without ``--json`` and the demo."""

from __future__ import annotations

import json
from typing import Any, TextIO

from redline.agent.events import Event


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _result_text(result: Any) -> str:
    if isinstance(result, dict):
        parts = result.get("content") or []
        return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return str(result)


class EventPrinter:
    """Prints events as they come; message deltas stream onto one line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._streaming = False

    def _line(self, text: str) -> None:
        if self._streaming:
            self.out.write("\n")
            self._streaming = False
        self.out.write(text + "\n")
        self.out.flush()

    def __call__(self, event: Event) -> None:
        data = event.data
        kind = event.type
        if kind == "message_delta":
            if not self._streaming:
                self.out.write("assistant: ")
                self._streaming = True
            self.out.write(str(data.get("text", "")))
            self.out.flush()
        elif kind == "message_end":
            if self._streaming:
                self.out.write("\n")
                self.out.flush()
                self._streaming = False
        elif kind == "agent_start":
            self._line(f"== agent start: {data.get('model')} (resolver: {data.get('resolver')})")
        elif kind == "agent_end":
            self._line(f"== agent end: {data.get('status')} ({data.get('pending', 0)} pending)")
        elif kind == "tool_start":
            self._line(f"-> {data.get('name')} {_short(data.get('args', {}))}")
        elif kind == "tool_update":
            self._line(f"   {data.get('name')}: {_short(data.get('text', ''))}")
        elif kind == "tool_end":
            mark = "!!" if data.get("is_error") else "<-"
            text = _result_text(data.get("result"))
            first = text.splitlines()[0] if text else ""
            self._line(f"{mark} {data.get('name')}: {_short(first)}")
        elif kind == "pending_pushed":
            preview = data.get("preview") or {}
            stats = f" +{preview.get('added', 0)} -{preview.get('removed', 0)}" if preview else ""
            self._line(
                f"[pending] {data.get('action_id')} {data.get('label')} "
                f"[{data.get('source_tool_name')}]{stats}"
            )
        elif kind == "pending_resolved":
            verb = "applied" if data.get("action") == "apply" else "discarded"
            self._line(
                f"[{verb}] {data.get('action_id')} {data.get('label')} "
                f"[{data.get('source_tool_name')}] by {data.get('by')}: {data.get('reason')}"
            )
        elif kind == "pending_stale":
            self._line(f"[stale] {data.get('action_id')} {data.get('label')}: {data.get('reason')}")
        elif kind == "pending_replaced":
            self._line(
                f"[replaced] {data.get('old_action_id')} -> {data.get('action_id')} {data.get('label')}"
            )
        elif kind == "undone":
            self._line(f"[undone] {data.get('label')}: {', '.join(data.get('files', []))}")
        elif kind in ("plugin_error", "error"):
            self._line(f"error: {data.get('message')}")
        elif kind == "plugin_output":
            where = str(data.get("path", "plugin"))
            for line in str(data.get("text", "")).splitlines() or [""]:
                self._line(f"[{where.rsplit('/', 1)[-1]} {data.get('stream')}] {line}")
        elif kind in ("plugin_loaded", "notice"):
            self._line(f"note: {data.get('message')}")
