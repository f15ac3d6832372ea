"""A fork server for the tests: a Python with the ACP package already imported.

Started by ``tests/warm_python.py`` (never by a test directly) as
``python warm_server.py serve SOCKET MODULE...``: it imports each MODULE, then listens on
the Unix socket SOCKET. Each connection asks for one process: a JSON header (``argv``, ``module``,
``cwd``, ``env``, ``umask``) with the process's stdin, stdout and stderr passed as file
descriptors. The server forks; the child takes those descriptors, folder, umask and
environment and runs ``python -m MODULE`` from there (``runpy``, as the interpreter does),
so it ends as that process would, with its own exit status. The server answers the child's
pid at once and its raw wait status when it ends, then closes the connection.

Why: every ``redline exec --agent`` process imports the ``acp`` package, whose ~280
pydantic models cost about half a second of CPU in each process (a third of it reading
the models' docstrings). A test run starts some 70 of them. A forked child of this server
has that import done; it imports redline itself afresh, after its own environment is set,
so nothing of redline is shared between the children. Only third-party modules whose import
reads no environment are preloaded.

The server is single-threaded (it forks) and ends when its stdin closes, that is, when the
test process that started it ends. Standard library only.

``python warm_server.py launch SOCKET MODULE ARGS...`` is a stand-in for
``python -m MODULE ARGS...`` where another program starts the process (an MCP client
library starting a stdio server): it asks SOCKET's server for a child with its own stdin,
stdout, stderr, folder and environment, passes on the signals it gets, and ends with the
child's exit status.

A request whose ``PYTHON*`` environment differs from the server's gets a child that runs
``python -m MODULE`` anew (``execv``), since the interpreter reads those at its start.
"""

from __future__ import annotations

import array
import contextlib
import gc
import importlib
import json
import os
import selectors
import signal
import socket
import struct
import sys
from collections.abc import Mapping
from typing import Any

HEADER = struct.Struct("!I")


def receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One request: a length-prefixed JSON header, with three descriptors on the first part."""
    fds = array.array("i")
    data, ancdata, _flags, _addr = conn.recvmsg(65536, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    while len(data) < HEADER.size or len(data) < HEADER.size + HEADER.unpack_from(data)[0]:
        more = conn.recv(65536)
        if not more:
            raise ConnectionError("the request ended early")
        data += more
    (size,) = HEADER.unpack_from(data)
    return json.loads(data[HEADER.size : HEADER.size + size]), list(fds)


def become(request: dict[str, Any], fds: list[int]) -> None:
    """In the child: take the asker's descriptors, folder, umask and environment."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    # As the interpreter makes them at start: stderr always line-buffered, stdout when a tty.
    sys.stdin = sys.__stdin__ = open(0, encoding=None, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(  # noqa: SIM115
        1, "w", buffering=1 if os.isatty(1) else -1, closefd=False
    )
    sys.stderr = sys.__stderr__ = open(  # noqa: SIM115
        2, "w", buffering=1, closefd=False, errors="backslashreplace"
    )
    sys.argv = list(request["argv"])
    sys.path[0] = os.getcwd()  # what ``python -m`` puts first


def serve(path: str) -> dict[str, Any] | None:
    """Answer requests until stdin closes (None) or, in a child, return its request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _events in selector.select():
            if key.fileobj == 0:
                if not os.read(0, 4096):
                    return None
            elif key.fileobj == wake_read:
                os.read(wake_read, 4096)
                reap(children)
            else:
                conn, _ = listener.accept()
                try:
                    request, fds = receive(conn)
                except (OSError, ValueError, ConnectionError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    selector.close()
                    for other in (listener, conn, *children.values()):
                        other.close()
                    os.close(wake_read)
                    os.close(wake_write)
                    become(request, fds)
                    return request
                for fd in fds:
                    os.close(fd)
                conn.sendall(b"%d\n" % pid)
                children[pid] = conn
        reap(children)


def reap(children: dict[int, socket.socket]) -> None:
    """Tell each ended child's asker its raw wait status."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.sendall(b"%d\n" % status)
            conn.close()


def ask(path: str, request: dict[str, Any], fds: list[int]) -> tuple[socket.socket, int]:
    """Send one request with its three descriptors; the connection and the child's pid."""
    body = json.dumps(request).encode()
    control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        control.connect(path)
        control.sendmsg(
            [HEADER.pack(len(body)) + body],
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())],
        )
        pid = int(Lines(control).next(None))
    except BaseException:
        control.close()
        raise
    return control, pid


class Lines:
    """The server's answers on a connection: one number per line."""

    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.pending = b""

    def next(self, timeout: float | None) -> bytes:
        """The next line; TimeoutError or BlockingIOError (timeout 0) if none came in time."""
        self.control.settimeout(timeout)
        while b"\n" not in self.pending:
            chunk = self.control.recv(64)
            if not chunk:
                raise ConnectionError("the warm test interpreter went away")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line


def python_environment(env: Mapping[str, str]) -> dict[str, str]:
    """What of an environment the interpreter reads at its start."""
    return {key: value for key, value in env.items() if key.startswith("PYTHON")}


def request_for(
    module: str,
    args: list[str],
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    umask: int = -1,
) -> dict[str, Any]:
    """A request for ``python -m MODULE ARGS``; by default in this process's folder,
    environment and umask."""
    if umask < 0:
        umask = os.umask(0o022)
        os.umask(umask)
    return {
        "argv": ["-m", *args],
        "module": module,
        "cwd": cwd if cwd is not None else os.getcwd(),
        "env": dict(env if env is not None else os.environ),
        "umask": umask,
    }


def launch(path: str, module: str, args: list[str]) -> int:
    """Stand in for ``python -m MODULE ARGS``: the child's exit status, signals passed on."""
    control, pid = ask(path, request_for(module, args), [0, 1, 2])
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda signum, _frame: os.kill(pid, signum))
    lines = Lines(control)
    while True:
        try:
            status = int(lines.next(None))
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status)


def main() -> None:
    mode, path, *rest = sys.argv[1:]
    if mode == "launch":
        raise SystemExit(launch(path, rest[0], rest[1:]))
    for name in rest:
        importlib.import_module(name)
    # What is imported now stays: the collector never walks it again, so a child does not
    # write (copy) every page the server's objects are on when it collects.
    gc.freeze()
    started_with = python_environment(os.environ)
    request = serve(path)
    if request is None:
        return
    if python_environment(request["env"]) != started_with:
        os.execv(sys.executable, [sys.executable, "-m", request["module"], *request["argv"][1:]])
    import runpy

    runpy.run_module(request["module"], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
