"""Typed activity from an ACP agent: one event class per kind of ``session/update``.

The classes are events of the one stream (:mod:`redline.review.events`): each subclasses
``Event``, has a wire ``TYPE`` starting with ``acp_`` and is registered, so session logs
and ``exec --json`` replays read them back. :func:`from_update` turns the ``acp`` package's
pydantic models into them. Nothing here imports the ``acp`` package until an update is
converted, so the printers can match on these classes cheaply.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, TypeAlias

# JsonValue: a tool call's raw input, read back from a session log (a real import: the
# event classes' fields are resolved at run time).
from redline.jsontypes import JsonValue
from redline.review.events import OMIT_IF_NONE, Event, Notice, register

if TYPE_CHECKING:
    from acp import schema

    #: One ``session/update`` payload, as the ``acp`` package parses it.
    SessionUpdate: TypeAlias = (
        schema.UserMessageChunk
        | schema.AgentMessageChunk
        | schema.AgentThoughtChunk
        | schema.ToolCallStart
        | schema.ToolCallProgress
        | schema.AgentPlanUpdate
        | schema.AgentPlanContentUpdate
        | schema.AgentPlanRemovedUpdate
        | schema.AvailableCommandsUpdate
        | schema.CurrentModeUpdate
        | schema.ConfigOptionUpdate
        | schema.SessionInfoUpdate
        | schema.UsageUpdate
    )
    #: A content block of a message chunk or a tool call's content.
    ContentBlock: TypeAlias = (
        schema.TextContentBlock
        | schema.ImageContentBlock
        | schema.AudioContentBlock
        | schema.ResourceContentBlock
        | schema.EmbeddedResourceContentBlock
    )
    ToolCallContent: TypeAlias = (
        schema.ContentToolCallContent
        | schema.FileEditToolCallContent
        | schema.TerminalToolCallContent
    )


@dataclass(frozen=True)
class Location:
    path: str
    line: int | None = None


@dataclass(frozen=True)
class PlanStep:
    content: str
    priority: str
    status: str


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


@dataclass(frozen=True, kw_only=True)
class AcpEvent(Event):
    """What an external agent did; nested records (locations, plan steps) become dicts."""

    def to_dict(self) -> dict[str, object]:
        return {key: _plain(value) for key, value in super().to_dict().items()}


@register
@dataclass(frozen=True)
class AcpMessage(AcpEvent):
    """A piece of the agent's answer (text; other content is described, not embedded)."""

    TYPE: ClassVar[str] = "acp_message"
    text: str
    message_id: str | None = None


@register
@dataclass(frozen=True)
class AcpThought(AcpEvent):
    TYPE: ClassVar[str] = "acp_thought"
    text: str
    message_id: str | None = None


@register
@dataclass(frozen=True)
class AcpToolCall(AcpEvent):
    TYPE: ClassVar[str] = "acp_tool_call"
    tool_call_id: str
    title: str
    kind: str = "other"
    status: str = "pending"
    locations: tuple[Location, ...] = ()
    raw_input: JsonValue = None


@register
@dataclass(frozen=True)
class AcpToolCallUpdate(AcpEvent):
    """A change to a tool call: only the fields the agent sent are set (None: unchanged)."""

    TYPE: ClassVar[str] = "acp_tool_call_update"
    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    locations: tuple[Location, ...] | None = None
    text: str | None = None


@register
@dataclass(frozen=True)
class AcpPlan(AcpEvent):
    TYPE: ClassVar[str] = "acp_plan"
    entries: tuple[PlanStep, ...] = ()


@register
@dataclass(frozen=True)
class AcpUsage(AcpEvent):
    """Context window use (``used`` of ``size`` tokens) and, when known, the cost."""

    TYPE: ClassVar[str] = "acp_usage"
    used: int
    size: int
    cost: float | None = None
    currency: str | None = None


