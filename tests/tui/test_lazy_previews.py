"""A long queue is drawn from its index: the stack's rows come from the records' summaries
and only the shown action's Preview is read (issue 44)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, modify

from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.tui.pending import QueuedCopy, record_facts
from redline.workspace.preview import FileCreate, FileDelete, FileRename, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, QueueRecord, Source, WorkspaceQueue

SIZE = (140, 40)


def queued_session(root: Path) -> tuple[FakeSession, WorkspaceQueue]:
    queue = WorkspaceQueue(root)
    session = FakeSession(cwd=root)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    return session, queue


def push_from_another_process(root: Path, count: int) -> list[str]:
    """``count`` actions queued by a second queue on the folder (another redline process)."""
    other = WorkspaceQueue(root)
    ids = []
    try:
        for index in range(count):
            path = f"src/m{index}.py"
            (root / path).write_text(f"value = {index}\n")
            draft = ActionDraft(
                f"Edit {path}",
                Source.current("exec", "exec", "other-session"),
                source_tool_name="edit",
                preview=Preview([modify(path, f"value = {index}\n", f"value = {index + 1}\n")]),
            )
            ids.append(other.push(draft).id)
    finally:
        other.close()
    return ids


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids whose Preview the queue was asked to read, in order."""
    asked: list[str] = []
    real = WorkspaceQueue.preview

    def counted(self: WorkspaceQueue, record: QueueRecord) -> Preview | None:
        asked.append(record.id)
        return real(self, record)

    monkeypatch.setattr(WorkspaceQueue, "preview", counted)
    return asked


async def test_the_first_frame_reads_only_the_top_actions_preview(
    tmp_path: Path, loads: list[str]
) -> None:
    (tmp_path / "src").mkdir()
    ids = push_from_another_process(tmp_path, 8)
    top = ids[-1]  # the newest is on top
    session, queue = queued_session(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stack.rows) == 8)
            await wait_until(pilot, lambda: app.preview.action is not None)
            # The top action's diff is shown: its Preview was read, and no other.
            assert app.preview.action is not None and app.preview.action.id == top
            assert app.preview.diff_view._change is not None
            assert app.preview.diff_view._change.path == "src/m7.py"
            assert loads == [top]
            # Every row still says its files and lines, from the queue's index.
            rows = {row.action_id: row for row in app.stack.rows}
            for index, action_id in enumerate(ids):
                row = rows[action_id]
                assert row.files == (f"src/m{index}.py",)
                assert (row.added, row.removed) == (1, 1)
            # Moving down shows the next action: its Preview is read then, once.
            await pilot.press("j")
            await wait_until(
                pilot, lambda: app.preview.action is not None and app.preview.action.id == ids[-2]
            )
            assert app.preview.diff_view._change is not None
            assert app.preview.diff_view._change.path == "src/m6.py"
            assert loads == [top, ids[-2]]
            await pilot.press("k")
            await wait_until(
                pilot, lambda: app.preview.action is not None and app.preview.action.id == top
            )
            assert loads == [top, ids[-2]]
            # A refresh of the stack (another push) reads no Preview again.
            newer = push_from_another_process_named(tmp_path, "src/late.py")
            await wait_until(pilot, lambda: app.stack.top_id == newer)
            assert ids[0] not in loads and loads.count(top) == 1
    finally:
        queue.close()


def push_from_another_process_named(root: Path, path: str) -> str:
    (root / path).write_text("late = 1\n")
    other = WorkspaceQueue(root)
    try:
        draft = ActionDraft(
            f"Edit {path}",
            Source.current("mcp", "zed", "z"),
            source_tool_name="edit",
            preview=Preview([modify(path, "late = 1\n", "late = 2\n")]),
        )
        return other.push(draft).id
    finally:
        other.close()


async def test_y_applies_the_top_action_read_when_it_was_listed_lazily(
    tmp_path: Path, loads: list[str]
) -> None:
    (tmp_path / "src").mkdir()
    ids = push_from_another_process(tmp_path, 3)
    session, queue = queued_session(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stack.top_id == ids[-1])
            await pilot.press("y")
            await wait_until(
                pilot, lambda: (tmp_path / "src" / "m2.py").read_text() == "value = 3\n"
            )
            await wait_until(pilot, lambda: app.stack.top_id == ids[-2])
            # The others were never applied.
            assert (tmp_path / "src" / "m1.py").read_text() == "value = 1\n"
            assert (tmp_path / "src" / "m0.py").read_text() == "value = 0\n"
            assert ids[0] not in loads
    finally:
        queue.close()


def test_a_rows_facts_from_the_record_equal_its_previews_summary(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a = 1\nb = 2\n")
    (tmp_path / "gone.py").write_text("x = 1\n")
    (tmp_path / "old.md").write_text("x")
    preview = Preview(
        [
            modify("a.py", "a = 1\nb = 2\n", "a = 10\nb = 2\nc = 3\n"),
            FileCreate("new.py", "one\ntwo\n"),
            FileDelete("gone.py", sha256_bytes(b"x = 1\n"), "x = 1\n"),
            FileRename("old.md", "new.md", sha256_bytes(b"x")),
        ]
    )
    queue = WorkspaceQueue(tmp_path)
    try:
        record = queue.push(ActionDraft("Many kinds", Source.current("exec"), preview=preview))
        summary = preview.summary()
        files = tuple(str(entry["path"]) for entry in summary["files"])
        assert record_facts(record) == (files, summary["added"], summary["removed"])
    finally:
        queue.close()


def test_a_copy_reads_its_preview_once_and_a_given_preview_is_kept() -> None:
    calls: list[int] = []
    preview = Preview([modify("a.py", "a\n", "b\n")])

    def load() -> Preview:
        calls.append(1)
        return preview

    copy = QueuedCopy("Edit a.py", lambda _reason: "done")
    copy.defer(load, (("a.py",), 1, 1))
    assert not copy.loaded and calls == []
    assert copy.preview is preview and copy.preview is preview
    assert copy.loaded and calls == [1]
    given = QueuedCopy("Edit b.py", lambda _reason: "done", preview=preview)
    assert given.loaded and given.preview is preview
