"""``redline hook-server``: a warm process keeping a spare fork ready for each hook call.

The server loads the hook's modules, binds the socket :mod:`.client` names for its
identity and keyed environment (in this user's private folder), and forks a *spare*
(:mod:`.spare`) that accepts the next connection; when the spare takes a call it says so
on its pipe and the server forks the next one. The server itself stays single-threaded and
runs nothing but this loop, so every fork copies a quiet process.

It ends after ``idle`` seconds without a call, on ``stop`` or SIGTERM, when its socket is
no longer the one it bound (removed or replaced), and when a module it loaded changed on
disk (the installed redline changed; looked at every 5 seconds and before a spare waits:
the next calls answer in their own process and start a fresh server). Ending, it removes
its socket and shuts it down, which ends the waiting spare; calls already taken run on.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Sequence

from redline.hookserver import client
from redline.hookserver.message import READ_SECONDS
from redline.hookserver.spare import STALE, STOP, TAKEN, Runner, Spare

TYPE_CHECKING = False
if TYPE_CHECKING:
    from redline.hookserver.prefault import Prefault

#: A server with no call for this long ends (the next hook call starts another).
IDLE_SECONDS = 600.0
#: Spares dying before taking a call this many times in a row: the server gives up.
MAX_FAILURES = 5


def serve(run: Runner, preload: Sequence[str], *, idle: float = IDLE_SECONDS) -> int:
    """Serve hook calls until idle, stopped or stale; the exit status (1: could not)."""
    import fcntl

    if not client.enabled():
        return _cannot(f"off ({client.SWITCH_ENV}, or not Linux)")
    if not all(os.path.isabs(entry) for entry in sys.path):
        # A relative entry ("" for -c code) imports from the folder of the moment: the
        # server's folder is not its callers'.
        return _cannot("its import path has a relative entry (started with -c?)")
    ident = client.identity()
    keyed = client.keyed_env(os.environ)
    folder = client.socket_dir()
    if folder is None:
        return _cannot("no folder for its socket (no XDG_RUNTIME_DIR, no home folder)")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        return _cannot(f"cannot make {folder}: {exc.strerror or exc}")
    path = client.socket_path(ident, keyed)
    if path is None:
        return _cannot(
            f"{folder} is not a private folder of this user, or its path is too long for a socket"
        )
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        lock = os.open(path + ".lock", flags, 0o600)
    except OSError as exc:
        return _cannot(f"cannot open {path}.lock: {exc.strerror or exc}")
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another server has this socket already
        _preload(preload)
        from redline.hookserver import prefault

        copier = prefault.load()  # ctypes: loaded here, never by a call
        os.chdir("/")  # hold no caller's folder (each call's child takes its own)
        _standard_streams()
        return _Server(run, ident, keyed, path, lock, idle, copier).loop()
    finally:
        os.close(lock)


def _standard_streams() -> None:
    """Descriptors 0, 1 and 2 open (``/dev/null`` for a closed one): a call's received
    descriptors then never take those numbers, which its child puts the client's on."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _cannot(why: str) -> int:
    print(f"redline hook-server: {why}", file=sys.stderr)
    return 1


def _preload(names: Sequence[str]) -> None:
    import importlib

    for name in names:
        with contextlib.suppress(ImportError):  # optional: the child imports what it needs
            importlib.import_module(name)


def _fingerprint() -> dict[str, tuple[int, int]]:
    """The stamp (mtime, size) of every redline module loaded, by file."""
    stamps: dict[str, tuple[int, int]] = {}
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if not name.startswith("redline") or not isinstance(where, str):
            continue
        try:
            info = os.stat(where)
        except OSError:
            stamps[where] = (-1, -1)
        else:
            stamps[where] = (info.st_mtime_ns, info.st_size)
    return stamps


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


class _Server:
    def __init__(
        self,
        run: Runner,
        ident: str,
        keyed: list[str],
        path: str,
        lock: int,
        idle: float,
        copier: Prefault | None = None,
    ) -> None:
        self.run = run
        self.copier = copier
        self.ident = ident
        self.keyed = keyed
        self.path = path
        self.lock = lock
        self.idle = idle
        self.calls = 0
        self.stamps = _fingerprint()

    def changed(self) -> bool:
        """Whether a module this server loaded changed on disk since."""
        for where, stamp in self.stamps.items():
            try:
                info = os.stat(where)
            except OSError:
                return True
            if (info.st_mtime_ns, info.st_size) != stamp:
                return True
        return False

    def loop(self) -> int:
        import gc

        if _threads() != 1:  # something loaded started a thread: forking would be unsafe
            return _cannot("not single-threaded after loading the hook's modules")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        temporary = f"{self.path}.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        listener.bind(temporary)
        os.chmod(temporary, 0o600)
        listener.listen(64)
        os.rename(temporary, self.path)  # atomic: a client finds this socket or the last one
        bound = os.stat(self.path).st_ino

        def stop(signum: int, frame: object) -> None:
            raise SystemExit(0)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGCHLD, _reap)
        gc.freeze()  # what is loaded now stays shared with every child (no copy on write)
        last = time.monotonic()
        failures = 0
        spare: int | None = None
        try:
            while True:
                if spare is None:
                    spare = self._fork(listener)
                left = self.idle - (time.monotonic() - last)
                if left <= 0:
                    return 0
                ready, _, _ = select.select([spare], [], [], min(left, 5.0))
                if not self._ours(bound) or self.changed():
                    return 0
                if not ready:
                    continue
                said = os.read(spare, 16)
                os.close(spare)
                spare = None
                if TAKEN in said:
                    self.calls += 1
                    last = time.monotonic()
                    failures = 0
                elif STOP in said or STALE in said:
                    return 0
                else:  # the spare died before taking a call
                    failures += 1
                    if failures >= MAX_FAILURES:
                        return _cannot("its spare processes keep dying")
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            if self._ours(bound):
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # the waiting spare's accept ends
            listener.close()
            if spare is not None:
                os.close(spare)

    def _fork(self, listener: socket.socket) -> int:
        """Fork the next spare; the read end of its pipe."""
        hear, tell = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = client.FAILED
            try:
                os.close(hear)
                os.close(self.lock)  # a call outliving the server must not hold its lock
                spare = Spare(
                    self.run, self.ident, self.keyed, self.changed, self.calls, self.copier
                )
                code = spare.wait(listener, tell)
            finally:
                os._exit(code)
        os.close(tell)
        return hear

    def _ours(self, bound: int) -> bool:
        try:
            return os.lstat(self.path).st_ino == bound
        except OSError:
            return False


def _reap(signum: int, frame: object) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def ask(kind: str) -> str | None:
    """Send ``status`` or ``stop`` to this environment's server; its answer (its pid and
    the calls it served), or ``None`` when none answers."""
    ident = client.identity()
    path = client.socket_path(ident, client.keyed_env(os.environ))
    if path is None:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(READ_SECONDS * 2)
        try:
            conn.connect(path)
            conn.sendall(client.encode(kind, "-", 0o022, ident, client.environment()))
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = conn.recv(256)
                if not chunk:
                    break
                answer += chunk
        except OSError:
            return None
    if not answer.startswith(b"S"):
        return None
    pid, _, calls = answer[1:].decode("utf-8", "replace").strip().partition(" ")
    return f"pid {pid}, {calls} calls served"
