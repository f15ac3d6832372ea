"""The hook server's client: a ``redline hook AGENT`` process handing its call over.

Imports nothing but ``os``, ``sys`` (loaded by every interpreter) and ``_socket``; it runs
in every hook call before anything else, so that a call answered by the server costs
little more than the interpreter's start. :func:`forward` answers ``None`` whenever no
server took the call — no server, a stale socket, a refusal, the server switched off — and
the caller then answers the call in its own process, exactly as without a server.

The wire (Unix stream socket, one call per connection):

* client → server: one message, ``MAGIC``, a 4-byte big-endian length, then the body:
  NUL-separated fields ``kind``, ``agent``, the umask (octal), the identity
  (:func:`identity`), then the environment's ``NAME=VALUE`` entries. A ``call`` carries
  its stdin, stdout, stderr and working folder (an ``O_PATH`` descriptor) as
  ``SCM_RIGHTS`` on the first bytes; ``status`` and ``stop`` carry none.
* server → client: ``A`` (a child has the call), answered ``G`` (go: from then on the
  call is the child's; until then neither touched the streams), later ``X`` and the exit
  status as one byte. ``R`` and a reason line: refused, nothing was done. After ``G`` the
  client may send ``I`` (it was interrupted: the child gets SIGINT, as the hook's own
  process would). No ``A`` within :data:`START_SECONDS`: the client answers the call.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket

#: ``REDLINE_HOOK_SERVER=off`` (or ``0``, ``no``, ``false``): never use nor start a server.
SWITCH_ENV = "REDLINE_HOOK_SERVER"
MAGIC = b"redline-hook/1\n"
#: The largest message accepted: an environment far larger than any real one.
MAX_MESSAGE = 1 << 20
#: The descriptors a call carries: stdin, stdout, stderr, working folder.
CALL_FDS = 4
#: A socket path must fit ``sockaddr_un`` (108 bytes with its NUL on Linux).
MAX_PATH = 100
#: Environment variables whose values preloaded modules (or the interpreter's own start)
#: may read once, at import: a server serves only clients agreeing on all of them.
KEY_PREFIXES = ("REDLINE_", "XDG_", "PYTHON", "LC_")
KEY_NAMES = frozenset({"HOME", "LANG", "TZ"})
OFF_VALUES = frozenset({"off", "0", "no", "false"})

FAILED = 2  # the agent's blocking exit: the hook fails closed
#: How long a client waits for the server to start its call before answering it itself.
START_SECONDS = 5.0


def enabled(environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    """Whether hook calls use (and start) a server: on Linux (``SO_PEERCRED``,
    ``O_PATH``, ``/proc``), unless ``REDLINE_HOOK_SERVER`` switches it off."""
    if not sys.platform.startswith("linux"):
        return False
    return environ.get(SWITCH_ENV, "").strip().lower() not in OFF_VALUES


def socket_dir() -> str | None:
    """The private folder of this user's hook servers (not created here), or ``None``
    when there is no usable one: ``$XDG_RUNTIME_DIR/redline``, else the state folder's
    ``run/``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        return os.path.join(runtime, "redline")
    try:
        from redline.paths import user_state_dir_text

        return os.path.join(user_state_dir_text(), "run")
    except OSError:
        return None


def private(folder: str) -> bool:
    """Whether ``folder`` is a real folder of this user that nobody else may enter."""
    import stat

    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def identity() -> str:
    """What a server must share with its client: the interpreter, its flags, where it
    imports from, and the redline installed (its folder, version and the stamp of its
    first module)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        stamp = os.stat(os.path.join(package, "__init__.py")).st_mtime_ns
    except OSError:
        stamp = 0
    return "\t".join(
        (
            sys.executable,
            sys.version,
            repr(tuple(sys.flags)),
            repr(sys.path),
            package,
            str(getattr(sys.modules.get("redline"), "__version__", "")),
            str(stamp),
            str(os.getuid()),
        )
    )


def keyed_env(environ: dict[str, str] | os._Environ[str]) -> list[str]:
    """The ``NAME=VALUE`` entries of ``environ`` a server must share with its client."""
    return sorted(
        f"{name}={value}"
        for name, value in environ.items()
        if name in KEY_NAMES or name.startswith(KEY_PREFIXES)
    )


def socket_name(ident: str, keyed: list[str]) -> str:
    """The socket's file name for this identity and keyed environment: a 64-bit FNV-1a
    hash (a name, not a check: the server compares both exactly on every call)."""
    value = 0xCBF29CE484222325
    for byte in "\0".join([ident, *keyed]).encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"hook-{value:016x}.sock"


def socket_path(ident: str, keyed: list[str]) -> str | None:
    """This call's server socket, or ``None`` (no private folder, or a path too long)."""
    folder = socket_dir()
    if folder is None or not private(folder):
        return None
    path = os.path.join(folder, socket_name(ident, keyed))
    return path if len(os.fsencode(path)) <= MAX_PATH else None


