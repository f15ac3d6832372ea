"""A spare copies the memory it shares with the server before its call comes
(redline/hookserver/prefault.py): counted in page faults, never timed."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded
from tests.hookserver.test_hook_server import (
    GUARD,
    REDLINE,
    Server,
    children,
    start_hook,
    until,
    workspace,
)

from redline.hookserver import prefault

PAGES = 1024


def _copier() -> prefault.Prefault:
    copier = prefault.load()
    if copier is None:
        pytest.skip("no ctypes or madvise here")
    return copier


def _in_a_fork(copy: bool, waiting: bool = False) -> dict[str, int]:
    """In a fork of this process: the pages copied ahead (when ``copy``; ``waiting``:
    a call is said to wait from the start), then the faults taken writing one byte in
    each page of memory written before the fork."""
    copier = _copier()
    page = os.sysconf("SC_PAGE_SIZE")
    data = bytearray(os.urandom(PAGES * page))  # written here: shared with the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the fork's own report
        code = 1
        try:
            os.close(read)
            copied = copier.run(lambda: waiting) if copy else 0
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            for offset in range(0, len(data), page):
                data[offset] = 1
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
            os.write(write, json.dumps({"copied": copied, "faults": faults}).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as said:
        report = json.loads(said.read() or b"{}")
    _, status = os.waitpid(pid, 0)
    assert status == 0 and report, "the fork did not report"
    return dict(report)


def test_a_fork_that_copied_ahead_writes_its_shared_memory_without_faults() -> None:
    shared = _in_a_fork(copy=False)
    copied = _in_a_fork(copy=True)
    if copied["copied"] == 0:
        pytest.skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14+)")
    assert shared["faults"] >= PAGES // 2  # copy on write, page by page
    assert copied["copied"] >= PAGES
    assert copied["faults"] < PAGES // 16


def test_it_stops_as_soon_as_a_call_waits() -> None:
    report = _in_a_fork(copy=True, waiting=True)
    assert report["copied"] <= 2 * prefault.BATCH
    assert report["faults"] >= PAGES // 2  # the rest is copied as it is written


def test_a_refused_advice_turns_it_off() -> None:
    calls: list[int] = []

    def refuse(address: int, length: int, advice: int) -> int:
        calls.append(advice)
        return -1

    copier = prefault.Prefault(refuse)
    assert copier.run(lambda: False) == 0
    assert copier.run(lambda: False) == 0
    assert calls == [prefault.POPULATE_WRITE]  # asked once, then never again


def test_only_private_writable_memory_is_copied() -> None:
    line = b"7f00a000-7f00c000 rw-p 00000000 00:00 0 \n"
    assert prefault._writable(line) == (0x7F00A000, 0x7F00C000)
    assert prefault._writable(b"7f00a000-7f00c000 r--p 00000000 08:01 12 /usr/lib/x.so\n") is None
    assert prefault._writable(b"7f00a000-7f00c000 rw-s 00000000 00:05 3 /dev/shm/x\n") is None
    assert prefault._writable(b"7ffd0000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n") is None


def _memory_kb(pid: int, what: str) -> int:
    """A figure of ``pid``'s memory (``/proc/PID/smaps_rollup``), in kB."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(f"{what}:"):
            return int(line.split()[1])
    return 0


def test_a_servers_spare_holds_its_own_copy_and_answers_calls(
    tmp_path: Path, env: dict[str, str], runtime: Path
) -> None:
    """The spare of a real server copies ahead (most of what it shares with the server
    becomes its own), and the calls it then takes are answered as before."""
    if _in_a_fork(copy=True)["copied"] == 0:
        pytest.skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14+)")
    server = Server(env, runtime)
    try:
        until("the server has its spare", lambda: bool(children(server.proc.pid)))
        spare = children(server.proc.pid)[0]
        until(
            "the spare copied the server's memory",
            lambda: (
                _memory_kb(spare, "Private_Dirty") >= _memory_kb(server.proc.pid, "Anonymous") // 2
            ),
        )
        root = workspace(tmp_path, "ws")
        hook = start_hook(recorded("pre-read.json", root), env)
        assert hook.communicate(timeout=GUARD) == (b"", b"")
        assert hook.returncode == 0
        done = subprocess.run(
            [REDLINE, "hook-server", "--status"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=GUARD,
        )
        assert "1 calls served" in done.stdout
    finally:
        server.stop()
