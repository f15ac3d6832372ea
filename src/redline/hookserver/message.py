"""A client's message as the server's spare reads it: checked before anything is done.

Everything here is untrusted (any process of the same user may connect): the peer's user
and group, the size, the number of descriptors, the fields and the environment's entries
are checked, and anything else is :class:`Refused` with a one-line reason the client gets
back (``R``). Descriptors received with a refused message are closed.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import sys

from redline.hookserver import client

#: How long a client may take to send its message once connected.
READ_SECONDS = 2.0
KINDS = ("call", "status", "stop")


class Refused(Exception):
    """A message the server does not serve; the text is the reason sent back."""


class Message:
    """A checked message: its kind, agent, umask, identity, environment entries (bytes
    ``NAME=VALUE``) and descriptors (a call's stdin, stdout, stderr and folder)."""

    __slots__ = ("agent", "entries", "fds", "ident", "kind", "umask")

    def __init__(self, kind: str, agent: str, umask: int, ident: str, entries: list[bytes]) -> None:
        self.kind = kind
        self.agent = agent
        self.umask = umask
        self.ident = ident
        self.entries = entries
        self.fds: list[int] = []

    def keyed(self) -> list[str]:
        """The entries a server must share with its client (:func:`client.keyed_env`)."""
        decoded = {}
        for entry in self.entries:
            name, _, value = entry.partition(b"=")
            decoded[os.fsdecode(name)] = os.fsdecode(value)
        return client.keyed_env(decoded)

    def close(self) -> None:
        for fd in self.fds:
            try:  # noqa: SIM105 - the loop goes on whatever one close says
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def check_peer(conn: socket.socket) -> None:
    """Refuse a peer of another user or group (``SO_PEERCRED``)."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, gid = struct.unpack("3i", raw)
    if uid != os.getuid() or gid != os.getgid():
        raise Refused(f"user {uid} (group {gid}) is not this server's user")


def read(conn: socket.socket) -> Message:
    """The message on ``conn``, checked (its descriptors are the caller's to close)."""
    conn.settimeout(READ_SECONDS)
    fds: list[int] = []
    room = socket.CMSG_SPACE((client.CALL_FDS + 1) * 4)
    try:
        try:
            data, ancillary, flags, _ = conn.recvmsg(65536, room)
        except TimeoutError:
            raise Refused("no message in time") from None
        for level, what, payload in ancillary:
            if level == socket.SOL_SOCKET and what == socket.SCM_RIGHTS:
                usable = len(payload) - len(payload) % 4
                fds += [
                    int.from_bytes(payload[n : n + 4], sys.byteorder) for n in range(0, usable, 4)
                ]
        if flags & socket.MSG_CTRUNC:
            raise Refused("too many descriptors")
        head = len(client.MAGIC) + 4
        while 0 < len(data) < head and data.startswith(client.MAGIC[: len(data)]):
            data += _more(conn, head - len(data))
        if not data.startswith(client.MAGIC) or len(data) < head:
            raise Refused("not a redline hook message")
        size = int.from_bytes(data[len(client.MAGIC) : head], "big")
        if size > client.MAX_MESSAGE:
            raise Refused(f"a message of {size} bytes: more than {client.MAX_MESSAGE}")
        body = data[head:]
        while len(body) < size:
            body += _more(conn, size - len(body))
        if len(body) > size:
            raise Refused("more than the message announced")
        message = _fields(body)
        wanted = client.CALL_FDS if message.kind == "call" else 0
        if len(fds) != wanted:
            raise Refused(
                f"{len(fds)} descriptors for a {message.kind!r} message (expected {wanted})"
            )
        if message.kind == "call":
            _check_fds(fds)
        conn.settimeout(None)
    except BaseException:
        for fd in fds:
            try:  # noqa: SIM105 - every one is closed
                os.close(fd)
            except OSError:
                pass
        raise
    message.fds = fds
    return message


def _more(conn: socket.socket, wanted: int) -> bytes:
    try:
        chunk = conn.recv(min(wanted, 65536))
    except TimeoutError:
        raise Refused("the message was cut short") from None
    if not chunk:
        raise Refused("the message was cut short")
    return chunk


def _fields(body: bytes) -> Message:
    parts = body.split(b"\0")
    if len(parts) < 4:
        raise Refused("a message without its fields")
    try:
        kind, agent, mask, ident = (part.decode("utf-8") for part in parts[:4])
    except UnicodeDecodeError:
        raise Refused("a field is not UTF-8 text") from None
    if kind not in KINDS:
        raise Refused(f"unknown kind of message {kind[:40]!r}")
    if not agent.isprintable() or not 0 < len(agent) <= 64:
        raise Refused("the agent's name is not a short printable name")
    try:
        umask = int(mask, 8)
    except ValueError:
        raise Refused("the umask is not an octal number") from None
    if not 0 <= umask <= 0o777:
        raise Refused("the umask is out of range")
    entries = parts[4:]
    if any(not entry or entry.startswith(b"=") or b"=" not in entry for entry in entries):
        raise Refused("an environment entry is not NAME=VALUE")
    return Message(kind, agent, umask, ident, entries)


def _check_fds(fds: list[int]) -> None:
    try:
        infos = [os.fstat(fd) for fd in fds]
    except OSError:
        raise Refused("a descriptor sent is not usable") from None
    if not stat.S_ISDIR(infos[3].st_mode):
        raise Refused("the working folder sent is not a folder")
