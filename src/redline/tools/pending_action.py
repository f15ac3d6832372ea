"""PendingActionStore: the LIFO stack of changes waiting to be applied or discarded."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from redline.workspace.preview import Preview

log = logging.getLogger(__name__)

ApplyCallback: TypeAlias = Callable[[str], "object | Awaitable[object]"]
RejectCallback: TypeAlias = Callable[[str], "object | Awaitable[object]"]
Clock: TypeAlias = Callable[[], float]


@dataclass(eq=False)
class PendingAction:
    """A change that waits for ``resolve``.

    ``apply(reason)`` and ``reject(reason)`` may be plain or ``async`` and may return a
    ToolResult, a note-shaped dict or a plain string (``reject`` may also return None).
    ``repreview()`` returns a fresh action computed against the current files.
    ``id`` and ``created_at`` are filled in by the store on push.
    """

    label: str
    apply: ApplyCallback
    reject: RejectCallback | None = None
    details: Any = None
    source_tool_name: str = "custom_tool"
    preview: Preview | None = None
    repreview: Callable[[], PendingAction | Awaitable[PendingAction]] | None = None
    id: str = ""
    created_at: float = 0.0
    stale: bool = False
    stale_reason: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label.strip():
            raise ValueError("a pending action needs a non-empty label")
        if not callable(self.apply):
            raise TypeError("a pending action needs a callable apply(reason)")
        if self.reject is not None and not callable(self.reject):
            raise TypeError("reject must be callable or None")

    def summary(self) -> dict[str, Any]:
        """JSON-able description for events, logs and lists."""
        return {
            "action_id": self.id,
            "label": self.label,
            "source_tool_name": self.source_tool_name,
            "preview": self.preview.summary() if self.preview is not None else None,
            "stale": self.stale,
        }


StoreEventKind = Literal["push", "pop", "replace", "clear", "stale"]


@dataclass(frozen=True)
class StoreEvent:
    kind: StoreEventKind
    action: PendingAction | None = None
    previous: PendingAction | None = None
    removed: tuple[PendingAction, ...] = field(default=())


StoreListener: TypeAlias = Callable[[StoreEvent], None]


class PendingActionStore:
    """A thread-safe LIFO stack of :class:`PendingAction`.

    The agent thread pushes while the UI thread resolves, so every method takes the
    store's lock. Listeners run under the lock, in event order; one that raises is
    logged and never breaks the store.
    """

    def __init__(self, clock: Clock = time.time) -> None:
        self._lock = threading.RLock()
        self._stack: list[PendingAction] = []
        self._listeners: list[StoreListener] = []
        self._next_id = 1
        self._clock = clock
        # Held for the whole of one resolution, so an action never runs twice.
        self.resolution_lock = threading.Lock()

    # -- stack -------------------------------------------------------------------
    def push(self, action: PendingAction) -> PendingAction:
        with self._lock:
            self._stamp(action)
            self._stack.append(action)
            self._emit(StoreEvent("push", action))
            return action

    def peek(self) -> PendingAction | None:
        with self._lock:
            return self._stack[-1] if self._stack else None

    def pop(self) -> PendingAction | None:
        with self._lock:
            if not self._stack:
                return None
            action = self._stack.pop()
            self._emit(StoreEvent("pop", action))
            return action

    def remove(self, action_id: str) -> PendingAction | None:
        """Take one action off the stack by id (resolve uses it: the agent may push meanwhile)."""
        with self._lock:
            for index, action in enumerate(self._stack):
                if action.id == action_id:
                    del self._stack[index]
                    self._emit(StoreEvent("pop", action))
                    return action
            return None

    def replace(self, action_id: str, new_action: PendingAction) -> PendingAction:
        """Put ``new_action`` where ``action_id`` was; it gets a new id, the stack keeps its order."""
        with self._lock:
            for index, action in enumerate(self._stack):
                if action.id == action_id:
                    self._stamp(new_action)
                    self._stack[index] = new_action
                    self._emit(StoreEvent("replace", new_action, previous=action))
                    return new_action
            raise KeyError(f"no pending action with id {action_id!r}")

    def mark_stale(self, action_id: str, reason: str) -> PendingAction | None:
        with self._lock:
            action = self.get(action_id)
            if action is None or (action.stale and action.stale_reason == reason):
                return action
            action.stale = True
            action.stale_reason = reason
            self._emit(StoreEvent("stale", action))
            return action

    def get(self, action_id: str) -> PendingAction | None:
        with self._lock:
            for action in self._stack:
                if action.id == action_id:
                    return action
            return None

    def clear(self) -> tuple[PendingAction, ...]:
        with self._lock:
            removed = tuple(reversed(self._stack))
            self._stack.clear()
            self._emit(StoreEvent("clear", removed=removed))
            return removed

    def snapshot(self) -> tuple[PendingAction, ...]:
        """Every pending action, top first."""
        with self._lock:
            return tuple(reversed(self._stack))

    @property
    def has_pending(self) -> bool:
        with self._lock:
            return bool(self._stack)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._stack)

    def __len__(self) -> int:
        return self.count

    # -- listeners ---------------------------------------------------------------
    def subscribe(self, listener: StoreListener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, event: StoreEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("pending-action listener %r failed on %s", listener, event.kind)

    def _stamp(self, action: PendingAction) -> None:
        action.id = f"pa-{self._next_id}"
        self._next_id += 1
        action.created_at = self._clock()
        action.stale = False
        action.stale_reason = ""
