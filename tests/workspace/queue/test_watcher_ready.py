"""QueueWatcher.start() returns only once the folder is watched: a change made right after
it is seen (a change in the gap went unseen until a 2-second re-check)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from redline.workspace.queue.watcher import QueueWatcher


def _inotify_watches() -> int:
    """Watches this process holds (Linux: the ``inotify wd:`` lines of its descriptors)."""
    count = 0
    for name in os.listdir("/proc/self/fdinfo"):
        try:
            with open(f"/proc/self/fdinfo/{name}", encoding="ascii", errors="replace") as info:
                count += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue
    return count


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fdinfo")
def test_start_returns_once_the_folder_is_watched(tmp_path: Path) -> None:
    before = _inotify_watches()
    heard = threading.Event()
    watcher = QueueWatcher(tmp_path, heard.set)
    watcher.start()
    try:
        assert _inotify_watches() > before  # watched already, not "soon"
        (tmp_path / "pa-1.json").write_text("{}")
        assert heard.wait(30), "a change right after start() was missed"  # hang guard
    finally:
        watcher.stop()


def test_release_ends_the_watch_at_once_without_a_thread_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """release() (a hook process whose answer is decided) closes the watch from the caller's
    thread: the watch thread ends quietly, and nothing is heard after it."""
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    heard = threading.Event()
    watcher = QueueWatcher(tmp_path, heard.set)
    watcher.start()
    watcher.release()
    watcher._thread.join(30)  # hang guard
    assert not watcher._thread.is_alive()
    assert failures == []
    (tmp_path / "pa-1.json").write_text("{}")
    assert not heard.is_set()
    watcher.release()  # twice, and stop() after it, change nothing
    watcher.stop()
