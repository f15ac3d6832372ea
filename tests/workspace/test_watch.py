"""WorkspaceWatcher: relative paths of changed files, skipping ignored places; quick stop."""

from __future__ import annotations

import queue
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from redline.workspace.preview import Preview
from redline.workspace.safe_apply import apply_preview
from redline.workspace.watch import WorkspaceWatcher

from .helpers import modify, write

TIMEOUT = 10.0


def _collect(root: Path) -> tuple[WorkspaceWatcher, queue.Queue[set[str]]]:
    changes: queue.Queue[set[str]] = queue.Queue()
    watcher = WorkspaceWatcher(root, changes.put, debounce_ms=50)
    return watcher, changes


def _wait_for(changes: queue.Queue[set[str]], wanted: str) -> set[str]:
    """Everything reported until ``wanted`` shows up (fails after TIMEOUT seconds)."""
    seen: set[str] = set()
    deadline = time.monotonic() + TIMEOUT
    while wanted not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"{wanted} was not reported; saw {sorted(seen)}"
        try:
            seen |= changes.get(timeout=remaining)
        except queue.Empty:
            continue
    return seen


def _started(watcher: WorkspaceWatcher, root: Path, changes: queue.Queue[set[str]]) -> None:
    """Start and wait until events flow (the OS watch is set up asynchronously)."""
    watcher.start()
    probe = root / "probe.txt"
    deadline = time.monotonic() + TIMEOUT
    n = 0
    while True:
        n += 1
        probe.write_text(str(n))
        try:
            if "probe.txt" in changes.get(timeout=0.2):
                break
        except queue.Empty:
            pass
        if time.monotonic() > deadline:  # a hang guard, not a speed check
            raise AssertionError("the watcher never reported anything")
    while not changes.empty():
        changes.get_nowait()


def test_reports_relative_posix_paths_and_skips_ignored_places(ws: Path) -> None:
    write(ws, "pyvenv-home/env/pyvenv.cfg", "home = /usr\n")
    watcher, changes = _collect(ws)
    try:
        _started(watcher, ws, changes)
        write(ws, ".git/index", "x")
        write(ws, ".redline/journal/x", "x")
        write(ws, ".venv/lib/a.py", "x")
        write(ws, "src/__pycache__/a.pyc", "x")
        write(ws, "pyvenv-home/env/lib/site.py", "x")
        write(ws, "src/pkg/mod.py", "x = 1\n")
        seen = _wait_for(changes, "src/pkg/mod.py")
    finally:
        watcher.stop()
    assert seen <= {"src/pkg/mod.py", "src/pkg", "src", "pyvenv-home/env/lib"}


def test_apply_changes_are_reported_without_temp_files(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    watcher, changes = _collect(ws)
    try:
        _started(watcher, ws, changes)
        apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]))
        seen = _wait_for(changes, "a.txt")
    finally:
        watcher.stop()
    assert not any(name.endswith(".redline-tmp") for name in seen)
    assert not any(name.startswith(".redline") for name in seen)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_ignored_files_are_skipped(ws: Path) -> None:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    write(ws, ".gitignore", "build/\n*.log\n")
    watcher, changes = _collect(ws)
    try:
        _started(watcher, ws, changes)
        write(ws, "build/out.js", "x")
        write(ws, "debug.log", "x")
        write(ws, "main.py", "x")
        seen = _wait_for(changes, "main.py")
    finally:
        watcher.stop()
    assert "debug.log" not in seen and "build/out.js" not in seen


def test_gitignore_outside_git_is_honoured(ws: Path) -> None:
    write(ws, ".gitignore", "*.log\n")
    watcher, changes = _collect(ws)
    try:
        _started(watcher, ws, changes)
        write(ws, "debug.log", "x")
        write(ws, "main.py", "x")
        seen = _wait_for(changes, "main.py")
    finally:
        watcher.stop()
    assert "debug.log" not in seen


def test_stop_is_prompt_and_idempotent(ws: Path) -> None:
    watcher, changes = _collect(ws)
    _started(watcher, ws, changes)
    assert watcher.running
    thread = watcher._thread
    assert thread is not None
    # The stop event ends the thread within one watchfiles step; 30 s is only a hang guard.
    watcher.stop(timeout=30)
    assert not thread.is_alive()
    assert not watcher.running
    watcher.stop()


def test_a_failing_listener_does_not_stop_watching(ws: Path) -> None:
    calls: queue.Queue[set[str]] = queue.Queue()

    def listener(paths: set[str]) -> None:
        calls.put(paths)
        raise RuntimeError("listener bug")

    watcher = WorkspaceWatcher(ws, listener, debounce_ms=50)
    try:
        _started(watcher, ws, calls)
        write(ws, "one.txt", "1")
        _wait_for(calls, "one.txt")
        write(ws, "two.txt", "2")
        _wait_for(calls, "two.txt")
    finally:
        watcher.stop()
