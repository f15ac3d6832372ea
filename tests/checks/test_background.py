"""Background runs: started for a new action, cancelled (processes killed) when resolved."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from redline.checks import load_results
from redline.checks.background import BackgroundChecks
from redline.review.queued import resolve_queued
from redline.workspace.queue import WorkspaceQueue

from .conftest import CALC, checks_toml, make_project, push_edit, user_config

# Hangs on the proposal only; writes its pid so the test can see it was killed.
HANG = (
    "import os, pathlib, time\n"
    "if 'hang' in pathlib.Path('pkg/calc.py').read_text():\n"
    # Written whole under another name, then renamed: the test never reads it half-written.
    "    pathlib.Path({pidfile!r} + '.tmp').write_text(str(os.getpid()))\n"
    "    os.replace({pidfile!r} + '.tmp', {pidfile!r})\n"
    "    time.sleep(600)\n"
)


def wait_for(condition: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    gate = threading.Event()
    while not condition():
        if time.monotonic() > deadline:  # a hang guard, not a speed check
            raise AssertionError(f"not reached: {what}")
        gate.wait(0.02)


def test_resolving_an_action_cancels_its_checks(tmp_path: Path, isolated_user_config: Path) -> None:
    root = make_project(tmp_path / "ws", git=False)
    pidfile = tmp_path / "pid"
    command = [sys.executable, "-c", HANG.format(pidfile=str(pidfile))]
    user_config(isolated_user_config, checks_toml(("hang", command, "exit-code", 600)))
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", CALC + "# hang\n")
    preview = queue.preview(queue.get(action))  # type: ignore[arg-type]
    changed: list[str] = []
    runner = BackgroundChecks(root, queue, changed.append)
    try:
        runner.sync([(action, preview)])
        assert runner.running(action)
        wait_for(pidfile.exists, "the check started on the proposal")
        assert [r.status for r in load_results(queue, action).results] == ["running"]
        pid = int(pidfile.read_text())

        result = asyncio.run(resolve_queued(queue, action, "discard", "no"))
        assert not result.is_error
        runner.sync([])  # the dashboard's next refresh no longer lists it

        wait_for(lambda: not runner.running(action), "the run ended")
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), "the check process was killed")
        assert load_results(queue, action).results == ()
        # A second sync never starts it again.
        runner.sync([(action, preview)])
        assert not runner.running(action)
    finally:
        runner.close()
        queue.close()
