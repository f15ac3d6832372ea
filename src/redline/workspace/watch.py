"""Watch the workspace for outside edits (feeds the live staleness check).

watchfiles runs in a daemon thread; ``stop_event`` lets :meth:`WorkspaceWatcher.stop`
end it within one watchfiles step instead of waiting for its Rust timeout.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from redline.workspace import paths
from redline.workspace.fsutil import TEMP_SUFFIX

_STEP_MS = 50
# A new folder with more files than this is reported only partly (e.g. an unpacked tree).
_MAX_LISTED = 2000


def _git_ignored(root: Path, rels: list[str]) -> set[str] | None:
    """Which of ``rels`` git ignores, or None when ``root`` is not in a git work tree."""
    if not rels:
        return set()
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "check-ignore", "-z", "--stdin"],
            input="\0".join(rels).encode("utf-8", "surrogateescape") + b"\0",
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    # 0: some ignored, 1: none ignored, 128: not a repository (or another git failure).
    if proc.returncode not in (0, 1):
        return None
    return {item for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if item}


class WorkspaceWatcher:
    """Call ``on_change(relative_posix_paths)`` when files in the workspace change."""

    def __init__(
        self,
        root: Path,
        on_change: Callable[[set[str]], None],
        *,
        debounce_ms: int = 100,
    ) -> None:
        self.root = Path(root).resolve()
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.error: str | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _keep(self, _change: Any, path: str) -> bool:
        """Cheap per-event filter: protected and tool folders and our own temp files."""
        try:
            rel = Path(path).relative_to(self.root)
        except ValueError:
            return False
        if rel.name.endswith(TEMP_SUFFIX) or not rel.parts:
            return False
        return not any(paths.is_ignored_dir_name(part) for part in rel.parts[:-1]) and not (
            paths.is_ignored_dir_name(rel.parts[-1])
        )

    def _relevant(self, raw: Iterable[str]) -> set[str]:
        rels = set()
        for path in raw:
            try:
                rels.add(Path(path).relative_to(self.root).as_posix())
            except ValueError:
                continue
        rels = {rel for rel in rels if not self._in_venv(rel)}
        rels |= self._files_in_new_dirs(rels)
        ignored = _git_ignored(self.root, sorted(rels))
        if ignored is None:
            patterns = paths.gitignore_patterns(self.root)
            ignored = {
                rel
                for rel in rels
                if paths.matches_gitignore(rel, (self.root / rel).is_dir(), patterns)
            }
        return rels - ignored

    def _files_in_new_dirs(self, rels: set[str]) -> set[str]:
        """Files inside reported folders.

        inotify watches a new folder only once it has seen it, so files written right
        after ``mkdir`` can go unreported; listing the folder catches them.
        """
        found: set[str] = set()
        for rel in rels:
            folder = self.root / rel
            if not folder.is_dir() or folder.is_symlink():
                continue
            for dirpath, dirnames, filenames in os.walk(folder):
                dirnames[:] = [
                    d
                    for d in dirnames
                    if not paths.is_ignored_dir_name(d)
                    and not (Path(dirpath) / d / "pyvenv.cfg").is_file()
                ]
                base = Path(dirpath).relative_to(self.root).as_posix()
                found.update(
                    f"{base}/{name}" for name in filenames if not name.endswith(TEMP_SUFFIX)
                )
                if len(found) > _MAX_LISTED:
                    return found
        return found

    def _in_venv(self, rel: str) -> bool:
        parts = rel.split("/")[:-1]
        return any(
            (self.root.joinpath(*parts[: i + 1]) / "pyvenv.cfg").is_file()
            for i in range(len(parts))
        )

    def _run(self) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                self.root,
                watch_filter=self._keep,
                debounce=self.debounce_ms,
                step=_STEP_MS,
                stop_event=self._stop,
                rust_timeout=0,
                yield_on_timeout=False,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                if self._stop.is_set():
                    break
                rels = self._relevant(path for _, path in changes)
                if rels:
                    # A listener bug must not end watching for everyone else.
                    with contextlib.suppress(Exception):
                        self.on_change(rels)
        except Exception as exc:
            self.error = f"watching {self.root} stopped: {exc}"

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="redline-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        self._thread = None

    def __enter__(self) -> WorkspaceWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
