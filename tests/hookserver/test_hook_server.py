"""The resident hook server (redline/hookserver/): real `redline hook-server` processes and
real `redline hook claude` clients on a temporary workspace, compared with the hook's own
process (``REDLINE_HOOK_SERVER=off``, as the rest of the suite runs)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded

from redline.hookserver import client
from redline.review.follower import follow
from redline.review.queued import resolve_queued
from redline.workspace.queue import QueueRecord, WorkspaceQueue

REDLINE = str(Path(sys.executable).with_name("redline"))
GUARD = 120.0  # a hang guard, never a timing


def until(what: str, done: Callable[[], bool]) -> None:
    """Return once ``done()`` holds (checked every 20 ms, up to the hang guard)."""
    deadline = time.monotonic() + GUARD
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        threading.Event().wait(0.02)


def sockets(runtime: Path) -> list[Path]:
    return sorted((runtime / "redline").glob("hook-*.sock"))


class Server:
    def __init__(self, env: dict[str, str], runtime: Path) -> None:
        self.env = env
        self.runtime = runtime
        self.proc = subprocess.Popen(
            [REDLINE, "hook-server", "--idle", "600"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        until("the server listens", lambda: bool(sockets(runtime)) or self.proc.poll() is not None)
        assert self.proc.poll() is None, self.proc.communicate()
        self.path = sockets(runtime)[0]

    def ask(self, what: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [REDLINE, "hook-server", f"--{what}"],
            env=env or self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=GUARD,
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.ask("stop")
            try:
                self.proc.wait(GUARD)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        assert self.proc.stderr is not None
        self.proc.stderr.close()


@pytest.fixture
def server(env: dict[str, str], runtime: Path) -> Iterator[Server]:
    running = Server(env, runtime)
    try:
        yield running
    finally:
        running.stop()


def workspace(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    (root / "a.txt").write_text("hello\n", encoding="utf-8")
    return root


def start_hook(raw: bytes, env: dict[str, str]) -> subprocess.Popen[bytes]:
    hook = subprocess.Popen(
        [REDLINE, "hook", "claude"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert hook.stdin is not None
    hook.stdin.write(raw)
    hook.stdin.close()
    hook.stdin = None
    return hook


def queued(queue: WorkspaceQueue) -> QueueRecord:
    changed = threading.Event()
    stop = follow(queue, changed.set)
    try:
        while not queue.list():
            assert changed.wait(GUARD), "nothing was queued"
            changed.clear()
        return queue.list()[0]
    finally:
        stop()


def decided_call(root: Path, env: dict[str, str]) -> tuple[int, bytes, bytes, bool]:
    """A reviewed Write queued by a hook call and discarded by this process: the hook's
    exit status, output, errors, and whether the call ran in the hook's own process."""
    queue = WorkspaceQueue(root)
    try:
        hook = start_hook(recorded("pre-write.json", root), env)
        record = queued(queue)
        result = asyncio.run(resolve_queued(queue, record.id, "discard", "not this one"))
        assert not result.is_error, result.text
        out, err = hook.communicate(timeout=GUARD)
        return hook.returncode, out, err, record.source.pid == hook.pid
    finally:
        queue.close()


