"""``redline sandbox``'s proof: probes run inside the checks' sandbox try to get out.

A small Python program (the standard library only, run by redline's own interpreter, whose
installation is bound read-only for it) tries to write the workspace, ``$HOME``, the host's
``/tmp`` and redline's state folder, to open and read the state key, to connect to
``$SSH_AUTH_SOCK``, ``/var/run/docker.sock``, the session bus and a TCP port redline
listens on at 127.0.0.1, and to leave a process behind. Each row is judged from outside
where it can be (a file that appeared, a connection accepted, a process still running),
else by what the probe reports: ``blocked`` or ``REACHABLE``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from redline.checks.sandbox import Sandbox, launch

BLOCKED = "blocked"
REACHABLE = "REACHABLE"
NOT_ISOLATED_MACOS = "not isolated on macOS"
TIMEOUT = 60.0

PROBE = r"""
import hashlib, json, os, socket, sys
spec = json.loads(sys.argv[1])
out = {}
def said(exc):
    return "refused: " + (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
for name, path in spec["writes"]:
    try:
        with open(path, "x") as handle:
            handle.write("redline sandbox probe\n")
        out[name] = "wrote"
    except OSError as exc:
        out[name] = said(exc)
key = spec["key"]
try:
    with open(key, "r+b"):
        out["open-state-key"] = "opened for writing"
except OSError as exc:
    out["open-state-key"] = said(exc)
try:
    with open(key, "rb") as handle:
        out["read-state-key"] = hashlib.sha256(handle.read()).hexdigest()
except OSError as exc:
    out["read-state-key"] = said(exc)
for name, address in spec["unix"]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5)
    try:
        sock.connect(address.replace("@", "\0", 1) if address.startswith("@") else address)
        out[name] = "connected"
    except OSError as exc:
        out[name] = said(exc)
    finally:
        sock.close()
try:
    socket.create_connection(("127.0.0.1", spec["port"]), timeout=5).close()
    out["loopback-tcp"] = "connected"
except OSError as exc:
    out["loopback-tcp"] = said(exc)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", spec["token"]])
    os._exit(0)
os.wait()
out["process-left"] = "started"
print("REDLINE-PROBES " + json.dumps(out), flush=True)
"""


@dataclass(frozen=True)
class Probe:
    name: str
    result: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        data = {"name": self.name, "result": self.result}
        if self.detail:
            data["detail"] = self.detail
        return data


class ProbeError(Exception):
    """The probes did not run inside the sandbox (the message says what happened)."""


@contextlib.contextmanager
def _counting(server: socket.socket, name: str) -> Iterator[list[int]]:
    """Accept (and close) every connection to ``server`` on a thread while the block runs;
    the list grows by one per connection."""
    server.settimeout(0.2)
    accepted: list[int] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(1)
            conn.close()

    thread = threading.Thread(target=serve, name=name, daemon=True)
    thread.start()
    try:
        yield accepted
    finally:
        stop.set()
        thread.join()
        server.close()


@contextlib.contextmanager
def _tcp_listener() -> Iterator[tuple[int, list[int]]]:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    with _counting(server, "redline-sandbox-probe") as accepted:
        yield port, accepted


@contextlib.contextmanager
def _unix_listener(address: str) -> Iterator[list[int]]:
    """A stand-in socket (``@name``: abstract) that counts who connects."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address.replace("@", "\0", 1) if address.startswith("@") else address)
    server.listen()
    with _counting(server, "redline-sandbox-probe-unix") as accepted:
        yield accepted


def _session_bus() -> tuple[str, str]:
    """The session bus's address (``@name`` for an abstract one) and a note, or ""."""
    value = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
    for part in value.split(";"):
        kind, _, rest = part.partition(":")
        if kind != "unix":
            continue
        fields = dict(f.split("=", 1) for f in rest.split(",") if "=" in f)
        if "path" in fields:
            return fields["path"], ""
        if "abstract" in fields:
            return "@" + fields["abstract"], ""
    default = f"/run/user/{os.getuid()}/bus"
    if os.path.exists(default):
        return default, ""
    return "", "no session bus here"


