"""A spare: a fork of the server waiting for the next call, then that call's process.

The server keeps one spare forked ahead of time, so a call never waits for a fork. The
spare accepts on the server's socket; a status request or a refused message (answered
``R`` with the reason) leaves it waiting for the next connection; a call makes it that
call's process (:func:`_become`): it tells the server (which forks the next spare), lets
go of the socket, takes the client's streams, folder, umask and environment, and runs the
hook. The client's ``G`` (go) comes before anything is read or written: a client that gave
up waiting (it then answers the call itself) never has its call answered twice.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable

from redline.hookserver import client
from redline.hookserver.message import Message, Refused, check_peer, read
from redline.hooktrace import mark

TYPE_CHECKING = False
if TYPE_CHECKING:
    from redline.hookserver.prefault import Prefault

Runner = Callable[[str], int]
#: What a spare tells the server on its pipe: it took a call, it was asked to stop, or
#: the installed redline changed (the server ends: a new one loads the new modules).
TAKEN, STOP, STALE = b"T", b"S", b"C"
#: A call that has not answered after this long lets the server fork the next spare.
TELL_AFTER = 0.03
#: A spare with no call after this long copies the memory it shares with the server
#: (prefault.py): not at once, so that the copying does not compete for the processors
#: with what comes right after an answer (the agent's next step, the next calls of a burst).
COPY_AFTER = 0.25


class Spare:
    """What a spare needs from its server."""

    def __init__(
        self,
        run: Runner,
        ident: str,
        keyed: list[str],
        changed: Callable[[], bool],
        number: int,
        copier: Prefault | None = None,
    ) -> None:
        self.run = run
        self.copier = copier
        self.ident = ident
        self.keyed = keyed
        self.changed = changed
        self.number = number

    def wait(self, listener: socket.socket, notify: int) -> int:
        """Serve connections until one is a call; that call's exit status. Ends (0) when
        the server shuts the socket down, or stops or goes stale."""
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import select

        waiting = select.poll()
        waiting.register(listener, select.POLLIN)
        waiting.register(notify, 0)  # its read end closed (the server died): POLLERR
        copier = self.copier
        while True:
            # The installed redline changed since the server loaded it: it ends (the server
            # also looks every 5 seconds, so a spare waiting that long never serves a
            # change older than that; a call is never slowed by the look).
            if self.changed():
                os.write(notify, STALE)
                return 0
            if copier is not None and not waiting.poll(int(COPY_AFTER * 1000)):
                # Idle for a moment: its own copy of the memory a call writes, until one
                # comes (then straight to it: no second look at the modules first).
                copier.run(lambda: bool(waiting.poll(0)))
            copier = None
            if any(fd == notify for fd, _ in waiting.poll()):
                return 0  # the server is gone: a spare alone would wait for ever
            try:
                conn, _ = listener.accept()
            except OSError:  # the server shut the socket down: it is ending
                return 0
            mark("spare accepted")
            try:
                message = self._checked(conn)
            except Refused as exc:
                _send(conn, b"R" + str(exc).encode("utf-8", "replace") + b"\n")
                conn.close()
                continue
            except OSError:  # the client went away first: nothing was started
                conn.close()
                continue
            except Exception as exc:  # whatever a message did: a reason, not a crash
                _send(
                    conn, f"Ra message the server could not read: {type(exc).__name__}\n".encode()
                )
                conn.close()
                continue
            if message.kind == "status":
                _send(conn, f"S{os.getppid()} {self.number}\n".encode())
                conn.close()
                continue
            if message.kind == "stop":
                _send(conn, f"S{os.getppid()} {self.number}\n".encode())
                os.write(notify, STOP)
                return 0
            listener.close()
            return _become(conn, message, self.run, _Tell(notify))

    def _checked(self, conn: socket.socket) -> Message:
        check_peer(conn)
        message = read(conn)
        if message.ident != self.ident or message.keyed() != self.keyed:
            message.close()
            raise Refused("another interpreter, redline or environment")
        return message


def _send(conn: socket.socket, data: bytes) -> None:
    try:  # noqa: SIM105 - a client that left needs no answer
        conn.sendall(data)
    except OSError:
        pass


class _Tell:
    """Tells the server, once, that this spare took a call: when the call has answered or
    after :data:`TELL_AFTER` seconds, whichever comes first. The server then forks the next
    spare; not at once, so that the fork does not compete with the call for the machine's
    processors while its agent waits for the answer (a call that waits longer for a person
    gets its successor spare ready meanwhile)."""

    def __init__(self, notify: int) -> None:
        import _thread

        self.notify = notify
        self.lock = _thread.allocate_lock()

    def later(self) -> None:
        import _thread
        import time

        def wait() -> None:
            time.sleep(TELL_AFTER)
            self.now()

        _thread.start_new_thread(wait, ())

    def now(self) -> None:
        with self.lock:
            if self.notify < 0:
                return
            try:  # noqa: SIM105 - the server is gone: this call is served all the same
                os.write(self.notify, TAKEN)
            except OSError:
                pass
            os.close(self.notify)
            self.notify = -1


def _become(conn: socket.socket, message: Message, run: Runner, tell: _Tell) -> int:
    """Become the hook call's process; its exit status (sent to the client too)."""
    import _thread

    try:
        conn.sendall(b"A")
        for fd, target in zip(message.fds, (0, 1, 2), strict=False):
            os.dup2(fd, target)
        os.fchdir(message.fds[3])
        message.close()
        os.umask(message.umask)
        _environment(message.entries)
        sys.argv = ["redline", "hook", message.agent]
        _streams()
        go = conn.recv(1)
    except OSError:
        go = b""
    if go != b"G":  # the client gave up waiting (it answers the call itself), or went away
        tell.now()
        return 0
    answered: list[bool] = []
    try:
        _thread.start_new_thread(_watch_client, (conn, answered))
        tell.later()
        mark("child ready")
        code = run(message.agent)
    except BaseException:  # run_agent answers every problem itself; this is its last guard
        code = client.FAILED
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or client.FAILED
    code &= 0xFF
    answered.append(True)  # the client's end is no longer a kill (it exits on the status)
    _let_go()
    _send(conn, b"X" + bytes([code]))
    tell.now()
    return code