def test_a_decided_call_answers_through_the_server_as_in_its_own_process(
    tmp_path: Path, env: dict[str, str], server: Server
) -> None:
    alone = decided_call(workspace(tmp_path, "alone"), {**env, client.SWITCH_ENV: "off"})
    served = decided_call(workspace(tmp_path, "served"), env)
    assert alone[3] and not served[3]  # the record's owner: the hook, or the server's child
    assert served[:3] == alone[:3]
    answer = json.loads(served[1])["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "not this one" in answer["permissionDecisionReason"]
    assert "1 calls served" in server.ask("status").stdout


def test_a_pass_through_and_a_bad_payload_answer_the_same_through_the_server(
    tmp_path: Path, env: dict[str, str], server: Server
) -> None:
    root = workspace(tmp_path, "ws")
    for raw in (recorded("pre-read.json", root), b"{not json"):
        answers = [
            subprocess.run(
                [REDLINE, "hook", "claude"], input=raw, env=e, capture_output=True, check=False
            )
            for e in ({**env, client.SWITCH_ENV: "off"}, env)
        ]
        alone, served = ((a.returncode, a.stdout, a.stderr) for a in answers)
        assert served == alone
    assert "2 calls served" in server.ask("status").stdout


def killed_call(root: Path, env: dict[str, str]) -> tuple[str, str]:
    """A reviewed Write whose hook the agent kills while it waits (its record is then left
    to a dead owner): what discarding it says, and the record's state after."""
    queue = WorkspaceQueue(root)
    try:
        hook = start_hook(recorded("pre-write.json", root), env)
        record = queued(queue)
        hook.send_signal(signal.SIGTERM)
        hook.communicate(timeout=GUARD)

        def left() -> bool:
            again = queue.get(record.id)
            return again is not None and again.orphaned()

        until("the record's owner is gone", left)
        result = asyncio.run(resolve_queued(queue, record.id, "discard", "gone"))
        resolution = queue.resolution(record.id)
        state = "none" if resolution is None else resolution.decision
        return result.text.replace(record.id, "ID"), state
    finally:
        queue.close()


def test_a_killed_client_leaves_its_record_as_a_killed_hook_does(
    tmp_path: Path, env: dict[str, str], server: Server
) -> None:
    alone = killed_call(workspace(tmp_path, "alone"), {**env, client.SWITCH_ENV: "off"})
    served = killed_call(workspace(tmp_path, "served"), env)
    assert served == alone


def test_a_child_lost_mid_call_fails_closed(
    tmp_path: Path, env: dict[str, str], server: Server
) -> None:
    root = workspace(tmp_path, "ws")
    queue = WorkspaceQueue(root)
    try:
        hook = start_hook(recorded("pre-write.json", root), env)
        record = queued(queue)
        assert record.source.pid != hook.pid
        os.kill(record.source.pid, signal.SIGKILL)
        out, err = hook.communicate(timeout=GUARD)
    finally:
        queue.close()
    assert (hook.returncode, out) == (2, b"")
    assert err.decode().startswith("redline: blocked: the hook server's process ended")


def test_without_a_server_or_with_a_stale_socket_the_call_is_answered_in_its_process(
    tmp_path: Path, env: dict[str, str], runtime: Path
) -> None:
    first = Server(env, runtime)
    path = first.path
    first.stop()
    assert not path.exists()  # a server removes its socket when it ends
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))  # a socket file nobody listens on (a server killed with -9)
    stale.close()
    root = workspace(tmp_path, "ws")
    code, out, err, own = decided_call(root, env)
    assert (code, own) == (0, True), err
    assert b"not this one" in out
    # The call started a server for the next ones (detached): it replaces the stale socket.
    until("a new server listens", lambda: listening(path))
    spawned = subprocess.run(
        [REDLINE, "hook-server", "--stop"], env=env, capture_output=True, text=True, check=False
    )
    assert spawned.stdout.startswith("hook server stopped: pid ")
    until("the spawned server ended", lambda: not path.exists())


