"""A long queue's first frame shows its top action's diff before the rest is listed, and
the arrival notices take their baseline from the whole list, not from that first frame
(issue 44)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher
from tests.tui.test_lazy_previews import SIZE, push_from_another_process, queued_session
from tests.tui.test_notify_arrivals import iterm, record_terminal  # noqa: F401
from textual import events

from redline.tui.app import RedlineApp
from redline.tui.pending import PendingList
from redline.tui.screens import inbox_first
from redline.workspace.queue import WorkspaceQueue, index


@pytest.fixture
def long_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight actions count as a long queue; every record file counts as settled."""
    monkeypatch.setattr(inbox_first, "LONG_QUEUE", 5)
    monkeypatch.setattr(index, "SETTLE_NS", -(10**15))
    monkeypatch.setattr(index, "PERSIST_AFTER", 1)


@pytest.fixture
def held_read(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The whole list is read only once the test sets the event (on the worker thread)."""
    release = threading.Event()
    real = PendingList.read

    def held(self: PendingList) -> object:
        if threading.current_thread() is not threading.main_thread():
            assert release.wait(30)
        return real(self)

    monkeypatch.setattr(PendingList, "read", held)
    return release


async def test_the_top_first_then_the_rest_without_ringing_for_it(
    tmp_path: Path, long_queue: None, held_read: threading.Event
) -> None:
    (tmp_path / "src").mkdir()
    ids = push_from_another_process(tmp_path, 8)
    with WorkspaceQueue(tmp_path) as lister:  # an earlier listing wrote the index
        lister.list()
    session, queue = queued_session(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    written: list[str] = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            record_terminal(app, written)
            await wait_until(pilot, lambda: app.preview.action is not None)
            # The first frame: the top action and its diff, the rest not listed yet.
            assert app.inbox.reading
            assert [row.action_id for row in app.stack.rows] == [ids[-1]]
            assert app.preview.action is not None and app.preview.action.id == ids[-1]
            assert app.preview.diff_view._change is not None
            assert app.preview.diff_view._change.path == "src/m7.py"
            app.post_message(events.AppBlur())
            await wait_until(pilot, lambda: not app.dashboard_in_front)
            held_read.set()
            await wait_until(pilot, lambda: len(app.stack.rows) == 8)
            assert not app.inbox.reading
            assert [row.action_id for row in app.stack.rows] == ids[::-1]
            await pilot.pause()
            assert written == []  # the other seven were there before: no arrivals
            # One that arrives later rings, alone.
            (tmp_path / "src" / "n.py").write_text("n = 1\n")
            other = WorkspaceQueue(tmp_path)
            try:
                from tests.tui.fakes import modify

                from redline.workspace.preview import Preview
                from redline.workspace.queue import ActionDraft, Source

                new = other.push(
                    ActionDraft(
                        "Edit src/n.py",
                        Source.current("exec", "exec", "other-session"),
                        source_tool_name="edit",
                        preview=Preview([modify("src/n.py", "n = 1\n", "n = 2\n")]),
                    )
                ).id
            finally:
                other.close()
            FakeWatcher.instances[-1].fire(f"actions/{new}.json")
            await wait_until(pilot, lambda: bool(written))
            assert len(written) == 1 and new in written[0]
            await wait_until(pilot, lambda: len(app.stack.rows) == 9)
            await pilot.pause()  # the watcher's re-read done before the app closes
    finally:
        queue.close()


async def test_a_short_queue_is_listed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index, "SETTLE_NS", -(10**15))
    (tmp_path / "src").mkdir()
    push_from_another_process(tmp_path, 3)
    with WorkspaceQueue(tmp_path) as lister:
        lister.list()
    session, queue = queued_session(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.preview.action is not None)
            assert len(app.stack.rows) == 3 and not app.inbox.reading
    finally:
        queue.close()
