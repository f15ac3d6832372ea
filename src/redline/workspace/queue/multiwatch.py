"""MultiQueueWatcher: one thread that watches many folders (every known workspace's
``.redline/queue/``, and the known workspaces' own folder) and says which changed.

``redline --all`` follows every known workspace at once; a :class:`QueueWatcher` per queue
would cost one thread (and one native notifier thread) per workspace. Here one watchfiles
notifier watches every folder that exists, on one Python thread; a change is reported as
the set of keys (the caller's names for the folders) it touched, debounced.

The set of folders can change while it runs (:meth:`MultiQueueWatcher.set_paths`): the
notifier is rebuilt on the same thread; a key the caller adds is not reported (the caller
reads it itself). A folder that does not exist is not watched (:attr:`watched` leaves it
out) and is looked for again every :data:`RECHECK_SECONDS`; one that comes back, or
disappears while watched, is reported (its key), so the caller can show it again, or
missing.

Threads: the watcher thread calls the callback; it must hand real work to its owner's
thread. ``_lock`` guards the wanted folders and what is watched.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: How often folders that did not exist (or vanished) are looked for again.
RECHECK_SECONDS = 2.0

Callback = Callable[[frozenset[str]], None]


class _Either:
    """What the notifier polls to end one ``watch()``: a stop or a new set of folders."""

    def __init__(self, *events: threading.Event) -> None:
        self._events = events

    def is_set(self) -> bool:
        return any(event.is_set() for event in self._events)


class MultiQueueWatcher:
    """One watchfiles thread over many folders; ``callback(keys)`` hears which changed.

    Only files whose name ends in ``suffix`` (and does not start with a dot) count, plus
    the watched folders themselves (a folder deleted or moved away).
    """

    def __init__(self, callback: Callback, *, suffix: str = ".json") -> None:
        self.callback = callback
        self.suffix = suffix
        self._lock = threading.Lock()
        self._wanted: dict[str, str] = {}
        self._watched: dict[str, str] = {}
        self._stop = threading.Event()
        self._reconfigure = threading.Event()
        self._configured = threading.Condition(self._lock)
        self._generation = 0  # set_paths calls made
        self._applied = 0  # the generation the notifier watches
        self._thread = threading.Thread(target=self._run, name="redline-queues-watch", daemon=True)

    # -- the caller's side -----------------------------------------------------------------
    def start(self, paths: Mapping[str, Path] | None = None, *, timeout: float = 10.0) -> None:
        """Start watching ``paths`` (key -> folder); returns once they are watched."""
        generation = self._set(paths or {})
        self._thread.start()
        self._wait(generation, timeout)

    def set_paths(self, paths: Mapping[str, Path], *, timeout: float = 10.0) -> None:
        """Watch exactly ``paths`` from now on; returns once the notifier watches them."""
        generation = self._set(paths)
        self._reconfigure.set()
        if self._thread.is_alive():
            self._wait(generation, timeout)

    @property
    def watched(self) -> frozenset[str]:
        """The keys whose folders are watched now (the others did not exist)."""
        with self._lock:
            return frozenset(self._watched)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)

    def _set(self, paths: Mapping[str, Path]) -> int:
        with self._lock:
            self._wanted = {key: os.path.abspath(path) for key, path in paths.items()}
            self._generation += 1
            return self._generation

    def _wait(self, generation: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._configured:
            while self._applied < generation and not self._stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return
                self._configured.wait(min(left, 0.5))

    # -- the watcher thread ----------------------------------------------------------------
    def _run(self) -> None:
        factory: Callable[..., Any] | None
        try:
            from watchfiles._rust_notify import RustNotify as factory
        except ImportError:  # a watchfiles that moved it: nothing is watched (said once)
            log.warning("watchfiles has no RustNotify: the review queues are not watched")
            factory = None
        # What the last notifier watched, of what was wanted then: a key whose folder came
        # back (or went away) is reported, since the notifier cannot tell of it.
        wanted_before: dict[str, str] = {}
        present_before: dict[str, str] = {}
        try:
            while not self._stop.is_set():
                self._reconfigure.clear()
                with self._lock:
                    wanted = dict(self._wanted)
                    generation = self._generation
                present = {key: path for key, path in wanted.items() if os.path.isdir(path)}
                notify = self._notifier(factory, present) if present else None
                with self._lock:
                    self._watched = dict(present) if notify is not None else {}
                    self._applied = generation
                    self._configured.notify_all()
                kept = {key for key, path in wanted.items() if wanted_before.get(key) == path}
                fresh = {key for key in kept if (key in present) != (key in present_before)}
                if fresh:
                    self._changed(frozenset(fresh))
                wanted_before, present_before = wanted, present
                self._watch(notify, present, wanted)
        finally:
            with self._lock:
                self._applied = self._generation
                self._configured.notify_all()

    def _notifier(self, factory: Callable[..., Any] | None, present: dict[str, str]) -> Any:
        if factory is None:
            return None
        for _attempt in range(3):
            try:
                return factory(list(present.values()), False, False, 300, True, False)
            except FileNotFoundError:  # one vanished since: look again
                for key, path in list(present.items()):
                    if not os.path.isdir(path):
                        del present[key]
                if not present:
                    return None
            except OSError as exc:
                log.warning("watching the review queues failed: %s", exc)
                return None
        return None

    def _watch(self, notify: Any, present: dict[str, str], wanted: dict[str, str]) -> None:
        """Report changes until the folders change, one comes or goes, or stop()."""
        either = _Either(self._stop, self._reconfigure)
        recheck_at = time.monotonic() + RECHECK_SECONDS
        roots = sorted(present.items(), key=lambda item: len(item[1]), reverse=True)
        try:
            while not either.is_set():
                if notify is None:
                    if self._reconfigure.wait(0.2) or self._stop.is_set():
                        return
                    raw: Any = "timeout"
                else:
                    raw = notify.watch(50, 10, 200, either)
                if isinstance(raw, str):
                    if raw != "timeout":
                        return  # "stop" (stop or reconfigure), or "signal"
                else:
                    keys, gone = self._keys_of(raw, roots)
                    if keys:
                        self._changed(frozenset(keys))
                    if gone:
                        return  # a watched folder went away: rebuild without it
                if time.monotonic() >= recheck_at:
                    recheck_at = time.monotonic() + RECHECK_SECONDS
                    now = {key for key, path in wanted.items() if os.path.isdir(path)}
                    if now != set(present):
                        return  # one came back or went away
        finally:
            if notify is not None:
                try:
                    notify.close()
                except Exception:
                    log.debug("closing the queues' notifier failed", exc_info=True)

    def _keys_of(
        self, raw: set[tuple[int, str]], roots: list[tuple[str, str]]
    ) -> tuple[set[str], bool]:
        keys: set[str] = set()
        gone = False
        for _change, path in raw:
            for key, root in roots:
                if path == root:
                    keys.add(key)
                    gone = gone or not os.path.isdir(root)
                    break
                if path.startswith(root + os.sep):
                    name = os.path.basename(path)
                    if name.endswith(self.suffix) and not name.startswith("."):
                        keys.add(key)
                    elif not os.path.isdir(root):
                        keys.add(key)
                        gone = True
                    break
        return keys, gone

    def _changed(self, keys: frozenset[str]) -> None:
        try:
            self.callback(keys)
        except Exception:  # a listener's failure never stops the watcher
            log.exception("the queues' watch callback failed")


__all__ = ["RECHECK_SECONDS", "MultiQueueWatcher"]
