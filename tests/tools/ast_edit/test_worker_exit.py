"""Worker processes die with redline: a ``kill -9`` mid-search leaves none behind.

Every process redline starts for a search (forkserver, resource tracker, pool workers)
inherits the environment, so a unique variable identifies them all, however they were
re-parented after the kill.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

# Generous hang guards (the contract is 5 s to go; a loaded machine can be slow).
START_GUARD = 120.0
EXIT_GUARD = 30.0


def _corpus(root: Path) -> None:
    # Enough files and bytes that the search uses the process pool, and slow enough
    # that it is still running when killed.
    body = "".join(f"v{i} = a[b{i}] + c[d][e] * f(g[h], i[j])\n" for i in range(1_200))
    for index in range(32):
        (root / f"m{index}.py").write_text(body)


def _marked(mark: str, exclude: int) -> list[int]:
    wanted = f"REDLINE_TEST_MARK={mark}".encode()
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == exclude:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if wanted in environ and state != b"Z":
            found.append(int(entry))
    return found


# `redline ast-edit` with the pool whatever the size (the corpus is far below the
# threshold, to keep the test small). With a thread running besides the main one, the
# workers come from a forkserver, as in the dashboard; else they are forked.
_RUN = """
import sys, threading
from redline.tools.ast_edit import engine
from redline.cli import main
engine.POOL_MIN_BYTES = 0
if sys.argv[1] == "forkserver":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
sys.exit(main(sys.argv[2:]))
"""
# Processes to wait for before the kill: the resource tracker, the forkserver and a
# worker; or one forked worker.
_STARTED = {"forkserver": 3, "fork": 1}


def _kill_and_check(root: Path, delay: float, start: str = "fork") -> None:
    mark = uuid.uuid4().hex
    env = dict(os.environ, REDLINE_TEST_MARK=mark)
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUN, start, "ast-edit", "-C", str(root), "--pattern", "$A[$B]"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_GUARD
        while len(_marked(mark, proc.pid)) < _STARTED[start]:
            assert proc.poll() is None, "the search ended before its workers were seen"
            if time.monotonic() > deadline:  # a hang guard, not a speed check
                raise AssertionError("no worker processes appeared")
            time.sleep(0.02)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + EXIT_GUARD
        while _marked(mark, proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marked(mark, proc.pid) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _marked(mark, proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


pytestmark = pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="needs /proc to find the worker processes"
)


@pytest.mark.parametrize("start", ["fork", "forkserver"])
def test_kill_9_mid_search_leaves_no_worker_behind(tmp_path: Path, start: str) -> None:
    _corpus(tmp_path)
    _kill_and_check(tmp_path, 0.0, start)


@pytest.mark.stress
def test_kill_9_at_random_moments_leaves_no_worker_behind(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    full = "stress" in (request.config.getoption("-m") or "")
    rng = random.Random(1010)
    _corpus(tmp_path)
    for run in range(20 if full else 1):
        _kill_and_check(tmp_path, rng.uniform(0.0, 0.5), "forkserver" if run % 2 else "fork")
