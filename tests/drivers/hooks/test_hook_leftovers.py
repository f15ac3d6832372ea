"""A hook call's push settles no crash leftovers; the next reader of the queue does.

A hook process opens its queue without the crash recovery (``reconcile=False``): its own
new record cannot be a leftover, and the recovery reads every record (O(pending) per call).
What a crash left behind (a decision logged but not finished, a killed writer's temporary
file) stays until the next reader — a dashboard, ``redline pending list``, any claim —
settles it, as it did before; nothing the hook queues depends on it (docs/queue.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.drivers.hooks.test_claude_mapping import recorded

from redline.review.result import ToolResult
from redline.review.store import PendingAction, PendingActionStore
from redline.workspace.queue import Source, WorkspaceQueue
from redline.workspace.queue.records import Resolution


def _leftovers(ws: Path) -> Path:
    """pa-1's decision logged by an owner that stopped before finishing it, and a killed
    writer's temporary file in the actions folder; the temporary file's path."""
    queue = WorkspaceQueue(ws)
    store = PendingActionStore(queue=queue, source=Source.current("agent", "test agent", "s1"))
    store.push(PendingAction(label="Custom step", apply=lambda _r: ToolResult.text_result("x")))
    with queue.claim("pa-1") as claim:
        claim.log(Resolution("pa-1", "discard", "by the owner"))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    temporary = ws / ".redline" / "queue" / "actions" / f".pa-9.json.{dead}.00ff.tmp"
    temporary.write_text("half", encoding="utf-8")
    return temporary


def _hook_queues(ws: Path, config: Path) -> None:
    """A `redline hook claude` process queues a Write and hands it over at once."""
    (config / "config.toml").write_text("[hooks]\nwait_seconds = 0.01\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "redline", "hook", "claude"],
        input=recorded("pre-write.json", ws),
        capture_output=True,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert "still pending review in redline as pa-2" in done.stdout.decode()


def test_a_hook_push_leaves_crash_leftovers_and_the_next_listing_settles_them(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    temporary = _leftovers(ws)
    record = ws / ".redline" / "queue" / "actions" / "pa-1.json"
    _hook_queues(ws, isolated_user_config)
    assert record.exists() and temporary.exists()  # the hook settled nothing
    queue = WorkspaceQueue(ws)
    assert [r.id for r in queue.list()] == ["pa-2"]  # the reader's reconcile finished pa-1
    assert not record.exists() and not temporary.exists()
    assert 1 in queue._used()
    resolution = queue.resolution("pa-1")
    assert resolution is not None and resolution.decision == "discard"


def test_pending_list_in_another_process_settles_what_a_hook_left(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    temporary = _leftovers(ws)
    _hook_queues(ws, isolated_user_config)
    listed = subprocess.run(
        [sys.executable, "-m", "redline", "-C", str(ws), "pending", "list"],
        capture_output=True,
        check=False,
        text=True,
        env=dict(os.environ),
    )
    assert listed.returncode == 0, listed.stderr
    assert "pa-2" in listed.stdout and "pa-1" not in listed.stdout
    assert not (ws / ".redline" / "queue" / "actions" / "pa-1.json").exists()
    assert not temporary.exists()
    resolution = WorkspaceQueue(ws).resolution("pa-1")
    assert resolution is not None and resolution.decision == "discard"
