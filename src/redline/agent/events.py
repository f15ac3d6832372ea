"""The one event stream: dashboard, session log, ``exec --json``, SDK listeners and tests.

Every event is JSON-serialisable and carries ``type``, ``seq``, ``time`` and
``session_id``; the remaining fields depend on the type (see docs/sdk.md).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

log = logging.getLogger(__name__)

EventType = Literal[
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_delta",
    "message_end",
    "tool_start",
    "tool_update",
    "tool_end",
    "pending_pushed",
    "pending_resolved",
    "pending_stale",
    "pending_replaced",
    "undone",
    "plugin_loaded",
    "plugin_error",
    "plugin_output",
    "notice",
    "error",
    "usage",
    # Activity of an external agent over ACP (redline.acp.events).
    "acp_message",
    "acp_thought",
    "acp_tool_call",
    "acp_tool_call_update",
    "acp_plan",
    "acp_usage",
    "acp_mode",
    "acp_agent_exit",
    "acp_stderr",
]

EVENT_TYPES: frozenset[str] = frozenset(EventType.__args__)  # type: ignore[attr-defined]

RunStatus = Literal["done", "awaiting_review", "aborted", "error", "max_turns"]


@dataclass(frozen=True)
class Event:
    type: str
    seq: int
    time: float
    session_id: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_dict().get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "seq": self.seq,
            "time": self.time,
            "session_id": self.session_id,
            **self.data,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Event:
        data = {k: v for k, v in raw.items() if k not in ("type", "seq", "time", "session_id")}
        return cls(
            type=str(raw["type"]),
            seq=int(raw["seq"]),
            time=float(raw["time"]),
            session_id=str(raw["session_id"]),
            data=data,
        )


EventListener: TypeAlias = Callable[[Event], None]


class EventStream:
    """Numbers events and hands them to listeners, in order, from any thread."""

    def __init__(self, session_id: str, clock: Callable[[], float] = time.time) -> None:
        self.session_id = session_id
        self._clock = clock
        self._seq = 0
        self._lock = threading.RLock()
        self._listeners: list[EventListener] = []
        # Events from before the first run (plugin load errors, ...), for late subscribers.
        self._startup: list[Event] | None = []

    def subscribe(self, listener: EventListener, *, replay: bool = False) -> Callable[[], None]:
        """Listen from now on; with ``replay``, first receive the events sent before the
        first run started (so a client that subscribes late still sees plugin errors)."""
        with self._lock:
            if replay:
                for event in self._startup or ():
                    listener(event)
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, type: str, **data: Any) -> Event:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}")
        with self._lock:
            self._seq += 1
            event = Event(type, self._seq, self._clock(), self.session_id, data)
            if type == "agent_start":
                self._startup = None
            elif self._startup is not None:
                self._startup.append(event)
            for listener in list(self._listeners):
                try:
                    listener(event)
                except Exception:
                    log.exception("event listener %r failed on %s", listener, type)
            return event
