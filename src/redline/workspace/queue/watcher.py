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

    def __init__(self, path: Path, callback: Callable[[], None], *, suffix: str = ".json") -> None:
        self.path = path
        self.callback = callback
        self.suffix = suffix
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="redline-queue-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(5.0)

    def _run(self) -> None:
        import watchfiles

        def interesting(_change: Any, path: str) -> bool:
            name = os.path.basename(path)
            return name.endswith(self.suffix) and not name.startswith(".")

        self._ready.set()
        for _changes in watchfiles.watch(
            self.path,
            watch_filter=interesting,
            stop_event=self._stop,
            debounce=50,
            step=10,
            rust_timeout=200,
            yield_on_timeout=False,
            raise_interrupt=False,
        ):
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
