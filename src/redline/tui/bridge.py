"""The one place where session and store callbacks become Textual messages.

Callbacks arrive on the agent's (or the watcher's) thread. Events are queued, and one
``EventsAvailable`` message is outstanding at a time, so a flood of deltas costs one
message per UI drain instead of one per event and keys stay responsive.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from textual.message import Message

from redline.review.events import Event
from redline.review.store import PendingActionStore, StoreEvent
from redline.tui.messages import EventsAvailable, StackChanged, StampedEvent
from redline.tui.protocol import SessionLike

log = logging.getLogger(__name__)


class EventBridge:
    def __init__(self, post: Callable[[Message], object]) -> None:
        self._post = post
        self._lock = threading.Lock()
        self._queue: deque[StampedEvent] = deque()
        self._events_signalled = False
        self._stack_signalled = False
        self._unsubscribers: list[Callable[[], None]] = []
        # Read from other threads; an int assignment is atomic, so no lock is needed.
        self.run_id = 0

    def attach(self, session: SessionLike) -> None:
        self._unsubscribers.append(session.subscribe(self.on_event))
        self.attach_store(session.store)

    def attach_store(self, store: PendingActionStore) -> None:
        self._unsubscribers.append(store.subscribe(self.on_store_event))

    def attach_queue(
        self, queue: Any, paths: Callable[[frozenset[str] | None], None] | None = None
    ) -> None:
        """Watch the workspace queue: another process's push or resolution redraws the stack.

        ``queue`` is a :class:`redline.workspace.queue.WorkspaceQueue`; the process's one
        follower of it (:mod:`redline.review.follower`)
        reports within about 100 ms, coalesced with store events into one StackChanged;
        ``paths`` is told which files each report saw change first (from its thread).
        """
        from redline.review.follower import follow

        self._unsubscribers.append(follow(queue, lambda: self.on_store_event(None), paths=paths))

    def detach(self) -> None:
        for unsubscribe in self._unsubscribers:
            try:
                unsubscribe()
            except Exception:
                log.exception("detaching from the session failed")
        self._unsubscribers.clear()

    def on_event(self, event: Event) -> None:
        with self._lock:
            self._queue.append(StampedEvent(self.run_id, event))
            if self._events_signalled:
                return
            self._events_signalled = True
        self._post(EventsAvailable())

    def on_store_event(self, _event: StoreEvent | None) -> None:
        with self._lock:
            if self._stack_signalled:
                return
            self._stack_signalled = True
        self._post(StackChanged())

    def drain(self) -> list[StampedEvent]:
        with self._lock:
            self._events_signalled = False
            batch = list(self._queue)
            self._queue.clear()
        return batch

    def stack_seen(self) -> None:
        with self._lock:
            self._stack_signalled = False
