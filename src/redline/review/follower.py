"""QueueFollower: the one watcher of a workspace's review queue in this process.

Every part of redline that must learn of another process's push or decision — a driver's
:class:`~redline.review.session.ReviewSession`, the dashboard's stack, MCP ``await_review``
— subscribes here instead of starting a watcher of its own. One watchfiles thread per
workspace queue (``.redline/queue/``) runs while anyone follows it; each change calls every
subscriber, in the watcher's thread, in subscription order. A subscriber that raises is
logged and never stops the others.

Threads: the watcher thread calls the subscribers; they must hand real work to their own
thread or loop (a ReviewSession submits a sync to its driver's loop; the dashboard posts a
message). ``_lock`` guards the registry of followers and each follower's subscriber list.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from redline.workspace.queue import QueueWatcher, WorkspaceQueue

log = logging.getLogger(__name__)

Listener = Callable[[], None]

# Guards _FOLLOWERS and every follower's listener list.
_lock = threading.Lock()
_FOLLOWERS: dict[Path, QueueFollower] = {}


class QueueFollower:
    """The watcher of one workspace's queue, shared by every subscriber in this process."""

    def __init__(self, root: Path, watcher_factory: Callable[[Listener], QueueWatcher]) -> None:
        self.root = root
        self._factory = watcher_factory
        self._listeners: list[Listener] = []
        self._watcher: QueueWatcher | None = None

    @classmethod
    def of(cls, queue: WorkspaceQueue) -> QueueFollower:
        """The follower of ``queue``'s workspace (made on first use)."""
        with _lock:
            follower = _FOLLOWERS.get(queue.root)
            if follower is None:
                follower = cls(queue.root, queue.watch)
                _FOLLOWERS[queue.root] = follower
            return follower

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener()`` (from the watcher thread) on every change; returns unsubscribe.

        The watcher thread starts with the first subscriber and stops with the last.
        """
        with _lock:
            self._listeners.append(listener)
            _FOLLOWERS.setdefault(self.root, self)
            if self._watcher is None:
                # Started under the lock: a concurrent subscribe never starts a second one
                # (the start waits only for the thread to be ready).
                self._watcher = self._factory(self._changed)

        def unsubscribe() -> None:
            watcher = None
            with _lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
                if not self._listeners and self._watcher is not None:
                    watcher, self._watcher = self._watcher, None
                    if _FOLLOWERS.get(self.root) is self:
                        del _FOLLOWERS[self.root]
            if watcher is not None:
                watcher.stop()

        return unsubscribe

    def release(self) -> None:
        """Let the watcher thread end without waiting for it, in a process that exits right
        after (``redline hook`` once its decision is in): nothing is reported after this."""
        with _lock:
            watcher = self._watcher
        if watcher is not None:
            watcher.release()

    @property
    def following(self) -> bool:
        with _lock:
            return self._watcher is not None

    def _changed(self) -> None:
        with _lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("a queue follower's listener failed")


def follow(queue: WorkspaceQueue, listener: Listener) -> Callable[[], None]:
    """Subscribe ``listener`` to ``queue``'s follower; returns the unsubscribe function."""
    return QueueFollower.of(queue).subscribe(listener)


__all__ = ["QueueFollower", "follow"]
