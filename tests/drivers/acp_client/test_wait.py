"""`redline exec --agent ... --wait`: the agent keeps running while another process reviews.

Each test runs a real `redline exec` subprocess against the scripted agent, reads its
``--json`` events as they come, and resolves from another process (`redline pending`).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.acp_client.running import prompts
from tests.drivers.acp_client.test_exec_agent import HANG_GUARD, of
from tests.drivers.acp_client.test_queue import pending

from redline.workspace.queue import WorkspaceQueue


def test_a_held_write_applied_elsewhere_is_answered_and_the_run_goes_on(
    started: Any, workspace: Path
) -> None:
    steps = [
        {"do": "fs_write", "path": "app.py", "content": "changed\n"},
        {"do": "text", "text": "after the write"},
    ]
    run = started(steps, "--prompt", "do the task", "--wait")
    action_id = run.wait_for_waiting()
    proc = pending(workspace, "apply", action_id, "--reason", "looks right")
    assert proc.returncode == 0, proc.stderr
    code, stderr = run.finish()
    assert code == 0, stderr
    assert (workspace / "app.py").read_text() == "changed\n"
    heard = run.heard()
    assert {"event": "write", "path": "app.py", "ok": True} in heard
    said = prompts(heard)
    assert len(said) == 2
    assert "Write: app.py: applied. Reason: looks right" in said[1]
    resolved = of(run.events, "pending_resolved")[0]
    assert (resolved["action_id"], resolved["action"], resolved["by"]) == (
        action_id,
        "apply",
        "human",
    )
    assert of(run.events, "agent_end")[-1]["status"] == "done"
    assert WorkspaceQueue(workspace).list() == []


def test_a_held_write_discarded_elsewhere_carries_the_reason(started: Any, workspace: Path) -> None:
    steps = [{"do": "fs_write", "path": "app.py", "content": "changed\n"}]
    run = started(steps, "--prompt", "do the task", "--wait")
    action_id = run.wait_for_waiting()
    proc = pending(workspace, "discard", action_id, "--reason", "keep the greeting")
    assert proc.returncode == 0, proc.stderr
    code, stderr = run.finish()
    assert code == 0, stderr
    assert (workspace / "app.py").read_text() == "def main():\n    print('hi')\n"
    heard = run.heard()
    write = next(h for h in heard if h["event"] == "write")
    assert write["error"] == "Discarded by the reviewer: keep the greeting"
    assert "discarded. Reason: keep the greeting" in prompts(heard)[1]


def test_two_writes_are_waited_for_one_after_the_other(started: Any, workspace: Path) -> None:
    steps = [
        {"do": "fs_write", "path": "app.py", "content": "one\n"},
        {"do": "fs_write", "path": "new.py", "content": "two\n"},
    ]
    run = started(steps, "--prompt", "do the task", "--wait")
    first = run.wait_for_waiting()
    assert pending(workspace, "apply", first).returncode == 0
    run.wait_for("the second write", lambda events: len(of(events, "pending_pushed")) == 2)
    second = of(run.events, "pending_pushed")[1]["action_id"]
    run.wait_for(
        "waiting for the second write",
        lambda events: any(
            e["type"] == "notice" and e["message"].startswith(f"Waiting for review of {second}")
            for e in events
        ),
    )
    assert pending(workspace, "discard", second, "--reason", "not needed").returncode == 0
    code, stderr = run.finish()
    assert code == 0, stderr
    assert (workspace / "app.py").read_text() == "one\n"
    assert not (workspace / "new.py").exists()
    report = prompts(run.heard())[1]
    assert "Write: app.py: applied" in report and "Write: new.py: discarded" in report


def test_ctrl_c_while_waiting_stops_the_agent_and_leaves_the_write_queued(
    started: Any, workspace: Path
) -> None:
    steps = [{"do": "fs_write", "path": "app.py", "content": "changed\n"}]
    run = started(steps, "--prompt", "do the task", "--wait")
    action_id = run.wait_for_waiting()
    run.proc.send_signal(signal.SIGINT)
    code, stderr = run.finish()
    assert code == 3, stderr
    assert of(run.events, "agent_end")[-1]["status"] == "awaiting_review"
    write = next(h for h in run.heard() if h["event"] == "write")
    assert write["error"].startswith("Not written: the agent was stopped")
    (record,) = WorkspaceQueue(workspace).list()
    assert (record.id, record.applied_by) == (action_id, "preview")
    # The record says (to any process, later) that its agent ended and how.
    assert record.details["agent_ended"].startswith(("exited with status", "was killed by"))
    ended = record.details["agent_ended"]
    assert f"  agent:   {ended}" in pending(workspace, "show", action_id).stdout
    assert f"its agent {ended}" in pending(workspace, "list").stdout
    # Applying it later writes what the agent asked for, as without --wait.
    assert pending(workspace, "apply", action_id).returncode == 0
    assert (workspace / "app.py").read_text() == "changed\n"


def test_a_crash_while_waiting_is_an_error_and_says_how_the_agent_ended(
    started: Any, workspace: Path
) -> None:
    steps = [{"do": "write_and_crash", "path": "app.py", "content": "changed\n"}]
    run = started(steps, "--prompt", "do the task", "--wait")
    code, stderr = run.finish()
    assert code == 1, stderr
    (record,) = WorkspaceQueue(workspace).list()
    assert record.details["agent_ended"] == "exited with status 9"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--resolver", "apply-all"), "--wait waits for a person's review"),
        (("--resolver", "discard-all"), "--wait waits for a person's review"),
    ],
)
def test_wait_with_an_automatic_resolver_is_bad_input(
    started: Any, extra: tuple[str, ...], message: str
) -> None:
    run = started([], "--prompt", "x", "--wait", *extra)
    code, stderr = run.finish()
    assert code == 2
    assert message in stderr


def test_wait_without_an_agent_is_bad_input(workspace: Path) -> None:
    argv = [sys.executable, "-m", "redline", "exec", "-C", str(workspace), "--prompt", "x"]
    proc = subprocess.run([*argv, "--wait"], capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 2
    assert "--wait needs --agent AGENT" in proc.stderr


def test_a_write_applied_in_part_elsewhere_tells_the_agent_and_the_rest_stays(
    started: Any, workspace: Path
) -> None:
    lines = [f"line {n}\n" for n in range(1, 31)]
    (workspace / "app.py").write_text("".join(lines))
    changed = list(lines)
    changed[0], changed[29] = "first\n", "last\n"
    steps = [{"do": "fs_write", "path": "app.py", "content": "".join(changed)}]
    run = started(steps, "--prompt", "do the task", "--wait")
    action_id = run.wait_for_waiting()
    proc = pending(workspace, "apply", action_id, "--only", "app.py#1")
    assert proc.returncode == 0, proc.stderr
    code, stderr = run.finish()
    # The rest waits in the queue: the run ends awaiting review.
    assert code == 3, stderr
    assert (workspace / "app.py").read_text().startswith("first\nline 2\n")
    write = next(h for h in run.heard() if h["event"] == "write")
    assert "was resolved in part in another process" in write["error"]
    (rest,) = WorkspaceQueue(workspace).list()
    assert write["error"].endswith(f"the rest waits for review as {rest.id}; read the file again.")