@register
@dataclass(frozen=True)
class AcpMode(AcpEvent):
    TYPE: ClassVar[str] = "acp_mode"
    mode_id: str


@register
@dataclass(frozen=True)
class AcpAgentExit(AcpEvent):
    """The agent process ended; ``how`` is a sentence (exit status or signal)."""

    TYPE: ClassVar[str] = "acp_agent_exit"
    returncode: int | None
    how: str
    expected: bool = False


@register
@dataclass(frozen=True)
class AcpStderr(AcpEvent):
    """One line the agent wrote to its stderr (kept in the session log, not printed)."""

    TYPE: ClassVar[str] = "acp_stderr"
    text: str


@register
@dataclass(frozen=True)
class AcpNotice(Notice):
    """A notice about the agent's files or session, with the facts as fields.

    On the wire it is a ``notice`` with ``acp: true`` (older readers show its text).
    """

    VARIANT: ClassVar[tuple[str, object] | None] = ("acp", True)
    path: str | None = None
    tool_call_id: str | None = None
    entry_id: str | None = None
    diff: str | None = None
    acp_session_id: str | None = None
    acp: Literal[True] = True
    # The ids of the resolutions a resolution prompt just told the agent about (a resumed
    # session reports only what came after the last such notice).
    told: tuple[str, ...] | None = dataclasses.field(default=None, metadata={OMIT_IF_NONE: True})


@dataclass(frozen=True)
class Unhandled:
    """An update kind redline does not show (available commands, config options...)."""

    kind: str


def content_text(block: ContentBlock) -> str:
    """The text of a content block, or a short description of what else it is."""
    from acp import schema

    if isinstance(block, schema.TextContentBlock):
        return block.text
    if isinstance(block, schema.ResourceContentBlock):
        return f"[resource {block.uri}]"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind}]"


def _locations(raw: list[schema.ToolCallLocation] | None) -> tuple[Location, ...]:
    return tuple(Location(loc.path, loc.line) for loc in raw or ())


def _tool_text(content: list[ToolCallContent] | None) -> str | None:
    from acp import schema

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


def from_update(update: SessionUpdate) -> AcpEvent | Unhandled:
    """The typed event for one ``session/update`` payload."""
    from acp import schema

    if isinstance(update, schema.AgentMessageChunk):
        return AcpMessage(content_text(update.content), update.message_id)
    if isinstance(update, schema.AgentThoughtChunk):
        return AcpThought(content_text(update.content), update.message_id)
    if isinstance(update, schema.ToolCallStart):
        return AcpToolCall(
            update.tool_call_id,
            update.title,
            update.kind or "other",
            update.status or "pending",
            _locations(update.locations),
            update.raw_input,
        )
    if isinstance(update, schema.ToolCallProgress):
        return AcpToolCallUpdate(
            update.tool_call_id,
            update.title,
            update.kind,
            update.status,
            None if update.locations is None else _locations(update.locations),
            _tool_text(update.content),
        )
    if isinstance(update, schema.AgentPlanUpdate):
        return AcpPlan(tuple(PlanStep(e.content, e.priority, e.status) for e in update.entries))
    if isinstance(update, schema.UsageUpdate):
        cost = update.cost
        return AcpUsage(
            update.used,
            update.size,
            None if cost is None else float(cost.amount),
            None if cost is None else cost.currency,
        )
    if isinstance(update, schema.CurrentModeUpdate):
        return AcpMode(update.current_mode_id)
    return Unhandled(str(getattr(update, "session_update", type(update).__name__)))


__all__ = [
    "AcpAgentExit",
    "AcpEvent",
    "AcpMessage",
    "AcpMode",
    "AcpNotice",
    "AcpPlan",
    "AcpStderr",
    "AcpThought",
    "AcpToolCall",
    "AcpToolCallUpdate",
    "AcpUsage",
    "Location",
    "PlanStep",
    "Unhandled",
    "content_text",
    "from_update",
]
