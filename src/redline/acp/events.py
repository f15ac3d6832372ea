"""Typed activity from an ACP agent: one frozen dataclass per kind of ``session/update``.

:func:`from_update` turns the package's pydantic models into these events; each has a
``type`` and ``to_dict()`` (JSON-able, the fields the event stream carries). They are
emitted on the session's event stream with :func:`emit`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from acp import schema

from redline.agent.events import EventStream

ACP_EVENT_TYPES: tuple[str, ...] = (
    "acp_message",
    "acp_thought",
    "acp_tool_call",
    "acp_tool_call_update",
    "acp_plan",
    "acp_usage",
    "acp_mode",
    "acp_agent_exit",
    "acp_stderr",
)


@dataclass(frozen=True)
class AcpEvent:
    type: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}


@dataclass(frozen=True)
class MessageChunk(AcpEvent):
    """A piece of the agent's answer (text; other content is described, not embedded)."""

    type: ClassVar[str] = "acp_message"
    text: str
    message_id: str | None = None


@dataclass(frozen=True)
class ThoughtChunk(AcpEvent):
    type: ClassVar[str] = "acp_thought"
    text: str
    message_id: str | None = None


@dataclass(frozen=True)
class Location:
    path: str
    line: int | None = None


@dataclass(frozen=True)
class ToolCallStarted(AcpEvent):
    type: ClassVar[str] = "acp_tool_call"
    tool_call_id: str
    title: str
    kind: str = "other"
    status: str = "pending"
    locations: tuple[Location, ...] = ()
    raw_input: Any = None


@dataclass(frozen=True)
class ToolCallUpdated(AcpEvent):
    """A change to a tool call: only the fields the agent sent are set (None: unchanged)."""

    type: ClassVar[str] = "acp_tool_call_update"
    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    locations: tuple[Location, ...] | None = None
    text: str | None = None


@dataclass(frozen=True)
class PlanStep:
    content: str
    priority: str
    status: str


@dataclass(frozen=True)
class PlanUpdated(AcpEvent):
    type: ClassVar[str] = "acp_plan"
    entries: tuple[PlanStep, ...] = ()


@dataclass(frozen=True)
class UsageUpdated(AcpEvent):
    """Context window use (``used`` of ``size`` tokens) and, when known, the cost."""

    type: ClassVar[str] = "acp_usage"
    used: int
    size: int
    cost: float | None = None
    currency: str | None = None


@dataclass(frozen=True)
class ModeChanged(AcpEvent):
    type: ClassVar[str] = "acp_mode"
    mode_id: str


@dataclass(frozen=True)
class AgentExited(AcpEvent):
    """The agent process ended; ``how`` is a sentence (exit status or signal)."""

    type: ClassVar[str] = "acp_agent_exit"
    returncode: int | None
    how: str
    expected: bool = False


@dataclass(frozen=True)
class StderrLine(AcpEvent):
    """One line the agent wrote to its stderr (kept in the session log)."""

    type: ClassVar[str] = "acp_stderr"
    text: str


@dataclass(frozen=True)
class Unhandled(AcpEvent):
    """An update kind redline does not show (available commands, config options...)."""

    type: ClassVar[str] = ""
    kind: str = field(default="")


def content_text(block: Any) -> str:
    """The text of a content block, or a short description of what else it is."""
    if isinstance(block, schema.TextContentBlock):
        return block.text
    if isinstance(block, schema.ResourceContentBlock):
        return f"[resource {block.uri}]"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind}]"


def _locations(raw: list[schema.ToolCallLocation] | None) -> tuple[Location, ...]:
    return tuple(Location(loc.path, loc.line) for loc in raw or ())


def _tool_text(content: list[Any] | None) -> str | None:
    if not content:
        return None
    parts: list[str] = []
    for item in content:
        if isinstance(item, schema.ContentToolCallContent):
            parts.append(content_text(item.content))
        elif isinstance(item, schema.FileEditToolCallContent):
            parts.append(f"[diff {item.path}]")
        elif isinstance(item, schema.TerminalToolCallContent):
            parts.append(f"[terminal {item.terminal_id}]")
    return "\n".join(parts) if parts else None


def from_update(update: Any) -> AcpEvent:
    """The typed event for one ``session/update`` payload."""
    if isinstance(update, schema.AgentMessageChunk):
        return MessageChunk(content_text(update.content), update.message_id)
    if isinstance(update, schema.AgentThoughtChunk):
        return ThoughtChunk(content_text(update.content), update.message_id)
    if isinstance(update, schema.ToolCallStart):
        return ToolCallStarted(
            update.tool_call_id,
            update.title,
            update.kind or "other",
            update.status or "pending",
            _locations(update.locations),
            update.raw_input,
        )
    if isinstance(update, schema.ToolCallProgress):
        return ToolCallUpdated(
            update.tool_call_id,
            update.title,
            update.kind,
            update.status,
            None if update.locations is None else _locations(update.locations),
            _tool_text(update.content),
        )
    if isinstance(update, schema.AgentPlanUpdate):
        return PlanUpdated(tuple(PlanStep(e.content, e.priority, e.status) for e in update.entries))
    if isinstance(update, schema.UsageUpdate):
        cost = update.cost
        return UsageUpdated(
            update.used,
            update.size,
            None if cost is None else float(cost.amount),
            None if cost is None else cost.currency,
        )
    if isinstance(update, schema.CurrentModeUpdate):
        return ModeChanged(update.current_mode_id)
    return Unhandled(kind=str(getattr(update, "session_update", type(update).__name__)))


def emit(stream: EventStream, event: AcpEvent) -> None:
    """Put ``event`` on the session's stream (unhandled kinds are dropped)."""
    if not event.type:
        return
    data = event.to_dict()
    del data["type"]
    stream.emit(event.type, **data)
