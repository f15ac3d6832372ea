"""The dashboard over the workspace queue: actions of other processes appear and resolve."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action, modify

from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.workspace.preview import Preview
from redline.workspace.queue import (
    ORPHANED_REASON,
    ActionDraft,
    Resolution,
    Source,
    WorkspaceQueue,
)

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
            assert row.source == "edit" and row.origin == "exec"
            assert row.files == ("src/app.py",)
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


async def test_badges_counts_and_the_filter_follow_each_actions_source(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "src" / f"{name}.py").write_text("a = 1\n")
    session, _queue = queued_session(tmp_path)
    # This dashboard drives an ACP agent; two other processes queue actions too.
    session.store.source = Source.current("acp", "gemini", "dashboard")
    session.push(make_action("Edit a", path="src/a.py", old="a = 1\n"))
    other = WorkspaceQueue(tmp_path)
    pushed = {}
    for source, name in ((Source.current("mcp", "zed", "z"), "b"), (Source.current("exec"), "c")):
        pushed[source.canonical] = other.push(
            ActionDraft(
                f"Edit {name}",
                source,
                source_tool_name="edit",
                preview=Preview([modify(f"src/{name}.py", "a = 1\n", "a = 2\n")]),
            )
        ).id
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stack.rows) == 3)
            origins = {row.label: row.origin for row in app.stack.rows}
            assert origins == {"Edit a": "acp:gemini", "Edit b": "mcp:zed", "Edit c": "exec"}
            shown = "\n".join(app.stack.render_line(y).text for y in range(6))
            for badge in ("‹acp:gemini›", "‹mcp:zed›", "‹exec›"):
                assert badge in shown
            assert "‹agent›" not in shown
            # The title counts what is listed (not only this session's), like the status line.
            assert app.inbox.query_one("#stack-panel").border_title == "Pending (3)"
            line = app.status_line.render().plain
            assert "3 pending" in line
            for badge in ("acp:gemini 1", "mcp:zed 1", "exec 1"):
                assert badge in line
            # The detail pane names the source of the selected action.
            app.stack.cursor = [row.label for row in app.stack.rows].index("Edit b")
            await wait_until(pilot, lambda: app.preview.action is not None)
            await wait_until(pilot, lambda: app.preview.action.label == "Edit b")  # type: ignore[union-attr]
            header = str(app.preview.query_one("#preview-header").render())
            assert "‹mcp:zed›" in header
            # f cycles through the sources there are, then shows every one again.
            app.stack.focus()
            seen = []
            for _ in range(4):
                await pilot.press("f")
                await pilot.pause()
                seen.append(app.stack.source_filter)
                if app.stack.source_filter is not None:
                    assert {row.origin for row in app.stack.rows} == {app.stack.source_filter}
                    title = app.inbox.query_one("#stack-panel").border_title
                    assert title == f"Pending (1 of 3, {app.stack.source_filter})"
            assert sorted(filter(None, seen)) == ["acp:gemini", "exec", "mcp:zed"]
            assert seen[-1] is None
            # Another process discards zed's action: the activity says who decided, and how.
            with other.claim(pushed["mcp:zed"]) as claim:
                claim.finish(Resolution(pushed["mcp:zed"], "discard", "not now", "person"))
            await wait_until(pilot, lambda: len(app.stack.rows) == 2)
            await wait_until(pilot, lambda: "DISCARDED" in app.activity.plain)
            logged = app.activity.plain
            assert f"{pushed['mcp:zed']} Edit b" in logged and "‹mcp:zed›" in logged
            assert "by human" in logged and "not now" in logged
            assert app.inbox.query_one("#stack-panel").border_title == "Pending (2)"
    finally:
        other.close()


async def test_the_stack_is_read_once_per_resolution_not_per_queue_change(tmp_path: Path) -> None:
    """Issue 29: with 10,000 queued actions each re-read of the stack lists them all, so
    the queue's own file changes during a resolution must not each re-read it."""
    import threading

    from redline.workspace.queue import claims

    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("a = 1\n")
    session, queue = queued_session(tmp_path)
    other = WorkspaceQueue(tmp_path)
    for name in ("a.py", "b.py"):
        other.push(
            ActionDraft(
                f"Edit {name}",
                Source.current("exec", "exec", "other-session"),
                source_tool_name="edit",
                preview=Preview([modify(name, "a = 1\n", "a = 2\n")]),
            )
        )
    other.close()
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    reads: list[str] = []
    handled = threading.Event()
    during: list[int] = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stack.rows) == 2)
            inbox = app.inbox
            read, refresh = inbox.pending.read_after, inbox.refresh_stack

            def counting_read(gone: object) -> tuple[object, ...]:
                reads.append(threading.current_thread().name)
                return read(gone)  # type: ignore[arg-type]

            def noting_refresh() -> None:
                refresh()
                handled.set()

            inbox.pending.read_after = counting_read  # type: ignore[method-assign]
            inbox.refresh_stack = noting_refresh  # type: ignore[method-assign]

            def step(text: str) -> None:
                # Mid-resolution the queue changed (the record went "applying"): the
                # follower reports it, as it would for a real watcher, and it is handled.
                if text == "apply: marked applying":
                    handled.clear()
                    app.bridge.on_store_event(None)
                    assert handled.wait(30)
                    during.append(len(reads))

            claims._step_hook = step
            await pilot.press("y")
            await wait_until(pilot, lambda: len(app.stack.rows) == 1 and not inbox.busy)
            assert during == [0]  # not re-read while the action was being resolved
            assert reads  # but once it was done (and again whenever the queue's watcher says)
            assert app.stack.rows[0].label == "Edit a.py"
            assert (tmp_path / "b.py").read_text() == "a = 2\n"
    finally:
        claims._step_hook = None
        queue.close()
