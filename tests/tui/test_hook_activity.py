"""The activity pane follows the agents' hook calls (``redline hook`` in their processes)."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher
from tests.tui.test_review_queue import SIZE, queued_session

from redline.drivers.hooks.activity import record
from redline.drivers.hooks.payload import HookPayload
from redline.tui.app import RedlineApp


def hook_payload(agent: str, session: str, tool: str, path: str) -> HookPayload:
    return HookPayload(agent, "PreToolUse", tool, {"file_path": path}, session, "/ws", "call-1")


async def test_the_activity_pane_shows_a_hook_calls_lifecycle(tmp_path: Path) -> None:
    session, queue = queued_session(tmp_path)
    # From before the dashboard opened: not shown (the pane follows calls from now on).
    old = hook_payload("claude", "old-session", "Write", "/ws/old.py")
    record(tmp_path, old, "asked", target="old.py")
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            claude = hook_payload("claude", "abcdef0123456789", "Write", "/ws/src/x.py")
            gemini = hook_payload("gemini", "g-1", "write_file", "/ws/b.txt")
            # What the hook processes append while the dashboard runs.
            record(tmp_path, claude, "asked", target="src/x.py")
            record(tmp_path, claude, "waiting", target="src/x.py", action="pa-3")
            record(tmp_path, gemini, "waiting", target="b.txt", action="pa-4")
            await wait_until(pilot, lambda: "waiting as pa-4" in app.activity.plain)
            record(tmp_path, claude, "answered", target="src/x.py", answer="allow", action="pa-3")
            record(tmp_path, claude, "written", target="src/x.py", action="pa-3", as_approved=True)
            record(
                tmp_path,
                gemini,
                "answered",
                target="b.txt",
                answer="deny",
                reason="Discarded by the reviewer: use the helper",
                action="pa-4",
            )
            await wait_until(pilot, lambda: "use the helper" in app.activity.plain)
            lines = [line for line in app.activity.plain.splitlines() if "‹hook:" in line]
            assert lines == [
                "‹hook:claude› session abcdef01…: Write src/x.py → asks for review",
                "‹hook:claude› session abcdef01…: Write src/x.py → waiting as pa-3",
                "‹hook:gemini› session g-1: write_file b.txt → waiting as pa-4",
                "‹hook:claude› session abcdef01…: Write src/x.py → allowed (pa-3)",
                "‹hook:claude› session abcdef01…: Write src/x.py → written as approved (pa-3); "
                "`redline undo` reverts it",
                "‹hook:gemini› session g-1: write_file b.txt → denied (pa-4): "
                "Discarded by the reviewer: use the helper",
            ]
            assert "old.py" not in app.activity.plain
    finally:
        queue.close()


async def test_a_different_write_shows_its_diff_and_bad_lines_are_counted(
    tmp_path: Path,
) -> None:
    session, queue = queued_session(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            claude = hook_payload("claude", "s-1", "Edit", "/ws/a.txt")
            log = tmp_path / ".redline" / "hooks" / "activity.jsonl"
            with open(log, "ab") as handle:
                handle.write(b"{broken\n[]\n")
            record(
                tmp_path,
                claude,
                "written",
                target="a.txt",
                action="pa-1",
                as_approved=False,
                diff="--- a/a.txt\n+++ b/a.txt\n-hello\n+something else",
            )
            await wait_until(pilot, lambda: "something other" in app.activity.plain)
            assert "ℹ hook activity log: 2 unreadable lines skipped" in app.activity.plain
            assert "+something else" not in app.activity.plain  # behind the line
            app.activity.focus()
            await pilot.pause()
            for _ in range(5):  # the cursor starts on the newest entry; the diff is near it
                if app.activity.expandable:
                    break
                await pilot.press("up")
            await pilot.press("enter")
            await wait_until(pilot, lambda: any("+something else" in row for row in rows(app)))
    finally:
        queue.close()


def rows(app: RedlineApp) -> list[str]:
    return app.activity.search_rows()
