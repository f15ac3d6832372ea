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

A subscriber may also ask which files changed (``paths``): it is told each report's paths
below ``.redline/queue/`` (or None: not known) just before the change is reported, from the
same thread (:class:`~redline.workspace.queue.QueueWatcher`'s ``on_paths``;
:func:`~redline.workspace.queue.changed_records` reads them). The dashboard's stack reads
again only the records named (issue 44).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from redline.workspace.queue import QueueWatcher, WorkspaceQueue

log = logging.getLogger(__name__)

Listener = Callable[[], None]
#: Told the paths of one report (relative to ``.redline/queue/``; None: not known).
PathsListener = Callable[[frozenset[str] | None], None]


class WatcherFactory(Protocol):
    """What starts a follower's watcher (``WorkspaceQueue.watch``)."""

    def __call__(
        self, callback: Listener, *, on_paths: PathsListener | None = None
    ) -> QueueWatcher: ...


# Guards _FOLLOWERS and every follower's listener list.
_lock = threading.Lock()
_FOLLOWERS: dict[Path, QueueFollower] = {}


class QueueFollower:
    """The watcher of one workspace's queue, shared by every subscriber in this process."""

    def __init__(self, root: Path, watcher_factory: WatcherFactory) -> None:
        self.root = root
        self._factory = watcher_factory
        self._listeners: list[Listener] = []
        self._paths_listeners: list[PathsListener] = []
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

    def subscribe(
        self, listener: Listener, *, paths: PathsListener | None = None
    ) -> Callable[[], None]:
        """Call ``listener()`` (from the watcher thread) on every change, and ``paths``
        first with the paths changed (see the module doc); returns unsubscribe.

        The watcher thread starts with the first subscriber and stops with the last.
        """
        with _lock:
            self._listeners.append(listener)
            if paths is not None:
                self._paths_listeners.append(paths)
            _FOLLOWERS.setdefault(self.root, self)
            if self._watcher is None:
                # Started under the lock: a concurrent subscribe never starts a second one
                # (the start waits only for the thread to be ready).
                self._watcher = self._factory(self._changed, on_paths=self._heard)

        def unsubscribe() -> None:
            watcher = None
            with _lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
                if paths is not None and paths in self._paths_listeners:
                    self._paths_listeners.remove(paths)
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

    def _heard(self, paths: frozenset[str] | None) -> None:
        with _lock:
            listeners = list(self._paths_listeners)
        for listener in listeners:
            try:
                listener(paths)
            except Exception:
                log.exception("a queue follower's listener failed")

    def _changed(self) -> None:
        with _lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("a queue follower's listener failed")


def follow(
    queue: WorkspaceQueue, listener: Listener, *, paths: PathsListener | None = None
) -> Callable[[], None]:
    """Subscribe ``listener`` (and ``paths``, see :meth:`QueueFollower.subscribe`) to
    ``queue``'s follower; returns the unsubscribe function."""
    return QueueFollower.of(queue).subscribe(listener, paths=paths)


__all__ = ["QueueFollower", "follow"]
