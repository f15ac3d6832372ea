"""The one event stream: dashboard, session log, ``exec --json``, SDK listeners and tests.

Every event type is a frozen dataclass below. Producers build one and hand it to
:meth:`EventStream.emit`, which stamps ``seq``, ``time`` and ``session_id``; consumers
dispatch with ``match`` on the classes, so mypy checks every field a producer fills and a
consumer reads. ``to_dict()`` gives the wire shape (``exec --json``, session logs):
``type``, ``seq``, ``time``, ``session_id``, then the event's own fields in declaration
order. ``event_from_dict`` reads it back.

A new event type is one new dataclass with a ``TYPE`` and the ``@register`` decorator.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_type_hints

# JsonObject: what a tool's arguments and an unknown event's record are (no ``Any``).
from redline.jsontypes import JsonObject
from redline.review.event_stream import OMIT_IF_NONE, E, Event, EventListener, EventStream
from redline.review.result import ToolResult
from redline.workspace.summary import PreviewSummary

RunStatus = Literal["done", "awaiting_review", "aborted", "error", "max_turns"]
"""How one run ended (``prompt()``/``resume()`` return it; ``agent_end`` carries it)."""

ResolveVerb = Literal["apply", "discard"]
ResolvedBy = Literal["agent", "human", "auto", "rule"]


class AgentState(enum.StrEnum):
    """Where the agent is now, as the SDK, ``exec`` and the dashboard name it.

    The value is the words people read (the dashboard's status line shows it).
    """

    IDLE = "idle"
    RUNNING = "running"
    WAITING_FOR_REVIEW = "waiting for review"
    STOPPED = "stopped"
    FAILED = "failed"

    @classmethod
    def after(cls, status: RunStatus) -> AgentState:
        """The state a run leaves the agent in when it ends with ``status``."""
        return _STATE_AFTER[status]


_STATE_AFTER: dict[str, AgentState] = {
    "done": AgentState.IDLE,
    "awaiting_review": AgentState.WAITING_FOR_REVIEW,
    "aborted": AgentState.STOPPED,
    "error": AgentState.FAILED,
    "max_turns": AgentState.STOPPED,
}


class EventFormatError(ValueError):
    """A recorded event cannot be read back (unknown type, missing or wrong field)."""


_HEADER = ("type", "seq", "time", "session_id")


_REGISTRY: dict[str, list[type[Event]]] = {}


def register(cls: type[E]) -> type[E]:
    """Make ``cls`` readable by :func:`event_from_dict` under its wire ``TYPE``."""
    if not cls.TYPE:
        raise TypeError(f"{cls.__name__} has no TYPE")
    variants = _REGISTRY.setdefault(cls.TYPE, [])
    if any(other.VARIANT == cls.VARIANT for other in variants):
        raise TypeError(f"event type {cls.TYPE!r} registered twice")
    # Classes with a VARIANT key are tried before the plain one.
    variants.insert(0 if cls.VARIANT is not None else len(variants), cls)
    return cls


# -- the run ---------------------------------------------------------------------------
@register
@dataclass(frozen=True)
class AgentStart(Event):
    TYPE: ClassVar[str] = "agent_start"
    STARTS_RUN: ClassVar[bool] = True
    model: str
    resolver: str
    prompt: str | None


@register
@dataclass(frozen=True)
class AgentEnd(Event):
    TYPE: ClassVar[str] = "agent_end"
    status: RunStatus
    pending: int


@register
@dataclass(frozen=True)
class TurnStart(Event):
    TYPE: ClassVar[str] = "turn_start"
    turn: int


@register
@dataclass(frozen=True)
class TurnEnd(Event):
    TYPE: ClassVar[str] = "turn_end"
    turn: int


@register
@dataclass(frozen=True)
class MessageStart(Event):
    TYPE: ClassVar[str] = "message_start"
    role: str


@register
@dataclass(frozen=True)
class MessageDelta(Event):
    TYPE: ClassVar[str] = "message_delta"
    text: str


@register
@dataclass(frozen=True)
class MessageEnd(Event):
    TYPE: ClassVar[str] = "message_end"
    text: str


@register
@dataclass(frozen=True)
class TokenUsage(Event):
    TYPE: ClassVar[str] = "usage"
    input_tokens: int
    output_tokens: int


# -- tools -----------------------------------------------------------------------------
@register
@dataclass(frozen=True)
class ToolStart(Event):
    TYPE: ClassVar[str] = "tool_start"
    tool_call_id: str
    name: str
    args: JsonObject


@register
@dataclass(frozen=True)
class ToolUpdate(Event):
    TYPE: ClassVar[str] = "tool_update"
    tool_call_id: str
    name: str
    text: str


@register
@dataclass(frozen=True)
class ToolEnd(Event):
    TYPE: ClassVar[str] = "tool_end"
    tool_call_id: str
    name: str
    result: ToolResult
    is_error: bool


# -- pending actions -------------------------------------------------------------------
@register
@dataclass(frozen=True)
class PendingPushed(Event):
    TYPE: ClassVar[str] = "pending_pushed"
    action_id: str
    label: str
    source_tool_name: str
    preview: PreviewSummary | None
    # Each file's unified diff ({"kind", "path", "diff"}, "old_path" for renames); filled
    # when the session is asked to (``redline exec --resolver human``), else left out.
    diffs: list[dict[str, str]] | None = dataclasses.field(
        default=None, metadata={OMIT_IF_NONE: True}
    )


@register
@dataclass(frozen=True)
class PendingResolved(Event):
    TYPE: ClassVar[str] = "pending_resolved"
    action_id: str
    action: ResolveVerb
    reason: str
    by: ResolvedBy
    label: str
    source_tool_name: str
    result: ToolResult
    # The review rule's name when ``by`` is ``"rule"``.
    rule: str | None = dataclasses.field(default=None, metadata={OMIT_IF_NONE: True})


@register
@dataclass(frozen=True)
class PendingStale(Event):
    TYPE: ClassVar[str] = "pending_stale"
    action_id: str
    label: str
    reason: str


@register
@dataclass(frozen=True)
class PendingReplaced(Event):
    TYPE: ClassVar[str] = "pending_replaced"
    old_action_id: str
    action_id: str
    label: str
    source_tool_name: str
    preview: PreviewSummary | None


@register
@dataclass(frozen=True)
class PendingRebased(Event):
    """``rebased pa-4 as pa-9 onto pa-6``: an action carried over an out-of-order apply.

    Followed by the ``pending_replaced`` event of the same replacement.
    """

    TYPE: ClassVar[str] = "pending_rebased"
    old_action_id: str
    action_id: str
    onto: str

    @property
    def text(self) -> str:
        return f"rebased {self.old_action_id} as {self.action_id} onto {self.onto}"


@register
@dataclass(frozen=True)
class Undone(Event):
    TYPE: ClassVar[str] = "undone"
    entry_id: str
    label: str
    files: list[str]
    # The pending action the undone apply came from (``pa-7``); off the wire when unknown.
    action_id: str | None = dataclasses.field(default=None, metadata={OMIT_IF_NONE: True})


# -- plugins, notices, errors ----------------------------------------------------------
@register
@dataclass(frozen=True)
class PluginLoaded(Event):
    TYPE: ClassVar[str] = "plugin_loaded"
    path: str
    tools: list[str]
    message: str


@register
@dataclass(frozen=True)
class PluginFailed(Event):
    TYPE: ClassVar[str] = "plugin_error"
    path: str
    message: str
    source: str


@register
@dataclass(frozen=True)
class PluginOutput(Event):
    """What a plugin printed (``stream`` is ``stdout`` or ``stderr``); never mixed into
    redline's own output."""

    TYPE: ClassVar[str] = "plugin_output"
    path: str
    stream: str
    text: str


@register
@dataclass(frozen=True)
class Notice(Event):
    TYPE: ClassVar[str] = "notice"
    message: str


@register
@dataclass(frozen=True)
class ResolutionFailed(Event):
    """An apply or discard that was refused or failed; the action is still pending.

    On the wire it is a ``notice`` with ``failed: true`` (so older readers show its text).
    """

    TYPE: ClassVar[str] = "notice"
    VARIANT: ClassVar[tuple[str, object] | None] = ("failed", True)
    message: str
    action_id: str
    action: ResolveVerb
    reason: str
    label: str
    source_tool_name: str
    by: ResolvedBy
    failed: Literal[True] = True
    # The review rule's name when ``by`` is ``"rule"``.
    rule: str | None = dataclasses.field(default=None, metadata={OMIT_IF_NONE: True})


@register
@dataclass(frozen=True)
class ErrorEvent(Event):
    TYPE: ClassVar[str] = "error"
    message: str


# Runs own these; after the person stops a run, late ones are dropped instead of shown.
RUN_SCOPED: tuple[type[Event], ...] = (
    AgentStart,
    AgentEnd,
    TurnStart,
    TurnEnd,
    MessageStart,
    MessageDelta,
    MessageEnd,
    ToolStart,
    ToolUpdate,
    ToolEnd,
    TokenUsage,
    ErrorEvent,
)

# The built-in wire types; ``is_event_type`` also knows types registered later.
EVENT_TYPES: frozenset[str] = frozenset(_REGISTRY)


def is_event_type(name: str) -> bool:
    """Whether ``name`` is the wire ``type`` of a registered event class."""
    return name in _REGISTRY


@dataclass(frozen=True)
class UnknownEvent(Event):
    """A recorded event of a type this version does not know (a newer redline wrote it).

    Replays pass it through unchanged; consumers skip it.
    """

    raw: JsonObject

    def to_dict(self) -> dict[str, Any]:
        return dict(self.raw)

    @property
    def type(self) -> str:
        return str(self.raw.get("type", ""))


# -- reading back ----------------------------------------------------------------------
_ADAPTERS: dict[str, dict[str, Any]] = {}


def _field_adapters(cls: type[Event]) -> dict[str, Any]:
    """A pydantic validator per field (None for a ToolResult), built once per class."""
    key = f"{cls.__module__}.{cls.__qualname__}"
    adapters = _ADAPTERS.get(key)
    if adapters is None:
        from pydantic import TypeAdapter

        hints = get_type_hints(cls)
        adapters = _ADAPTERS[key] = {
            item.name: None if hints[item.name] is ToolResult else TypeAdapter(hints[item.name])
            for item in dataclasses.fields(cls)
        }
    return adapters


def _pick(raw: Mapping[str, Any]) -> type[Event]:
    kind = raw.get("type")
    variants = _REGISTRY.get(kind) if isinstance(kind, str) else None
    if not variants:
        raise EventFormatError(f"unknown event type {kind!r}")
    for cls in variants:
        if cls.VARIANT is None or raw.get(cls.VARIANT[0]) == cls.VARIANT[1]:
            return cls
    raise EventFormatError(f"event type {kind!r}: no variant matches")


def event_from_dict(raw: Mapping[str, Any]) -> Event:
    """The event a wire dict describes; ``EventFormatError`` names what is wrong."""
    from pydantic import ValidationError

    if not isinstance(raw, Mapping):
        raise EventFormatError(f"an event must be an object, not {type(raw).__name__}")
    cls = _pick(raw)
    values: dict[str, Any] = {}
    for name, adapter in _field_adapters(cls).items():
        if name not in raw:
            continue
        value = raw[name]
        try:
            values[name] = (
                ToolResult.from_dict(value) if adapter is None else adapter.validate_python(value)
            )
        except (ValidationError, TypeError, ValueError, AttributeError) as exc:
            first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise EventFormatError(f"{cls.TYPE} event: field {name!r}: {first}") from None
    try:
        return cls(**values)
    except TypeError as exc:
        raise EventFormatError(f"{cls.TYPE} event: {exc}") from None


__all__ = [
    "OMIT_IF_NONE",
    "RUN_SCOPED",
    "AgentEnd",
    "AgentStart",
    "AgentState",
    "ErrorEvent",
    "Event",
    "EventFormatError",
    "EventListener",
    "EventStream",
    "MessageDelta",
    "MessageEnd",
    "MessageStart",
    "Notice",
    "PendingPushed",
    "PendingRebased",
    "PendingReplaced",
    "PendingResolved",
    "PendingStale",
    "PluginFailed",
    "PluginLoaded",
    "PluginOutput",
    "PreviewSummary",
    "ResolutionFailed",
    "ResolveVerb",
    "ResolvedBy",
    "RunStatus",
    "TokenUsage",
    "ToolEnd",
    "ToolStart",
    "ToolUpdate",
    "TurnEnd",
    "TurnStart",
    "Undone",
    "UnknownEvent",
    "event_from_dict",
    "is_event_type",
    "register",
]