def _let_go() -> None:
    """Close the client's streams here (``/dev/null`` in their place), so that the agent
    reading the hook's output sees its end when the client exits, not when this process
    (a larger one, slower to tear down) has."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)


def _environment(entries: list[bytes]) -> None:
    """This process's environment made the client's (only the differences are applied:
    a server started by a hook call shares most of it)."""
    wanted: dict[bytes, bytes] = {}
    for entry in entries:
        name, _, value = entry.partition(b"=")
        wanted[name] = value
    environ = os.environb  # shares its data with os.environ
    for name in [name for name in environ if name not in wanted]:
        del environ[name]
    for name, value in wanted.items():
        if environ.get(name) != value:
            try:  # noqa: SIM105 - a name the platform refuses was in no environment
                environ[name] = value
            except (ValueError, OSError):
                pass


def _streams() -> None:
    """The child's ``sys.stdin/stdout/stderr`` on the client's streams (now 0, 1, 2):
    the server's own objects (same encoding: the keyed environment holds every variable
    that chooses it), line-buffered when the client's stdout is a terminal."""
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115
    if os.isatty(1):
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]


def _watch_client(conn: socket.socket, answered: list[bool]) -> None:
    """The client's end: ``I`` interrupts the call (SIGINT, as a hook's own Ctrl-C);
    the socket's end before the call answered (the client was killed) kills this process
    as the client was, so the call ends as a killed hook's does (its record left to a dead
    owner)."""
    while True:
        try:
            data = conn.recv(64)
        except OSError:
            data = b""
        if answered:
            return
        if not data:
            os.kill(os.getpid(), signal.SIGKILL)
            return
        for _ in range(data.count(b"I")):
            os.kill(os.getpid(), signal.SIGINT)
