"""QueueWatcher: a thread that reports changes to ``.redline/queue/`` by any process.

Beside the watch, a queue's watcher keeps a *doorbell*: a named pipe
``requests/.wake-PID`` that a process asking this one to resolve its action writes a byte
to right after its request (:func:`ring`). A thread blocked on the pipe hears it at once
and at no cost while nothing comes, where the watch hears a change one to two of its steps
later (10 ms each): the decision a hook waits for is served within a millisecond of its
request (docs/performance.md, issue 49). The watch still reports the request too; a
doorbell that cannot be made (or rung) only loses that head start.

A watcher may also say *which* files changed (``on_paths``): each report's paths, relative
to the watched folder (``actions/pa-3.json``), are handed over just before the callback,
so a listener that keeps a listing (the dashboard's stack, issue 44) reads again only the
records named instead of looking at every record file. ``None`` instead of the paths means
"not known": the watch could not tell (watchfiles without its ``RustNotify``, a watch that
ended on an error). The doorbell's wake names no file (the watch names its request a step
later). watchfiles drops the kernel's "events were lost" notice (an overflowing inotify
queue) without a word, so a report can miss a file: a listener must not take the names as
the whole truth about what exists (the stack also compares the folder's names).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from redline.hooktrace import mark


class QueueWatcher:
    """A watchfiles thread on ``.redline/queue/`` (or another state folder: files whose
    name ends in ``suffix`` count); stop() ends it."""

    #: How often the watch looks for changes, in ms: a change is heard one to two steps
    #: after it is made (an owner request sooner, through the doorbell).
    step_ms = 10

    def __init__(
        self,
        path: Path,
        callback: Callable[[], None],
        *,
        suffix: str = ".json",
        doorbell: Path | None = None,
        on_paths: Callable[[frozenset[str] | None], None] | None = None,
    ) -> None:
        self.path = path
        self.callback = callback
        #: Told each report's changed paths (relative to ``path``; None: not known) just
        #: before ``callback`` is called, in the same thread (see the module doc).
        self.on_paths = on_paths
        self.suffix = suffix
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._notify: Any = None  # the RustNotify being watched, for release()
        self._thread = threading.Thread(target=self._run, name="redline-queue-watch", daemon=True)
        #: The named pipe this process is woken through (see the module doc), or None.
        self.doorbell = doorbell
        self._bell_fd = -1

    def start(self) -> None:
        self._thread.start()
        if self.doorbell is not None:
            self._open_doorbell(self.doorbell)
        self._ready.wait(5.0)

    def _open_doorbell(self, path: Path) -> None:
        """Make this process's doorbell and the thread that waits on it (no doorbell when
        the folder refuses: the watch alone then hears requests)."""
        _sweep(path.parent)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            os.mkfifo(path, 0o600)
            # Read and write: the pipe always has a writer (this process), so a reader
            # never sees end-of-file when a ringer closes its end; stop() rings it too.
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return
        self._bell_fd = fd
        threading.Thread(
            target=self._listen, args=(fd,), name="redline-queue-doorbell", daemon=True
        ).start()

    def _listen(self, fd: int) -> None:
        while True:
            try:
                os.read(fd, 512)  # blocks until rung: costs nothing while nobody rings
            except OSError:  # closed by stop()
                return
            if self._stop.is_set():
                os.close(fd)
                return
            self._changed(frozenset())

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
        try:
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
                        told = self.on_paths is not None  # (a hook's watch skips the names)
                        self._changed(self._relative(p for _c, p in raw) if told else None)
        except BaseException:
            if not self._stop.is_set():
                self._changed(None)  # nothing is heard from now on: not known what changes
            raise

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
            self._changed(None)

    def _interesting(self, path: str) -> bool:
        name = os.path.basename(path)
        return name.endswith(self.suffix) and not name.startswith(".")

    def _relative(self, paths: Iterable[str]) -> frozenset[str] | None:
        """The reported paths relative to the watched folder ("" for the folder itself);
        None when one is not below it (then which files changed is not known)."""
        root = str(self.path)
        prefix = root + os.sep
        found: set[str] = set()
        for path in paths:
            if path.startswith(prefix):
                found.add(path[len(prefix) :].replace(os.sep, "/"))
            elif path == root:
                found.add("")
            else:
                return None
        return frozenset(found)

    def _changed(self, paths: frozenset[str] | None = None) -> None:
        mark("watch heard")
        try:
            if self.on_paths is not None:
                self.on_paths(paths)
            self.callback()
        except Exception:  # a listener's failure never stops the watcher
            import logging

            # The logger's name from before the watcher had a module of its own.
            logging.getLogger("redline.workspace.queue.core").exception(
                "queue watch callback failed"
            )

    def stop(self) -> None:
        self._stop.set()
        self._close_doorbell()
        self._thread.join(5.0)

    def _close_doorbell(self) -> None:
        fd, self._bell_fd = self._bell_fd, -1
        if fd < 0 or self.doorbell is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.doorbell)
        with contextlib.suppress(OSError):
            os.write(fd, b"\0")  # the listening thread wakes, sees the stop and ends

    def release(self) -> None:
        """End the watch now, without waiting for the thread: for a process about to exit.
        The kernel's teardown of the watch (10-20 ms, after the close returns) then
        overlaps what the process still does instead of delaying its exit; a process that
        handed its watches over (:func:`hand_teardown_over`) does not wait for it at all."""
        self._stop.set()
        self._close_doorbell()
        notify, self._notify = self._notify, None
        if notify is not None:
            try:
                notify.close()
            except Exception:  # already closed: the thread's own exit got there first
                return


DOORBELL_PREFIX = ".wake-"


def doorbell_name(pid: int) -> str:
    """The name of process ``pid``'s doorbell in its queue's ``requests/`` folder."""
    return f"{DOORBELL_PREFIX}{pid}"


def ring(folder_fd: int, pid: int) -> bool:
    """Wake process ``pid`` through its doorbell below ``folder_fd``; False when it has
    none (or it is not a pipe, or nobody listens): its watch hears the change instead."""
    try:
        fd = os.open(
            doorbell_name(pid),
            os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC,
            dir_fd=folder_fd,
        )
    except OSError:  # ENOENT: no doorbell; ENXIO: nobody listening
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        os.write(fd, b"!")
    except OSError as exc:  # EAGAIN: rung often enough already, it wakes
        return exc.errno == errno.EAGAIN
    finally:
        os.close(fd)
    return True


def _sweep(folder: Path) -> None:
    """Remove the doorbells of processes that have ended (one killed leaves its pipe)."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(DOORBELL_PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(DOORBELL_PREFIX) :]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                os.unlink(folder / name)
        except OSError:  # alive, someone else's
            continue


