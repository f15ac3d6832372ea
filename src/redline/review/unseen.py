"""Nothing waits unseen: the process that queued an action tells the person when no
dashboard watches its workspace (docs/inbox.md, "Nobody watching").

A hook, the MCP server and ``redline exec`` call :func:`tell_if_unseen` once an action they
queued is still pending after the review rules had their say. When no live presence watches
the workspace (:func:`redline.workspace.presence.watched`: a dashboard of it, a team
dashboard or follower in it, or a dashboard over every workspace), ``[notify] command`` runs,
else the desktop's notifier (``notify-send``; ``osascript`` on macOS), started detached
with no standard streams — a hook's and an MCP server's stdout is their protocol, so no
terminal escape is ever written. At most one notification per action: each is told once,
by the one process that queued it. ``redline pending import`` and the SDK never call this.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.review.store import PendingActionStore, StoreEvent

log = logging.getLogger(__name__)

#: How long ``redline exec`` lets the review rules decide a fresh action before it tells
#: the person (well inside the 5 seconds a notification may take).
GRACE_SECONDS = 0.5

_lock = threading.Lock()
_told: set[tuple[str, str]] = set()


def tell_if_unseen(root: Path, action_id: str, label: str, source: str) -> str | None:
    """Tell the person that ``action_id`` waits, unless someone watches ``root``; what was
    started (the notifier's program), or None (watched, told before, or no way to tell).
    Never raises: a notification that cannot be sent never stops a proposal."""
    key = (str(root), action_id)
    with _lock:
        if key in _told:
            return None
        _told.add(key)
    try:
        from redline.workspace.presence import watched

        if watched(root):
            return None
        from redline.config import ConfigError, notify_settings
        from redline.notify import Arrival, spawn_detached, unseen_argv

        try:
            config = notify_settings(root)
        except ConfigError as exc:
            log.warning("no notification for %s: %s", action_id, exc)
            return None
        arrival = Arrival(action_id, label, source)
        argv = unseen_argv(config, arrival)
        if argv is None:
            return None
        problem = spawn_detached(argv, arrival, config.timeout)
        if problem is not None:
            log.warning("no notification for %s: %s", action_id, problem)
            return None
        return argv[0]
    except Exception:  # never let telling the person break the proposal
        log.exception("notifying about %s failed", action_id)
        return None


def watch_store(
    root: Path,
    store: PendingActionStore,
    *,
    grace: float = GRACE_SECONDS,
    after: Callable[[float, Callable[[], None]], object] | None = None,
) -> Callable[[], None]:
    """Tell the person about each action ``store`` queues that is still pending ``grace``
    seconds later (``redline exec``: its rules decide meanwhile). Returns ``finish``: it
    stops watching and tells at once of what is still waiting for its grace to end (call
    it before the process ends: ``exec`` often ends right after queueing).
    ``after(delay, callback)`` schedules (default: a daemon timer thread)."""

    def schedule(delay: float, callback: Callable[[], None]) -> object:
        timer = threading.Timer(delay, callback)
        timer.daemon = True
        timer.start()
        return timer

    later = after or schedule
    waiting: dict[str, Callable[[], None]] = {}
    guard = threading.Lock()

    def on_event(event: StoreEvent) -> None:
        action = event.action
        if event.kind != "push" or action is None:
            return
        action_id, label = action.id, action.label
        source = store.source.canonical if store.source is not None else "exec"

        def check() -> None:
            if store.get(action_id) is not None:
                tell_if_unseen(root, action_id, label, source)

        def due() -> None:
            with guard:
                if waiting.pop(action_id, None) is None:
                    return  # told (or dropped) already
            check()

        with guard:
            waiting[action_id] = check
        later(grace, due)

    unsubscribe = store.subscribe(on_event)

    def finish() -> None:
        unsubscribe()
        with guard:
            left = list(waiting.values())
            waiting.clear()
        for check in left:
            check()

    return finish


__all__ = ["GRACE_SECONDS", "tell_if_unseen", "watch_store"]
