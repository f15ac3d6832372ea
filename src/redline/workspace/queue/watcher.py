"""QueueWatcher: a thread that reports changes to ``.redline/queue/`` by any process."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class QueueWatcher:
    """A watchfiles thread on ``.redline/queue/`` (or another state folder: files whose
    name ends in ``suffix`` count); stop() ends it."""

    #: How often the watch looks for changes, in ms: a change is heard one to two steps
    #: after it is made. A process that only waits on one decision (``redline hook``) looks
    #: more often; it ends with that decision.
    step_ms = 10

    def __init__(self, path: Path, callback: Callable[[], None], *, suffix: str = ".json") -> None:
        self.path = path
        self.callback = callback
        self.suffix = suffix
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._notify: Any = None  # the RustNotify being watched, for release()
        self._thread = threading.Thread(target=self._run, name="redline-queue-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(5.0)

    def _run(self) -> None:
        try:
            from watchfiles._rust_notify import RustNotify
        except ImportError:  # a watchfiles that moved it: watch without knowing when it is set
            self._run_unsure()
            return
        try:
            # Watching starts when RustNotify is made: only then is start() released, so a
            # change right after start() returns is never missed (it was, now and then: an
            # owner request written in that gap went unanswered until the asker gave up).
            notify = RustNotify([str(self.path)], False, False, 300, True, False)
        except Exception:
            self._ready.set()
            raise
        self._notify = notify
        with notify:
            self._ready.set()
            while not self._stop.is_set():
                try:
                    raw = notify.watch(50, self.step_ms, 200, self._stop)
                except RuntimeError:
                    if self._stop.is_set():  # closed by release()
                        return
                    raise
                if isinstance(raw, str):  # "timeout", or "stop" / "signal": the end
                    if raw == "timeout":
                        continue
                    return
                if any(self._interesting(path) for _change, path in raw):
                    self._changed()

    def _run_unsure(self) -> None:
        import watchfiles

        self._ready.set()
        for _changes in watchfiles.watch(
            self.path,
            watch_filter=lambda _change, path: self._interesting(path),
            stop_event=self._stop,
            debounce=50,
            step=self.step_ms,
            rust_timeout=200,
            yield_on_timeout=False,
            raise_interrupt=False,
        ):
            self._changed()

    def _interesting(self, path: str) -> bool:
        name = os.path.basename(path)
        return name.endswith(self.suffix) and not name.startswith(".")

    def _changed(self) -> None:
        try:
            self.callback()
        except Exception:  # a listener's failure never stops the watcher
            import logging

            # The logger's name from before the watcher had a module of its own.
            logging.getLogger("redline.workspace.queue.core").exception(
                "queue watch callback failed"
            )

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)

    def release(self) -> None:
        """End the watch now, without waiting for the thread: for a process about to exit.
        The kernel's teardown of the watch (10-20 ms, after the close returns) then
        overlaps what the process still does instead of delaying its exit."""
        self._stop.set()
        notify = self._notify
        if notify is not None:
            try:
                notify.close()
            except Exception:  # already closed: the thread's own exit got there first
                return
