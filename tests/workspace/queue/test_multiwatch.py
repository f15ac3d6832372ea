"""MultiQueueWatcher: many queues, one thread; changes reported by key; folders that
come and go."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from redline.workspace.queue import multiwatch
from redline.workspace.queue.multiwatch import MultiQueueWatcher


class Heard:
    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.cond = threading.Condition()

    def __call__(self, keys: frozenset[str]) -> None:
        with self.cond:
            self.keys |= keys
            self.cond.notify_all()

    def wait_for(self, key: str, timeout: float = 20.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: key in self.keys, timeout)

    def clear(self) -> None:
        with self.cond:
            self.keys.clear()


def _os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _queues(base: Path, count: int) -> dict[str, Path]:
    found = {}
    for number in range(count):
        folder = base / f"ws{number}" / ".redline" / "queue" / "actions"
        folder.mkdir(parents=True)
        found[f"w{number}"] = folder.parent
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_fifty_queues_cost_one_thread(tmp_path: Path) -> None:
    paths = _queues(tmp_path, 50)
    heard = Heard()
    # One queue first (kept running): the notifier's own native thread is counted alike.
    one = MultiQueueWatcher(heard)
    py_before, os_before = threading.active_count(), _os_threads()
    one.start({"w0": paths["w0"]})
    one_py, one_os = threading.active_count() - py_before, _os_threads() - os_before
    watcher = MultiQueueWatcher(heard)
    py_before, os_before = threading.active_count(), _os_threads()
    watcher.start(paths)
    try:
        assert threading.active_count() - py_before == 1 == one_py
        assert _os_threads() - os_before == one_os  # 50 folders: no more native threads
        assert watcher.watched == frozenset(paths)
        (paths["w37"] / "actions" / "pa-1.json").write_text("{}")
        assert heard.wait_for("w37")
        (paths["w3"] / "resolved.json").write_text("{}")
        assert heard.wait_for("w3")
        assert "w0" not in heard.keys
    finally:
        watcher.stop()
        one.stop()
    assert not watcher.alive


def test_hidden_and_other_files_do_not_count(tmp_path: Path) -> None:
    paths = _queues(tmp_path, 2)
    heard = Heard()
    watcher = MultiQueueWatcher(heard)
    watcher.start(paths)
    try:
        (paths["w0"] / "actions" / ".pa-1.json.tmp").write_text("x")
        (paths["w0"] / "next-id").write_text("1")
        (paths["w1"] / "actions" / "pa-1.json").write_text("{}")
        assert heard.wait_for("w1")
        assert "w0" not in heard.keys
    finally:
        watcher.stop()


def test_set_paths_adds_and_drops_folders(tmp_path: Path) -> None:
    paths = _queues(tmp_path, 3)
    heard = Heard()
    watcher = MultiQueueWatcher(heard)
    watcher.start({"w0": paths["w0"]})
    try:
        watcher.set_paths({"w1": paths["w1"], "w2": paths["w2"]})
        assert watcher.watched == {"w1", "w2"}
        (paths["w0"] / "actions" / "pa-1.json").write_text("{}")
        (paths["w2"] / "actions" / "pa-1.json").write_text("{}")
        assert heard.wait_for("w2")
        assert "w0" not in heard.keys
        assert "w1" not in heard.keys  # added by the caller: not reported
    finally:
        watcher.stop()


def test_a_deleted_folder_is_reported_and_one_that_returns_is_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(multiwatch, "RECHECK_SECONDS", 0.05)
    paths = _queues(tmp_path, 2)
    missing = tmp_path / "nowhere" / ".redline" / "queue"
    heard = Heard()
    watcher = MultiQueueWatcher(heard)
    watcher.start({**paths, "gone": missing})
    try:
        assert watcher.watched == {"w0", "w1"}
        shutil.rmtree(tmp_path / "ws1")
        assert heard.wait_for("w1")
        (missing / "actions").mkdir(parents=True)  # the unmounted disk is back
        assert heard.wait_for("gone")
        heard.clear()
        (missing / "actions" / "pa-2.json").write_text("{}")
        assert heard.wait_for("gone")
        (paths["w0"] / "actions" / "pa-9.json").write_text("{}")
        assert heard.wait_for("w0")  # the others are still watched
    finally:
        watcher.stop()


def test_a_failing_callback_does_not_stop_the_watcher(tmp_path: Path) -> None:
    paths = _queues(tmp_path, 1)
    calls: list[frozenset[str]] = []
    done = threading.Event()

    def callback(keys: frozenset[str]) -> None:
        calls.append(keys)
        if len(calls) == 1:
            raise RuntimeError("boom")
        done.set()

    watcher = MultiQueueWatcher(callback)
    watcher.start(paths)
    try:
        (paths["w0"] / "actions" / "pa-1.json").write_text("{}")
        # Keep writing until the second call: the first may have taken several changes.
        for number in range(2, 200):
            if done.wait(0.1):
                break
            (paths["w0"] / "actions" / f"pa-{number}.json").write_text("{}")
        assert done.is_set()
    finally:
        watcher.stop()