def encode(kind: str, agent: str, umask: int, ident: str, env: list[bytes]) -> bytes:
    head = f"{kind}\0{agent}\0{umask:o}\0{ident}".encode("utf-8", "surrogateescape")
    body = b"\0".join([head, *env])
    return MAGIC + len(body).to_bytes(4, "big") + body


def environment() -> list[bytes]:
    return [name + b"=" + value for name, value in os.environb.items()]


class Outcome:
    """What :func:`forward` learned: ``code``, the call's exit status, or ``None``: not
    taken, answer in this process (``spawn``: no server listens, one may be started);
    ``lost``: why the call was lost after the child started (the caller fails closed)."""

    __slots__ = ("code", "lost", "spawn")

    def __init__(self, code: int | None, spawn: bool = False, lost: str = "") -> None:
        self.code = code
        self.spawn = spawn
        self.lost = lost


def forward(agent: str) -> Outcome:
    """Hand this process's hook call of ``agent`` to the server, when one takes it."""
    if not enabled():
        return Outcome(None)
    ident = identity()
    path = socket_path(ident, keyed_env(os.environ))
    if path is None:  # no private folder yet: the first server makes it
        folder = socket_dir()
        return Outcome(None, spawn=folder is not None and not os.path.lexists(folder))
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    sock.settimeout(START_SECONDS)  # connected and started, or answered here
    try:
        try:
            sock.connect(path)
        except OSError:  # none there, or a stale socket: start one for the next calls
            return Outcome(None, spawn=True)
        if not _server_is_us(sock):  # never hand this call's streams to another user
            return Outcome(None)
        try:
            here = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return Outcome(None)
        try:
            mask = os.umask(0o022)
            os.umask(mask)
            message = encode("call", agent, mask, ident, environment())
            fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2, here))
            try:
                sent = sock.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
                if sent < len(message):
                    sock.sendall(message[sent:])
            except OSError:  # nothing started: the call is this process's
                return Outcome(None)
        finally:
            os.close(here)
        return _await(sock)
    finally:
        sock.close()


def _server_is_us(sock: _socket.socket) -> bool:
    """Whether the process listening is of this user (``SO_PEERCRED``: pid, uid, gid)."""
    import _socket

    try:
        raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except OSError:
        return False
    return int.from_bytes(raw[4:8], sys.byteorder) == os.getuid()


def _await(sock: _socket.socket) -> Outcome:
    """The call's exit status once the child sent it; none when the server refused it
    (nothing done); the cause when the child was lost after it started."""
    started = False
    data = b""
    while True:
        try:
            chunk = sock.recv(256)
        except KeyboardInterrupt:  # the child's to answer, as the hook's own process would
            if not started:
                raise
            try:  # noqa: SIM105 - contextlib is not loaded in a hook call
                sock.sendall(b"I")
            except OSError:
                pass
            continue
        except OSError as exc:
            chunk = b""
            cause = f"{type(exc).__name__}: {exc}"
        else:
            cause = "the hook server's process ended before answering"
        if not chunk:
            return Outcome(FAILED, lost=cause) if started else Outcome(None)
        data += chunk
        if not started:
            if data[:1] == b"R":
                return Outcome(None)
            if data[:1] != b"A":
                return Outcome(FAILED, lost="the hook server answered something unexpected")
            try:  # go: from now on the call is the child's (it waits for this)
                sock.sendall(b"G")
            except OSError:
                return Outcome(None)
            sock.settimeout(None)
            started = True
            data = data[1:]
        if data[:1] == b"X" and len(data) >= 2:
            return Outcome(data[1])
        if data and data[:1] != b"X":
            return Outcome(FAILED, lost="the hook server answered something unexpected")


def spawn_argv() -> list[str] | None:
    """``redline hook-server`` started the way this process was (the same interpreter,
    flags and script, or ``-m redline``: the same import path, so the same identity), or
    ``None`` for another start (``-c`` code: not this command's to run again)."""
    given = len(sys.argv) - 1
    head = sys.orig_argv[: len(sys.orig_argv) - given] if given else list(sys.orig_argv)
    if len(head) < 2 or sys.orig_argv[len(head) :] != sys.argv[1:]:
        return None
    if head[-1] != sys.argv[0] and head[-2:] != ["-m", "redline"]:
        return None
    return [sys.executable, *head[1:], "hook-server"]


def spawn_server() -> None:
    """Start ``redline hook-server`` for later calls (:func:`spawn_argv`), in a session of
    its own, stdio on /dev/null; not waited for."""
    argv = spawn_argv()
    if argv is None:
        return
    null = os.devnull
    try:  # noqa: SIM105 - contextlib is not loaded in a hook call
        os.posix_spawn(
            sys.executable,
            argv,
            os.environ,
            setsid=True,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
            ],
        )
    except OSError:
        pass  # the next call tries again; this one is answered already
