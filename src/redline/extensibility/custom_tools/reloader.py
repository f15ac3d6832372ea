"""Hot reload: notice an edited plugin file and hand it to the session to swap its tools."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from redline.extensibility.custom_tools.loader import is_plugin_file

log = logging.getLogger(__name__)


class PluginReloader:
    """Watch plugin files and folders; call ``reload(path)`` for each changed plugin file.

    ``paths`` may name folders (their top-level ``*.py`` plugins are watched) or single
    files. Folders are watched rather than files because editors often save by replacing
    the file, which a watch on the old file would miss. :meth:`dispatch` is the whole
    decision logic and can be driven directly; ``ready`` is set once the watcher is live,
    so a test can wait for it instead of sleeping.
    """

    def __init__(
        self,
        paths: Sequence[Path],
        reload: Callable[[Path], None],
        *,
        debounce_ms: int = 100,
        force_polling: bool | None = None,
    ) -> None:
        self._reload = reload
        self._debounce_ms = debounce_ms
        self._force_polling = force_polling
        self._folders: set[Path] = set()
        self._files: set[Path] = set()
        for raw in paths:
            path = Path(raw).resolve()
            if path.is_dir():
                self._folders.add(path)
            elif path.suffix == ".py":
                self._files.add(path)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()

    @property
    def watched_dirs(self) -> list[Path]:
        dirs = set(self._folders) | {path.parent for path in self._files}
        return sorted(path for path in dirs if path.is_dir())

    def wants(self, path: Path) -> bool:
        """Whether a change to ``path`` should reload a plugin."""
        path = Path(path).resolve()
        if path in self._files:
            return True
        return path.parent in self._folders and is_plugin_file(path)

    def dispatch(self, changed: Iterable[str | Path]) -> list[Path]:
        """Reload each wanted path once (sorted); returns the paths handed to ``reload``."""
        wanted = sorted({Path(raw).resolve() for raw in changed if self.wants(Path(raw))})
        for path in wanted:
            try:
                self._reload(path)
            except Exception:
                # The session reports plugin problems itself; a bug in its callback must
                # not kill the watcher thread.
                log.exception("reloading plugin %s failed", path)
        return wanted

    def start(self) -> None:
        if self._thread is not None:
            return
        dirs = self.watched_dirs
        if not dirs:
            self.ready.set()
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._watch, args=(dirs,), name="redline-plugin-reloader", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)

    def __enter__(self) -> PluginReloader:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _watch(self, dirs: list[Path]) -> None:
        import watchfiles

        options: dict[str, Any] = {
            "debounce": self._debounce_ms,
            "step": 20,
            "stop_event": self._stop,
            # Wake up now and then with an empty batch: the first one proves the watch
            # is registered, which is what ``ready`` promises.
            "rust_timeout": 200,
            "yield_on_timeout": True,
            "recursive": False,
            "raise_interrupt": False,
        }
        if self._force_polling is not None:
            options["force_polling"] = self._force_polling
        try:
            for batch in watchfiles.watch(*dirs, **options):
                self.ready.set()
                if batch:
                    self.dispatch(path for _change, path in batch)
        except Exception:
            log.exception("the plugin watcher stopped")
        finally:
            self.ready.set()
