"""The adversarial proposal: a test file that tries to get out of the check's sandbox.

Imported by pytest (the docs' pytest check), it writes into the real workspace and
outside it, starts a detached child, connects to a TCP port on 127.0.0.1 and to unix
sockets (a path and an abstract name), and then has one failing test, so the check still
has something to report. :class:`Trap` listens on those sockets and counts connections.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ESCAPE = """import os, socket, sys, time
TARGETS = {targets!r}
for path in TARGETS["writes"]:
    try:
        with open(path, "a") as handle:
            handle.write("escaped\\n")
    except OSError:
        pass
try:
    socket.create_connection(("127.0.0.1", TARGETS["port"]), timeout=3).close()
except OSError:
    pass
for address in TARGETS["unix"]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(3)
    try:
        sock.connect(address)
    except OSError:
        pass
    sock.close()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", TARGETS["token"]])
    os._exit(0)
os.wait()


def test_escape_reports():
    assert 1 == 2
"""


@dataclass
class Trap:
    """What the escape aims at, and what reached it."""

    root: Path
    outside: Path
    home: Path
    token: str = field(default_factory=lambda: f"redline-escape-{secrets.token_hex(6)}")
    port: int = 0
    unix_path: str = ""
    abstract: str = ""
    accepted: list[str] = field(default_factory=list)

    def source(self) -> str:
        targets = {
            "writes": [
                str(self.root / "pkg" / "calc.py"),
                str(self.root / "planted.txt"),
                str(self.outside / "escaped.txt"),
                str(self.home / "escaped.txt"),
            ],
            "port": self.port,
            "unix": [self.unix_path, self.abstract],
            "token": self.token,
        }
        return ESCAPE.format(targets=targets)

    def survivors(self) -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with (
                    contextlib.suppress(OSError),
                    open(f"/proc/{entry}/cmdline", "rb") as handle,
                ):
                    if self.token.encode() in handle.read():
                        found.append(int(entry))
        return found

    def kill_survivors(self) -> None:
        for pid in self.survivors():
            with contextlib.suppress(OSError):
                os.kill(pid, 9)


@contextlib.contextmanager
def trap(root: Path, outside: Path, home: Path) -> Iterator[Trap]:
    """Listeners on 127.0.0.1, a unix socket path outside the workspace and an abstract
    name, counting every connection; survivors are killed afterwards whatever happened."""
    found = Trap(root, outside, home)
    stop = threading.Event()
    tcp = socket.create_server(("127.0.0.1", 0))
    found.port = tcp.getsockname()[1]
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    found.unix_path = str(outside / "agent.sock")
    unix.bind(found.unix_path)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    found.abstract = "\0" + found.token
    abstract.bind(found.abstract)
    servers = {"tcp": tcp, "unix": unix, "abstract": abstract}
    for server in servers.values():
        server.listen()
        server.settimeout(0.1)

    def serve(name: str, server: socket.socket) -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            found.accepted.append(name)
            conn.close()

    threads = [threading.Thread(target=serve, args=item, daemon=True) for item in servers.items()]
    for thread in threads:
        thread.start()
    try:
        yield found
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for server in servers.values():
            server.close()
        found.kill_survivors()


def python_read_binds() -> str:
    """``[check_runner] read`` for the interpreter the tests' checks run (its venv and base
    installation may live outside ``$HOME`` and the workspace)."""
    paths = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)})
    return "[" + ", ".join(f'"{p}"' for p in paths) + "]"
