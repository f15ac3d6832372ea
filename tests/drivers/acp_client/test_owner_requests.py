"""A permission request held by `exec --agent --wait` is answered when another process
resolves its action: the request to the owner is served by the process holding it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.drivers.acp_client.running import prompts
from tests.drivers.acp_client.test_exec_agent import HANG_GUARD, of

from redline.review.queued import resolve_queued
from redline.review.result import ToolResult
from redline.workspace.journal import undo_history
from redline.workspace.queue import WorkspaceQueue


def resolve_elsewhere(workspace: Path, action_id: str, decision: str, reason: str) -> ToolResult:
    """What `redline pending apply|discard` runs, with a hang guard for the owner's answer
    (the command's own 2 s are plenty for a person, not for a loaded test machine)."""
    return asyncio.run(
        resolve_queued(
            WorkspaceQueue(workspace), action_id, decision, reason, owner_timeout=HANG_GUARD
        )
    )


def test_a_shell_permission_applied_elsewhere_is_allowed(started: Any, workspace: Path) -> None:
    run = started([{"do": "shell", "command": "make"}], "--prompt", "do it", "--wait")
    action_id = run.wait_for_waiting()
    (record,) = WorkspaceQueue(workspace).list()
    assert (record.id, record.applied_by) == (action_id, "owner")
    result = resolve_elsewhere(workspace, action_id, "apply", "go ahead")
    assert not result.is_error, result.text
    assert result.text == "Allowed: Run make."
    code, stderr = run.finish()
    assert code == 0, stderr
    heard = run.heard()
    assert {"event": "permission", "call": "call-1", "outcome": "allow"} in heard
    assert "Run make: applied. Reason: go ahead" in prompts(heard)[1]
    resolved = of(run.events, "pending_resolved")[0]
    assert (resolved["action_id"], resolved["action"], resolved["reason"]) == (
        action_id,
        "apply",
        "go ahead",
    )
    resolution = WorkspaceQueue(workspace).resolution(action_id)
    assert resolution is not None and resolution.decision == "apply"


def test_a_shell_permission_discarded_elsewhere_is_rejected_with_the_reason(
    started: Any, workspace: Path
) -> None:
    run = started([{"do": "shell", "command": "rm -rf build"}], "--prompt", "do it", "--wait")
    action_id = run.wait_for_waiting()
    result = resolve_elsewhere(workspace, action_id, "discard", "not the build folder")
    assert not result.is_error, result.text
    assert result.text == "Rejected: Run rm -rf build. Reason: not the build folder"
    code, stderr = run.finish()
    assert code == 0, stderr
    heard = run.heard()
    assert {"event": "permission", "call": "call-1", "outcome": "reject"} in heard
    assert "discarded. Reason: not the build folder" in prompts(heard)[1]


def test_a_verified_edit_allowed_elsewhere_then_written_through_fs(
    started: Any, workspace: Path
) -> None:
    new = "def main():\n    print('hello')\n"
    run = started(
        [{"do": "gemini_edit", "path": "app.py", "content": new}], "--prompt", "x", "--wait"
    )
    action_id = run.wait_for_waiting()
    result = resolve_elsewhere(workspace, action_id, "apply", "fine")
    assert not result.is_error, result.text
    code, stderr = run.finish()
    assert code == 0, stderr
    heard = run.heard()
    assert {"event": "permission", "call": "call-1", "outcome": "allow"} in heard
    assert {"event": "write", "path": "app.py", "ok": True} in heard
    assert (workspace / "app.py").read_text() == new
    assert undo_history(workspace)[0].label == "Write: app.py"
    assert WorkspaceQueue(workspace).list() == []


def test_the_pending_command_reaches_the_owner(started: Any, workspace: Path) -> None:
    """`redline pending discard` itself (its own short owner timeout; retried once when a
    loaded machine makes the owner answer late — nothing happens on a timeout)."""
    from tests.drivers.acp_client.test_queue import pending

    run = started([{"do": "shell", "command": "make"}], "--prompt", "do it", "--wait")
    action_id = run.wait_for_waiting()
    proc = pending(workspace, "discard", action_id, "--reason", "no")
    if proc.returncode != 0 and "did not answer" in proc.stderr:
        proc = pending(workspace, "discard", action_id, "--reason", "no")
    assert proc.returncode == 0, proc.stderr
    assert "Rejected: Run make. Reason: no" in proc.stdout
    code, stderr = run.finish()
    assert code == 0, (stderr, run.events, run.heard())
    assert {"event": "permission", "call": "call-1", "outcome": "reject"} in run.heard()


def test_the_dashboard_session_serves_owner_requests_and_remote_writes(
    tmp_path: Path, workspace: Path
) -> None:
    """The dashboard's ACP session (no TUI needed) answers what another process resolves:
    a permission through the owner request, a held write through the queue."""
    import json
    import shlex
    import sys

    from tests.drivers.acp_client.test_exec_agent import AGENT
    from tests.drivers.acp_client.test_queue import pending

    from redline.drivers.acp.session import AcpSession
    from redline.drivers.acp.spec import resolve_agent

    steps = [
        {"do": "shell", "command": "make"},
        {"do": "fs_write", "path": "app.py", "content": "changed\n"},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    record = tmp_path / "record.jsonl"
    command = shlex.join([sys.executable, str(AGENT), str(script), str(record)])
    session = AcpSession(workspace, resolve_agent(command, workspace), log_session=False)

    import threading
    import time

    def first_pending(label: str) -> str:
        # Polled, not waited on a Condition notified from the store's subscriber: that
        # callback runs with the store's lock held, and reading the store while holding
        # the Condition deadlocked against it.
        deadline = time.monotonic() + HANG_GUARD
        while _top(session) != label:
            if time.monotonic() > deadline:  # a hang guard, not a speed check
                raise AssertionError(f"{label} never became pending")
            threading.Event().wait(0.02)
        top = session.store.peek()
        assert top is not None
        return top.id

    with session:
        done = session.start_prompt("go")
        shell = first_pending("Run make")
        result = resolve_elsewhere(workspace, shell, "apply", "ok")
        assert result.text == "Allowed: Run make.", result.text
        write = first_pending("Write: app.py")
        proc = pending(workspace, "discard", write, "--reason", "not yet")
        assert proc.returncode == 0, proc.stderr
        assert done.result(HANG_GUARD) == "done"
    heard = [json.loads(line) for line in record.read_text().splitlines()]
    assert {"event": "permission", "call": "call-1", "outcome": "allow"} in heard
    written = next(h for h in heard if h["event"] == "write")
    assert written["error"] == "Discarded by the reviewer: not yet"
    told = [h["text"] for h in heard if h["event"] == "prompt"][-1]
    assert "Run make: applied. Reason: ok" in told
    assert "Write: app.py: discarded. Reason: not yet" in told


def _top(session: Any) -> str | None:
    top = session.store.peek()
    return top.label if top is not None else None
