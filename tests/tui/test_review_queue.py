"""The dashboard over the workspace queue: actions of other processes appear and resolve."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, modify

from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.workspace.preview import Preview
from redline.workspace.queue import ORPHANED_REASON, ActionDraft, Source, WorkspaceQueue

SIZE = (140, 40)


def queued_session(root: Path) -> tuple[FakeSession, WorkspaceQueue]:
    queue = WorkspaceQueue(root)
    session = FakeSession(cwd=root)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    return session, queue


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def test_a_push_by_another_process_appears_and_applies(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\n")
    session, queue = queued_session(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            assert app.stack.rows == []
            # A second queue on the same folder stands in for another redline process.
            other = WorkspaceQueue(tmp_path)
            record = other.push(
                ActionDraft(
                    "Edit src/app.py",
                    Source.current("exec", "exec", "other-session"),
                    source_tool_name="edit",
                    preview=Preview([modify("src/app.py", "a = 1\n", "a = 2\n")]),
                )
            )
            other.close()
            await wait_until(pilot, lambda: app.stack.top_id == record.id)
            row = app.stack.rows[0]
            assert row.source == "edit · exec" and row.files == ("src/app.py",)
            assert app.preview.action is not None and app.preview.action.id == record.id
            await pilot.press("y")
            await wait_until(pilot, lambda: (tmp_path / "src" / "app.py").read_text() == "a = 2\n")
            await wait_until(pilot, lambda: app.stack.rows == [])
            resolution = queue.resolution(record.id)
            assert resolution is not None and resolution.decision == "apply"
    finally:
        queue.close()


async def test_an_orphaned_action_is_marked_and_can_only_be_discarded(tmp_path: Path) -> None:
    session, queue = queued_session(tmp_path)
    gone = Source("exec", "custom tool run", "old-session", dead_pid(), None)
    record = queue.push(ActionDraft("Run the migration", gone, details={"command": "migrate"}))
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stack.top_id == record.id)
            row = app.stack.rows[0]
            assert row.stale and row.stale_reason == ORPHANED_REASON
            await pilot.press("y")
            await wait_until(
                pilot,
                lambda: any(ORPHANED_REASON in str(note.message) for note in app._notifications),
            )
            assert queue.get(record.id) is not None
            await pilot.press("n")
            await wait_until(pilot, lambda: app.stack.rows == [])
            resolution = queue.resolution(record.id)
            assert resolution is not None and resolution.decision == "discard"
    finally:
        queue.close()
