"""`exec --agent`'s actions live in the workspace queue: they outlive the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.acp_client.test_exec_agent import HANG_GUARD, of, run_exec

from redline.workspace.journal import undo_history


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    print('hi')\n")
    return root


def pending(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "redline", "pending", "-C", str(workspace), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=HANG_GUARD)


def listed(workspace: Path) -> list[dict[str, Any]]:
    proc = pending(workspace, "list", "--json")
    assert proc.returncode == 0, proc.stderr
    actions: list[dict[str, Any]] = json.loads(proc.stdout)["actions"]
    return actions


def test_a_held_write_stays_queued_and_applies_later(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "fs_write", "path": "app.py", "content": "changed\n"}]
    code, events, _, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    (action,) = listed(workspace)
    assert action["id"] == of(events, "pending_pushed")[0]["action_id"]
    assert (action["label"], action["applied_by"], action["orphaned"]) == (
        "Write: app.py",
        "preview",
        False,
    )
    assert action["source"]["kind"] == "acp"
    # The agent as the run names it ("python via ACP"), once.
    assert action["source"]["name"] == of(events, "agent_start")[0]["model"]
    assert action["source"]["session_id"] == of(events, "agent_start")[0]["session_id"]
    # Another process applies it through safe apply (journalled: undo reverts it).
    proc = pending(workspace, "apply", action["id"], "--reason", "fine")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "app.py").read_text() == "changed\n"
    assert undo_history(workspace)[0].label == "Write: app.py"
    assert listed(workspace) == []


def test_a_verified_diff_stays_queued_as_a_preview_action(tmp_path: Path, workspace: Path) -> None:
    new = "def main():\n    print('hello')\n"
    steps = [{"do": "gemini_edit", "path": "app.py", "content": new}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    assert {"event": "permission", "call": "call-1", "outcome": "cancelled"} in heard
    (action,) = listed(workspace)
    assert (action["label"], action["applied_by"]) == ("Edit app.py", "preview")
    replaced = of(events, "pending_replaced")[0]
    assert replaced["action_id"] == action["id"]
    proc = pending(workspace, "apply", action["id"])
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "app.py").read_text() == new


def test_a_permission_without_a_diff_ends_with_the_agent(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "shell", "command": "make"}]
    code, events, _, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    assert of(events, "pending_pushed")[0]["label"] == "Run make"
    assert listed(workspace) == []