def listening(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def test_switched_off_the_hook_neither_uses_nor_starts_a_server(
    tmp_path: Path, env: dict[str, str], server: Server, runtime: Path
) -> None:
    root = workspace(tmp_path, "ws")
    code, _out, _err, own = decided_call(root, {**env, client.SWITCH_ENV: "off"})
    assert (code, own) == (0, True)
    assert "0 calls served" in server.ask("status").stdout
    assert sockets(runtime) == [server.path]


def test_another_environment_misses_the_server(env: dict[str, str], server: Server) -> None:
    """A variable read at import (REDLINE_*, XDG_*, HOME, PYTHON*, LANG, LC_*, TZ) keys the
    socket: a client that differs finds no server (and answers in its own process)."""
    other = server.ask("status", {**env, "REDLINE_HOOK_TRACE": "/dev/null"})
    assert (other.returncode, other.stdout) == (1, "no hook server answers this environment\n")
    assert server.ask("status").returncode == 0


def raw_exchange(path: Path, data: bytes, fds: list[int] | None = None) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(GUARD)
        conn.connect(str(path))
        if fds:
            socket.send_fds(conn, [data], fds)
        else:
            conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
        return answer


def test_a_foreign_or_bad_message_is_refused_with_a_reason(
    tmp_path: Path, env: dict[str, str], server: Server
) -> None:
    ident = subprocess.run(
        [sys.executable, "-c", "from redline.hookserver import client; print(client.identity())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.rstrip("\n")
    entries = [f"{k}={v}".encode() for k, v in env.items()]
    good = client.encode("call", "claude", 0o022, ident, entries)
    null = os.open(os.devnull, os.O_RDWR)
    here = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        cases = [
            (b"GET / HTTP/1.0\r\n\r\n", None, b"not a redline hook message"),
            (client.MAGIC + (1 << 30).to_bytes(4, "big"), None, b"more than"),
            (client.MAGIC + (50).to_bytes(4, "big") + b"short", None, b"cut short"),
            (good, None, b"0 descriptors for a 'call' message"),
            (good, [null] * 5, b"5 descriptors for a 'call' message (expected 4)"),
            (good, [null] * 8, b"too many descriptors"),
            (good, [null, null, null, null], b"not a folder"),
            (client.encode("call", "claude", 0o022, "another", entries), [0, 1, 2, here], b""),
            (client.encode("call", "claude", 0o022, ident, []), [0, 1, 2, here], b""),
            (client.encode("exec", "claude", 0o022, ident, entries), None, b"unknown kind"),
            (client.encode("call", "claude", 0o1777, ident, entries), [0, 1, 2, here], b"umask"),
            (client.encode("call", "claude", 0, ident, [b"=x"]), [0, 1, 2, here], b"NAME=VALUE"),
        ]
        for data, fds, reason in cases:
            answer = raw_exchange(server.path, data, fds)
            assert answer.startswith(b"R") and answer.endswith(b"\n"), (data[:60], answer)
            assert reason in answer, (data[:60], answer)
    finally:
        os.close(null)
        os.close(here)
    # Still serving, and none of those was a call.
    assert "0 calls served" in server.ask("status").stdout
    root = workspace(tmp_path, "ws")
    done = subprocess.run(
        [REDLINE, "hook", "claude"],
        input=recorded("pre-read.json", root),
        env=env,
        capture_output=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "1 calls served" in server.ask("status").stdout


def test_a_child_takes_the_clients_environment_and_nothing_else(tmp_path: Path) -> None:
    """In a fork (as a spare is): the environment becomes exactly the client's, whatever
    the server's had."""
    from redline.hookserver.spare import _environment

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.environ["ONLY_IN_THE_SERVER"] = "1"
            _environment([b"HOME=/nowhere", b"ONLY_IN_THE_CLIENT=\xff"])
            shown = subprocess.run(["/usr/bin/env"], capture_output=True, check=False).stdout
            seen = {
                "environ": dict(os.environ),
                "environb": len(os.environb),
                "getenv": shown.decode("utf-8", "replace").splitlines(),
            }
            os.write(write, json.dumps(seen).encode())
        except BaseException as exc:
            os.write(write, json.dumps({"error": repr(exc)}).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as reading:
        seen = json.loads(reading.read())
    os.waitpid(pid, 0)
    assert seen["environ"] == {"HOME": "/nowhere", "ONLY_IN_THE_CLIENT": "\udcff"}
    assert seen["environb"] == 2
    assert "ONLY_IN_THE_SERVER=1" not in seen["getenv"]
    assert "HOME=/nowhere" in seen["getenv"]


def interrupted_call(root: Path, env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """A reviewed Write whose hook gets Ctrl-C (SIGINT) while it waits: its answer."""
    queue = WorkspaceQueue(root)
    try:
        hook = start_hook(recorded("pre-write.json", root), env)
        queued(queue)
        # Interrupted while it waits for the decision (its watch's doorbell is there), not
        # somewhere on the way to it: the same moment in both processes.
        requests = root / ".redline" / "queue" / "requests"
        until("the call waits", lambda: any(requests.glob(".wake-*")))
        hook.send_signal(signal.SIGINT)
        out, err = hook.communicate(timeout=GUARD)
        return hook.returncode, out, err
    finally:
        queue.close()


def test_ctrl_c_on_the_client_interrupts_the_call_as_in_its_own_process(
    tmp_path: Path, env: dict[str, str], server: Server
) -> None:
    alone = interrupted_call(workspace(tmp_path, "alone"), {**env, client.SWITCH_ENV: "off"})
    served = interrupted_call(workspace(tmp_path, "served"), env)
    assert served == alone
    assert alone[0] == 2


_LOADS_AFTER_PRELOAD = r"""
import json, os, sys
from redline.commands.hook_server import PRELOAD
from redline.hookserver.server import _preload
from redline.commands.hook import handle
_preload(PRELOAD)
before = set(sys.modules)
for raw in sys.stdin.buffer.read().split(b"\n"):
    pid = os.fork()
    if pid == 0:
        handle("claude", raw, exiting=True)
        new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] != "encodings")
        print(json.dumps(new), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
"""


def prompt_time(root: Path) -> bytes:
    fixture = (
        Path(__file__).parents[1] / "fixtures" / "hooks" / "claude" / "user-prompt-submit.json"
    )
    data = json.loads(fixture.read_text(encoding="utf-8"))
    data["cwd"] = str(root)
    return json.dumps(data).encode()


def test_what_the_server_loads_is_all_a_call_needs(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    """A rule's decision, a pass-through, a post-tool call and a prompt-time call each
    load no module in the server's fork (the server loads them once, commands/hook_server)."""
    (isolated_user_config / "rules.toml").write_text(
        '[[rule]]\nname = "r"\ndecision = "discard"\nsources = ["hook:*"]\n'
        'paths = ["ruled.txt"]\nreason = "no"\n',
        encoding="utf-8",
    )
    root = workspace(tmp_path, "ws")
    calls = [
        recorded("pre-write.json", root, file_path=str(root / "ruled.txt")),
        recorded("pre-read.json", root),
        recorded("post-write.json", root),
        prompt_time(root),
    ]
    done = subprocess.run(
        [sys.executable, "-c", _LOADS_AFTER_PRELOAD],
        input=b"\n".join(calls),
        capture_output=True,
        check=False,
        timeout=GUARD,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    loaded = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert loaded == [[], [], [], []]


def test_a_module_changed_on_disk_makes_the_server_stale(tmp_path: Path) -> None:
    from redline.hookserver.server import _Server

    module = tmp_path / "module.py"
    module.write_text("x = 1\n", encoding="utf-8")
    server = _Server(lambda agent: 0, "ident", [], str(tmp_path / "s.sock"), -1, 1.0)
    info = module.stat()
    server.stamps = {str(module): (info.st_mtime_ns, info.st_size)}
    assert not server.changed()
    module.write_text("x = 22\n", encoding="utf-8")  # another size
    assert server.changed()
    module.unlink()
    assert server.changed()


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_server_killed_outright_leaves_no_spare_waiting(
    tmp_path: Path, env: dict[str, str], runtime: Path
) -> None:
    server = Server(env, runtime)
    until("the server has its spare", lambda: bool(children(server.proc.pid)))
    spare = children(server.proc.pid)[0]
    server.proc.kill()
    server.proc.wait()
    until("the spare ended", lambda: not alive(spare))
    server.stop()
    # Its socket is left behind, stale: the next call answers in its own process.
    root = workspace(tmp_path, "ws")
    done = subprocess.run(
        [REDLINE, "hook", "claude"],
        input=recorded("pre-read.json", root),
        env={**env, "XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    until("a new server listens", lambda: listening(server.path))
    stopped = server.ask("stop")
    assert stopped.stdout.startswith("hook server stopped: pid "), stopped
    until("the spawned server ended", lambda: not server.path.exists())


def test_calls_at_once_are_each_answered(
    tmp_path: Path, env: dict[str, str], server: Server
) -> None:
    """An agent's parallel tool calls: each its own fork, each answered (a call that finds
    the spare taken waits in the socket's backlog for the next one)."""
    root = workspace(tmp_path, "ws")
    raw = recorded("pre-read.json", root)
    hooks = [start_hook(raw, env) for _ in range(6)]
    answers = [(hook.communicate(timeout=GUARD), hook.returncode) for hook in hooks]
    assert answers == [((b"", b""), 0)] * 6
    assert "6 calls served" in server.ask("status").stdout


def test_no_environment_leaks_from_one_served_call_to_the_next(
    tmp_path: Path, env: dict[str, str], server: Server, isolated_user_config: Path
) -> None:
    """Two calls through one server, one with a variable the other has not: the
    `[notify] command` each call starts (nobody watches the workspace) sees its own call's
    environment."""
    told = tmp_path / "told.txt"
    (isolated_user_config / "config.toml").write_text(
        "[hooks]\nwait_seconds = 0.01\n[notify]\n"
        f'command = ["sh", "-c", "echo ${{MARK-unset}} >> {told}"]\n',
        encoding="utf-8",
    )
    root = workspace(tmp_path, "ws")
    for n, extra in enumerate(({"MARK": "first"}, {})):
        done = subprocess.run(
            [REDLINE, "hook", "claude"],
            input=recorded("pre-write.json", root, file_path=str(root / f"f{n}.txt")),
            env={**env, **extra},
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        until("the notification ran", lambda n=n: told.exists() and len(lines(told)) > n)
    assert lines(told) == ["first", "unset"]
    assert "2 calls served" in server.ask("status").stdout


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()
