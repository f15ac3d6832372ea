"""The base of every event and the stream that numbers and delivers them.

Kept apart from :mod:`redline.review.events` (which re-exports both, the public path) so a
process that proposes actions without ever showing an event — ``redline hook`` — can hold a
:class:`~redline.review.session.ReviewSession` without building the 25 event classes at
start-up; they are imported when the first event is made.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias, TypeVar

from redline.lazylog import LazyLogger
from redline.review.result import ToolResult

log = LazyLogger("redline.review.events")  # logging is imported when something is logged

# Field metadata: a field whose value is None is left out of ``to_dict()`` (new optional
# fields keep the shapes older readers know).
OMIT_IF_NONE = "omit_if_none"


@dataclass(frozen=True, kw_only=True)
class Event:
    """What every event carries; ``seq``, ``time`` and ``session_id`` are set by ``emit``."""

    TYPE: ClassVar[str] = ""
    # A second class may share a wire type; it claims the records where this key has this value.
    VARIANT: ClassVar[tuple[str, object] | None] = None

    # Set on the event that starts a run (``agent_start``): the stream stops keeping the
    # events sent before it for late subscribers.
    STARTS_RUN: ClassVar[bool] = False

    seq: int = 0
    time: float = 0.0
    session_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The wire shape: the four common keys, then the event's fields in order."""
        out: dict[str, Any] = {
            "type": self.TYPE,
            "seq": self.seq,
            "time": self.time,
            "session_id": self.session_id,
        }
        for item in dataclasses.fields(self):
            if item.name not in out:
                value = getattr(self, item.name)
                if value is None and item.metadata.get(OMIT_IF_NONE):
                    continue  # an optional field that is not set stays off the wire
                out[item.name] = value.to_dict() if isinstance(value, ToolResult) else value
        return out

    @property
    def type(self) -> str:
        """The wire ``type`` (the same as the class's ``TYPE``)."""
        return self.TYPE


EventListener: TypeAlias = Callable[[Event], None]
E = TypeVar("E", bound=Event)


class EventStream:
    """Numbers events and hands them to listeners, in order, from any thread."""

    def __init__(
        self, session_id: str, clock: Callable[[], float] = time.time, *, replay: bool = True
    ) -> None:
        self.session_id = session_id
        self._clock = clock
        self._seq = 0
        self._lock = threading.RLock()
        self._listeners: list[EventListener] = []
        # Events from before the first run (plugin load errors, ...), for late subscribers;
        # None once a run started, or from the start for a stream nobody replays
        # (``replay=False``: a ``redline hook`` process's).
        self._startup: list[Event] | None = [] if replay else None

    @property
    def heard(self) -> bool:
        """Whether an event emitted now reaches anyone: a listener, or a late subscriber's
        replay. A producer may skip building an event nobody hears (a hook process's rule
        decision then never imports the event classes)."""
        with self._lock:
            return bool(self._listeners) or self._startup is not None

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

    def emit(self, event: E) -> E:
        """Stamp ``event`` with the next ``seq``, the time and the session; deliver it.

        Returns the stamped event: ``event`` itself when it was fresh (``seq`` 0), else a
        stamped copy, so an event already delivered never changes.
        """
        with self._lock:
            self._seq += 1
            if event.seq:
                # Already sent once (here or on another stream): send a stamped copy.
                stamped = dataclasses.replace(
                    event, seq=self._seq, time=self._clock(), session_id=self.session_id
                )
            else:
                # A fresh event is stamped in place before anyone else sees it (cheap:
                # thousands of text deltas a second pass through here).
                stamped = event
                object.__setattr__(stamped, "seq", self._seq)
                object.__setattr__(stamped, "time", self._clock())
                object.__setattr__(stamped, "session_id", self.session_id)
            if stamped.STARTS_RUN:
                self._startup = None
            elif self._startup is not None:
                self._startup.append(stamped)
            for listener in list(self._listeners):
                try:
                    listener(stamped)
                except Exception:
                    log.exception("event listener %r failed on %s", listener, stamped.TYPE)
            return stamped


__all__ = ["OMIT_IF_NONE", "E", "Event", "EventListener", "EventStream"]