def _inotify_fds() -> list[int]:
    """This process's inotify instances (Linux: the descriptors ``/proc`` shows as such)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError, ValueError):
            if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify":
                found.append(int(name))
    return found


#: The program that keeps a process's watches (:func:`hand_teardown_over`): it reads its
#: input (a pipe only that process writes to) to its end, then ends.
KEEPER = ("/bin/cat", "/usr/bin/cat")


def hand_teardown_over() -> int | None:
    """Let another process keep this process's inotify instances until this one has ended:
    for a process whose exit someone waits for (a hook's agent). The keeper's pid.

    The kernel tears an inotify instance down when its last descriptor is closed, and that
    waits for a grace period (5-20 ms) in the closing process; a process is not reaped
    until its exit has closed every descriptor, so a hook holding a watch made its agent
    wait that long after the answer (docs/performance.md, issue 49). Here a ``cat`` is
    started with the instances as extra descriptors and, as its input, a pipe whose only
    writer is this process: when this process ends, ``cat`` reads the end of its input and
    ends, and the teardown delays its end, which nobody waits for. It gets nothing else:
    its output goes to ``/dev/null`` and every other descriptor of this process is
    close-on-exec (no lock, no queue folder, not the agent's pipes). It is started with
    ``posix_spawn`` (no copy of this process's memory). None (and nothing changes) when
    there is no watch to hand over, no ``/proc`` or no ``cat``, or the start fails."""
    if not sys.platform.startswith("linux") or not hasattr(os, "posix_spawn"):
        return None
    program = next((path for path in KEEPER if os.access(path, os.X_OK)), None)
    if program is None:
        return None
    try:
        keep = _inotify_fds()
    except OSError:
        return None
    if not keep:
        return None
    try:
        ended, alive = os.pipe()  # close-on-exec: only the dup below reaches the keeper
    except OSError:
        return None
    actions: list[tuple[Any, ...]] = [
        (os.POSIX_SPAWN_DUP2, ended, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    # The instances move to 3, 4, … in the keeper (a dup there clears close-on-exec), from
    # copies numbered 100 and up here, so that no move overwrites one not yet moved.
    moved: list[int] = []
    try:
        moved += [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in keep]
        actions += [(os.POSIX_SPAWN_DUP2, fd, 3 + n) for n, fd in enumerate(moved)]
        pid = os.posix_spawn(program, ["cat"], {}, file_actions=actions)
    except OSError:
        os.close(alive)
        return None
    finally:
        os.close(ended)
        for fd in moved:
            os.close(fd)
    mark("watch handed over")
    return pid  # ``alive`` stays open until this process ends: then the keeper ends too
