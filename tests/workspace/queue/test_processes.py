"""The queue between real processes: concurrent pushes and resolves, SIGKILL, watching."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from redline.workspace import entries, journal
from redline.workspace.queue import WorkspaceQueue
from redline.workspace.queue.used import UsedIds

from .children import PUSH_AND_RESOLVE, PUSH_ONE, PUSHER, RESOLVER

HANG_GUARD = 600
# Children that remember every record file in the listing index and save it after every read
# (by default a file must be two seconds old and 64 reads must pile up first).
INDEX_ALWAYS = (
    "from redline.workspace.queue import index as _index\n"
    "_index.SETTLE_NS, _index.PERSIST_AFTER = -(10**15), 1\n"
)


@pytest.fixture(params=["default", "index always"])
def prelude(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "default":
        return ""
    from redline.workspace.queue import index

    monkeypatch.setattr(index, "SETTLE_NS", -(10**15))
    monkeypatch.setattr(index, "PERSIST_AFTER", 1)
    return INDEX_ALWAYS


def _python(script: str, *args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,  # type: ignore[arg-type]
    )


def _load(ws: Path, per_process: int, prelude: str = "") -> None:
    pushers = [
        _python(prelude + PUSHER, str(ws), str(per_process), f"p{n}", stdin=subprocess.PIPE)
        for n in range(4)
    ]
    total = 4 * per_process
    resolvers = [_python(prelude + RESOLVER, str(ws), stdin=subprocess.PIPE) for _ in range(2)]
    # Each acknowledged push wakes both resolvers (a line on their stdin), so they resolve
    # while the pushers push, with no polling; EOF after the last push sends them home.
    relayed = threading.Lock()
    pushed: list[str] = []

    def relay(pusher: subprocess.Popen[str]) -> None:
        assert pusher.stdout is not None
        for line in pusher.stdout:
            with relayed:
                pushed.append(line.strip())
                for resolver in resolvers:
                    assert resolver.stdin is not None
                    with contextlib.suppress(BrokenPipeError):  # its exit status tells
                        resolver.stdin.write("pushed\n")
                        resolver.stdin.flush()

    relays = [threading.Thread(target=relay, args=(proc,), daemon=True) for proc in pushers]
    for thread in relays:
        thread.start()
    for proc in pushers:  # go
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc, thread in zip(pushers, relays, strict=True):
        thread.join(HANG_GUARD)
        _out, err = proc.communicate(timeout=HANG_GUARD)
        assert proc.returncode == 0, err
    resolved: list[str] = []
    for proc in resolvers:
        out, err = proc.communicate(timeout=HANG_GUARD)  # closes its stdin: the last pass
        assert proc.returncode == 0, err
        resolved.extend(out.split())
    assert len(pushed) == total and len(set(pushed)) == total  # unique ids
    assert set(pushed) == {f"pa-{n}" for n in range(1, total + 1)}  # none lost
    assert sorted(resolved) == sorted(pushed)  # each resolved exactly once
    queue = WorkspaceQueue(ws)
    assert queue.list() == [] and queue.problems == []
    # Every id was marked used, by whichever process resolved it: no update was lost.
    assert UsedIds(ws).read().encode() == f"1-{total}\n".encode()
    applied = [e for _, e in entries.iter_entries(ws) if isinstance(e, entries.Entry)]
    assert len({e.action_id for e in applied}) == len(applied)  # no action applied twice


@pytest.mark.stress
def test_four_pushers_and_two_resolvers(ws: Path, stress: bool, prelude: str) -> None:
    # In full: four processes push 250 actions each (1,000 ids) while two resolve.
    _load(ws, 250 if stress else 12, prelude)


def _kill_run(base: Path, seed: int, prelude: str = "") -> None:
    rng = random.Random(seed)
    root = base / f"kill{seed}"
    root.mkdir()
    proc = _python(prelude + PUSH_AND_RESOLVE, str(root), "4")
    assert proc.stdout is not None
    kill_after = rng.randint(0, 90)
    acked: list[str] = []
    lines = 0
    finished = False
    while lines < kill_after:
        line = proc.stdout.readline()
        if not line:
            finished = True
            break
        lines += 1
        if line.startswith("acked "):
            acked.append(line.split()[1])
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=HANG_GUARD)
    # The next start of any command: recovery, then the queue.
    journal.recover(root)
    queue = WorkspaceQueue(root)
    listed = {r.id: r for r in queue.list()}
    assert queue.problems == [], f"seed {seed}: {queue.problems}"
    for action_id in acked:  # every acknowledged push is pending or resolved
        assert action_id in listed or queue.resolution(action_id) is not None, (seed, action_id)
    for record in listed.values():  # nothing applied is still pending
        assert not (root / record.label).exists(), (seed, record.id)
        assert record.state == "pending"
    for name in os.listdir(root / ".redline/queue/resolved"):
        resolution = queue.resolution(name.removesuffix(".json"))
        assert resolution is not None
        if resolution.record is not None and resolution.decision == "apply":
            assert (root / resolution.record["label"]).exists()
    assert journal.recover(root) == []
    assert not any(
        n.endswith(".tmp") for _, _, names in os.walk(root / ".redline/queue") for n in names
    )
    if finished:
        return


@pytest.mark.stress
def test_kill_during_push_and_resolve(tmp_path: Path, stress: bool, prelude: str) -> None:
    # In full: 120 seeded kill points; by default a seeded handful.
    for seed in range(100, 220) if stress else range(4):
        _kill_run(tmp_path, seed, prelude)


def test_watch_sees_another_process_push(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    changed = threading.Event()
    watcher = queue.watch(changed.set)
    try:
        proc = _python(PUSH_ONE, str(ws))
        out, err = proc.communicate(timeout=HANG_GUARD)
        assert proc.returncode == 0, err
        assert changed.wait(60), "the watcher never fired"
        assert [r.id for r in queue.list()] == [out.strip()]
    finally:
        watcher.stop()