def _survivors(token: str) -> list[int]:
    """Processes whose command line carries ``token`` (Linux: /proc)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            with contextlib.suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as handle:
                if token.encode() in handle.read():
                    found.append(int(entry))
    return found


def _key_hash(key: Path) -> str:
    try:
        return hashlib.sha256(key.read_bytes()).hexdigest()
    except OSError:
        return ""


def run_probes(sandbox: Sandbox, workspace: Path, *, macos: bool = False) -> list[Probe]:
    """Run every probe in ``sandbox`` (as a check of ``workspace`` would run)."""
    from redline.checks.sandbox import home
    from redline.paths import user_state_dir
    from redline.workspace.auth import key_path

    token = f"redline-probe-{secrets.token_hex(8)}"
    marker = f".{token}"
    home_dir = home()
    state = user_state_dir()
    key = key_path()
    host_tmp = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
    writes = [
        ("write-workspace", str(workspace / marker)),
        ("write-home", os.path.join(home_dir, marker) if home_dir else ""),
        ("write-tmp", os.path.join(host_tmp, marker)),
        ("write-state-key", str(state / marker)),
    ]
    writes = [(name, path) for name, path in writes if path]
    notes: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="redline-sandbox-") as scratch:
        tree = Path(scratch) / "tree"
        private = Path(scratch) / "tmp"
        tree.mkdir()
        private.mkdir()
        agent = os.environ.get("SSH_AUTH_SOCK", "")
        stand_ins: list[str] = []
        if not agent:
            agent = str(Path(scratch) / "agent.sock")
            stand_ins.append(agent)
            notes["ssh-agent"] = "no $SSH_AUTH_SOCK here: tried a stand-in agent socket"
        bus, bus_note = _session_bus()
        if not bus:
            bus = f"@{token}-bus"
            stand_ins.append(bus)
            notes["session-bus"] = f"{bus_note}: tried a stand-in abstract socket"
        docker = "/var/run/docker.sock"
        if not os.path.exists(docker):
            notes["docker-socket"] = f"no {docker} here"
        unix = [("ssh-agent", agent), ("docker-socket", docker), ("session-bus", bus)]
        spec: dict[str, object] = {"writes": writes, "key": str(key), "unix": unix}
        spec["token"] = token
        with contextlib.ExitStack() as stack:
            unix_accepts = {
                address: stack.enter_context(_unix_listener(address)) for address in stand_ins
            }
            port, tcp_accepts = stack.enter_context(_tcp_listener())
            spec["port"] = port
            said = _run_inside(sandbox, spec, tree, str(private))
            survivors = _survivors(token)
            for pid in survivors:
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)
        rows: list[Probe] = []
        for name, path in writes:
            escaped = os.path.lexists(path)
            if escaped:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            rows.append(Probe(name, REACHABLE if escaped else BLOCKED, _detail(said, name)))
        opened = said.get("open-state-key", "") == "opened for writing"
        real_hash = _key_hash(key)
        read = bool(real_hash) and said.get("read-state-key") == real_hash
        rows.append(Probe("open-state-key", REACHABLE if opened else BLOCKED))
        rows.append(Probe("read-state-key", REACHABLE if read else BLOCKED))
        for name, address in unix:
            reached = said.get(name) == "connected" or bool(unix_accepts.get(address))
            detail = "; ".join(filter(None, (notes.get(name, ""), said.get(name, ""))))
            rows.append(Probe(name, REACHABLE if reached else BLOCKED, detail))
        reached = said.get("loopback-tcp") == "connected" or bool(tcp_accepts)
        rows.append(
            Probe("loopback-tcp", REACHABLE if reached else BLOCKED, _detail(said, "loopback-tcp"))
        )
        if macos:
            rows.append(Probe("process-left", NOT_ISOLATED_MACOS))
        else:
            rows.append(Probe("process-left", REACHABLE if survivors else BLOCKED))
    return rows


def _detail(said: dict[str, str], name: str) -> str:
    text = said.get(name, "")
    return "written only inside the sandbox (a private folder)" if text == "wrote" else text


def _run_inside(
    sandbox: Sandbox, spec: dict[str, object], tree: Path, private: str
) -> dict[str, str]:
    python = os.path.realpath(sys.executable)
    reads = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)}
    reads.add(os.path.dirname(python))
    probing = replace(sandbox, read=(*sandbox.read, *sorted(reads)))
    argv = [python, "-I", "-S", "-c", PROBE, json.dumps(spec)]
    wrapped = launch(probing, argv, tree, private)
    # Output to a file, not a pipe: a child left behind would hold a pipe open.
    with tempfile.TemporaryFile() as output:
        try:
            done = subprocess.run(
                wrapped.argv,
                cwd=tree,
                env=wrapped.env,
                pass_fds=wrapped.fds,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                timeout=TIMEOUT,
                check=False,
                start_new_session=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise ProbeError(f"the probes could not start: {exc}") from None
        output.seek(0)
        text = output.read(1024 * 1024).decode("utf-8", "replace")
    failed = wrapped.failure()
    if failed:
        raise ProbeError(failed)
    for line in text.splitlines():
        if line.startswith("REDLINE-PROBES "):
            data = json.loads(line.split(" ", 1)[1])
            return {str(k): str(v) for k, v in data.items()}
    tail = " / ".join(text.strip().splitlines()[-3:])
    raise ProbeError(
        f"the probes did not run inside the sandbox (status {done.returncode}"
        + (f": {tail})" if tail else ")")
    )
