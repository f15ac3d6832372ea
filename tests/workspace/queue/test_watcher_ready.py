"""QueueWatcher.start() returns only once the folder is watched: a change made right after
it is seen (a change in the gap went unseen until a 2-second re-check)."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from redline.workspace.queue.watcher import QueueWatcher, doorbell_name, ring


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


def test_a_doorbell_wakes_the_watcher_without_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ring() reaches the watcher's callback through its named pipe alone (the watch itself
    is replaced by one that never reports), and stop() takes the pipe away."""

    def no_watch(self: QueueWatcher) -> None:
        self._ready.set()
        self._stop.wait()

    monkeypatch.setattr(QueueWatcher, "_run", no_watch)
    heard = threading.Event()
    bell = tmp_path / doorbell_name(os.getpid())
    watcher = QueueWatcher(tmp_path, heard.set, doorbell=bell)
    watcher.start()
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert ring(fd, os.getpid())
        assert heard.wait(30), "the doorbell was not heard"  # hang guard
    finally:
        watcher.stop()
    try:
        assert not bell.exists()
        assert not ring(fd, os.getpid())  # no doorbell: nobody to wake, nothing raised
    finally:
        os.close(fd)


def test_ring_refuses_what_is_not_a_doorbell(tmp_path: Path) -> None:
    (tmp_path / doorbell_name(12345)).write_text("")  # a plain file is never written to
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert not ring(fd, 12345)
        assert not ring(fd, 12346)
    finally:
        os.close(fd)
    assert (tmp_path / doorbell_name(12345)).read_text() == ""


def test_a_dead_process_doorbell_is_swept(tmp_path: Path) -> None:
    """A killed process leaves its pipe; the next watcher's start removes it."""
    import subprocess

    dead = int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    os.mkfifo(tmp_path / doorbell_name(dead))
    watcher = QueueWatcher(tmp_path, lambda: None, doorbell=tmp_path / doorbell_name(os.getpid()))
    watcher.start()
    try:
        assert not (tmp_path / doorbell_name(dead)).exists()
        assert (tmp_path / doorbell_name(os.getpid())).exists()
    finally:
        watcher.stop()


def test_an_owner_request_rings_the_owner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """request_owner() wakes the owner process through its queue watcher's doorbell: the
    owner (this process here) hears the request with its watch replaced by a silent one."""
    from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

    def no_watch(self: QueueWatcher) -> None:
        self._ready.set()
        self._stop.wait()

    monkeypatch.setattr(QueueWatcher, "_run", no_watch)
    queue = WorkspaceQueue(tmp_path)
    record = queue.push(ActionDraft("run", Source.current("hook", "claude", "s")))
    assert record.applied_by == "owner"
    heard = threading.Event()
    watcher = queue.watch(heard.set)
    try:
        queue.request_owner(record.id, "discard", "no")
        assert heard.wait(30), "the owner was not woken"  # hang guard
        assert [r.id for r, _ in queue.owner_requests()] == [record.id]
    finally:
        watcher.stop()
        queue.close()


_KEEPER_SCRIPT = """
import json, os, sys, time
from pathlib import Path
from redline.workspace.queue.watcher import QueueWatcher, hand_teardown_over

watcher = QueueWatcher(Path(sys.argv[1]), lambda: None)
watcher.start()
pid = hand_teardown_over()
# The keeper's descriptors once its start is over (the close-on-exec ones go at its exec).
deadline = time.monotonic() + 30
while True:
    try:
        fds = {n: os.readlink(f"/proc/{pid}/fd/{n}") for n in os.listdir(f"/proc/{pid}/fd")}
    except FileNotFoundError:  # one closed while it was read: read again
        fds = {}
    if (fds and len(fds) <= 4) or time.monotonic() > deadline:
        break
    time.sleep(0.001)  # awaiting a condition (the keeper's exec), with a hang guard
watcher.release()
print(json.dumps({"pid": pid, "fds": fds}), flush=True)
os._exit(0)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_watch_handed_over_is_kept_by_a_process_that_holds_nothing_else(
    tmp_path: Path,
) -> None:
    """hand_teardown_over(): a keeper process holds the watch (so the kernel's teardown
    delays its end, not the exiting process's) and nothing else of the process — not its
    output pipes, no lock, no queue folder — and it ends once the process has ended."""
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", _KEEPER_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    told = json.loads(done.stdout)
    fds = told["fds"]
    assert fds["0"].startswith("pipe:")  # its input: only the exiting process writes it
    assert fds["1"] == fds["2"] == os.devnull
    assert sorted(fds) == ["0", "1", "2", "3"]
    assert fds["3"] == "anon_inode:inotify"
    keeper = told["pid"]
    deadline = time.monotonic() + 30
    while _alive(keeper) and time.monotonic() < deadline:
        time.sleep(0.001)  # awaiting the keeper's end, with a hang guard
    assert not _alive(keeper), "the keeper outlived the process whose watch it kept"


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (an ended process not yet reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_nothing_is_handed_over_without_a_watch_or_a_keeper(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No inotify instance, or no program to keep it: nothing is started (the teardown
    stays with the process, as before)."""
    from redline.workspace.queue import watcher

    monkeypatch.setattr(watcher, "_inotify_fds", lambda: [])
    assert watcher.hand_teardown_over() is None
    monkeypatch.setattr(watcher, "_inotify_fds", lambda: [0])
    monkeypatch.setattr(watcher, "KEEPER", ("/nonexistent/cat",))
    assert watcher.hand_teardown_over() is None
