"""Issue 47 through ACP (`redline exec --agent --wait` with the scripted agent): the
reviewer's comments reach the agent in the follow-up prompt, and the agent's next write of
the file in its session is revision 2 of the discarded one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.drivers.acp_client.running import prompts
from tests.drivers.acp_client.test_queue import pending


def test_comment_discard_then_the_next_write_is_revision_2(started: Any, workspace: Path) -> None:
    steps = [
        {"do": "fs_write", "path": "app.py", "content": "def main():\n    print('hey')\n"},
        {"do": "fs_write", "path": "app.py", "content": "def main():\n    print('hello')\n"},
    ]
    run = started(steps, "--prompt", "greet", "--wait")
    first = run.wait_for_waiting()
    assert pending(workspace, "comment", first, "app.py:2", "say hello").returncode == 0
    proc = pending(workspace, "discard", first, "--reason", "warmer")
    assert proc.returncode == 0, proc.stderr

    def second_waiting(events: list[dict[str, Any]]) -> bool:
        return sum(e["type"] == "pending_pushed" for e in events) == 2 and any(
            e["type"] == "notice" and e["message"].startswith("Waiting for review of pa-2")
            for e in events
        )

    run.wait_for("the second write", second_waiting)
    shown = pending(workspace, "show", "pa-2", "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert (data["revision"]["number"], data["revision"]["of"]) == (2, first)
    assert "-    print('hey')\n+    print('hello')\n" in data["revision"]["interdiff"]
    assert [(c["text"], c["outdated"]) for c in data["comments"]] == [("say hello", True)]
    proc = pending(workspace, "apply", "pa-2")
    assert proc.returncode == 0, proc.stderr
    code, stderr = run.finish()
    assert code == 0, stderr
    said = prompts(run.heard())[1]
    assert "discarded. Reason: warmer\napp.py:2: say hello" in said
    assert (
        "applied. Reason: no reason given\napplied; reviewer notes:\napp.py:2 (outdated): say hello"
        in said
    )
