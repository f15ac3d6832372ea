"""A hook process ends at its answer without closing its event loop (commands/hook.py):
its answers, and what a Ctrl-C while it waits leaves behind, are as they were with
``asyncio.run`` — a person's discard is answered with its reason, and Ctrl-C still cancels
the call (its doorbell is removed, the call blocks with the cause)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tests.drivers.hooks.test_claude_mapping import recorded

from redline.review.follower import follow
from redline.review.queued import resolve_queued
from redline.workspace.queue import WorkspaceQueue

GUARD = 60.0


def _until(what: str, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + GUARD
    while not done():
        if time.monotonic() > deadline:  # a hang guard, not a timing
            raise AssertionError(f"never happened: {what}")
        threading.Event().wait(0.02)


def _hook(ws: Path) -> subprocess.Popen[bytes]:
    """A `redline hook claude` process (its own, not a server's) waiting on a Write."""
    hook = subprocess.Popen(
        [sys.executable, "-m", "redline", "hook", "claude"],
        env={**os.environ, "REDLINE_HOOK_SERVER": "off"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert hook.stdin is not None
    hook.stdin.write(recorded("pre-write.json", ws))
    hook.stdin.close()
    hook.stdin = None
    return hook


def _workspace(tmp_path: Path) -> tuple[Path, WorkspaceQueue]:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    queue = WorkspaceQueue(ws)
    follow(queue, lambda: None)()  # the queue's folders exist before the hook runs
    return ws, queue


def _doorbells(ws: Path) -> list[Path]:
    return list((ws / ".redline" / "queue" / "requests").glob(".wake-*"))


def test_a_discard_is_answered_by_a_hook_that_ends_at_its_answer(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    ws, queue = _workspace(tmp_path)
    try:
        hook = _hook(ws)
        _until("the call waits", lambda: bool(_doorbells(ws)))
        [record] = queue.list()
        result = asyncio.run(resolve_queued(queue, record.id, "discard", "not this one"))
        assert not result.is_error, result.text
        out, err = hook.communicate(timeout=GUARD)
    finally:
        queue.close()
    assert hook.returncode == 0, err.decode()
    output = json.loads(out)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert output["permissionDecisionReason"] == "Discarded by the reviewer: not this one"
    assert not _doorbells(ws)


def test_ctrl_c_still_cancels_the_call_of_a_hook_that_ends_at_its_answer(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    ws, queue = _workspace(tmp_path)
    try:
        hook = _hook(ws)
        _until("the call waits", lambda: bool(_doorbells(ws)))
        hook.send_signal(signal.SIGINT)
        out, err = hook.communicate(timeout=GUARD)
    finally:
        queue.close()
    assert hook.returncode == 2
    assert "interrupted while waiting for review" in (out + err).decode()
    assert not _doorbells(ws)  # the cancelled call let its watch go, as asyncio.run's did
