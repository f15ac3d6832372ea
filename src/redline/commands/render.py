"""Events as readable lines, for ``redline exec`` without ``--json`` and the demo."""

from __future__ import annotations

import json
from typing import Any, TextIO

from redline.drivers.acp.events import (
    AcpAgentExit,
    AcpMessage,
    AcpMode,
    AcpPlan,
    AcpStderr,
    AcpThought,
    AcpToolCall,
    AcpToolCallUpdate,
    AcpUsage,
)
from redline.review import describe
from redline.review.events import (
    AgentEnd,
    AgentStart,
    AgentState,
    ErrorEvent,
    Event,
    MessageDelta,
    MessageEnd,
    Notice,
    PendingPushed,
    PendingRebased,
    PendingReplaced,
    PendingResolved,
    PendingStale,
    PluginFailed,
    PluginLoaded,
    PluginOutput,
    ResolutionFailed,
    ToolEnd,
    ToolStart,
    ToolUpdate,
    Undone,
)
from redline.termtext import one_line
from redline.workspace.preview import via_text


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class EventPrinter:
    """Prints events as they come; message deltas stream onto one line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._streaming = False
        self._stream_kind = ""

    def _line(self, text: str) -> None:
        if self._streaming:
            self.out.write("\n")
            self._streaming = False
        self.out.write(text + "\n")
        self.out.flush()

    def _stream(self, kind: str, prefix: str, text: str) -> None:
        """Stream ``text`` onto the current line, starting a new one when the kind changes."""
        if not self._streaming or self._stream_kind != kind:
            if self._streaming:
                self.out.write("\n")
            self.out.write(prefix)
            self._streaming = True
            self._stream_kind = kind
        self.out.write(text)
        self.out.flush()

    def __call__(self, event: Event) -> None:
        match event:
            case MessageDelta(text=text):
                self._stream("assistant", "assistant: ", text)
            case AcpMessage(text=text):
                self._stream("agent", "agent: ", text)
            case AcpThought(text=text):
                self._stream("thinking", "thinking: ", text)
            case AcpToolCall(kind=kind, title=title, status=status):
                self._line(f"-> [{kind}] {title} ({status})")
            case AcpToolCallUpdate(tool_call_id=call_id, title=title, status=status):
                if status or title:
                    self._line(f"   {title or call_id}: {status or 'updated'}")
            case AcpPlan(entries=entries):
                self._line("plan:")
                for step in entries:
                    self._line(f"  [{step.status}] {step.content}")
            case AcpUsage(used=used, size=size):
                self._line(f"usage: {used} of {size} tokens")
            case AcpMode(mode_id=mode_id):
                self._line(f"note: agent mode {mode_id}")
            case AcpAgentExit(how=how):
                self._line(f"== agent process {how}")
            case AcpStderr():
                pass  # kept in the session log
            case MessageEnd():
                if self._streaming:
                    self.out.write("\n")
                    self.out.flush()
                    self._streaming = False
            case AgentStart(model=model, resolver=resolver):
                self._line(f"== agent start: {model} (resolver: {resolver})")
            case AgentEnd(status=status, pending=pending):
                state = AgentState.after(status)
                self._line(f"== agent end: {status} ({pending} pending); agent {state}")
            case ToolStart(name=name, args=args):
                self._line(f"-> {name} {_short(args)}")
            case ToolUpdate(name=name, text=text):
                self._line(f"   {name}: {_short(text)}")
            case ToolEnd(name=name, result=result, is_error=is_error):
                mark = "!!" if is_error else "<-"
                self._line(f"{mark} {name}: {_short(describe.first_line(result))}")
            case PendingPushed():
                self._line(
                    f"[pending] {event.action_id} {one_line(event.label)} "
                    f"[{one_line(event.source_tool_name)}]{describe.preview_stats(event.preview)}"
                )
                files = event.preview["files"] if event.preview is not None else []
                for file in files:
                    if file.get("via"):
                        via = via_text(str(file["path"]), str(file["via"]))
                        self._line(f"    writes {file['path']} ({via})")
                for item in event.diffs or ():
                    # Split on newlines only: a \r or \x1c inside a line is shown in it.
                    diff = item.get("diff", "").rstrip("\n")
                    for line in diff.split("\n") if diff else ():
                        self._line(f"    {line}")
            case PendingResolved():
                verb = describe.verdict(event.action).lower()
                who = describe.resolver(event.by, event.rule)
                self._line(
                    f"[{verb}] {event.action_id} {one_line(event.label)} "
                    f"[{one_line(event.source_tool_name)}] by {who}: {one_line(event.reason)}"
                )
            case PendingStale(action_id=action_id, label=label, reason=reason):
                self._line(f"[stale] {action_id} {one_line(label)}: {one_line(reason)}")
            case PendingRebased():
                self._line(f"[rebased] {event.text}")
            case PendingReplaced(old_action_id=old, action_id=new, label=label):
                self._line(f"[replaced] {old} -> {new} {one_line(label)}")
            case Undone(entry_id=entry_id, label=label, files=files, action_id=action_id):
                origin = f" ({action_id})" if action_id else ""
                self._line(
                    f"[undone] {entry_id}{origin} {one_line(label)}: {one_line(', '.join(files))}"
                )
            case PluginFailed(message=message) | ErrorEvent(message=message):
                self._line(f"error: {message}")
            case PluginOutput(path=path, stream=stream, text=text):
                where = describe.plugin_name(path)
                for line in text.splitlines() or [""]:
                    self._line(f"[{where} {stream}] {line}")
            case ResolutionFailed(message=message):
                # Today's wording: a failed resolution is a notice with the model-facing text.
                self._line(f"note: {message}")
            case PluginLoaded(message=message) | Notice(message=message):
                self._line(f"note: {message}")
            case _:
                pass
