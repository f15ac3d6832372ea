"""The workspace dashboard (``redline``) is the inbox screen over its workspace as a review
source (issue 43): ``review.workspace_source.WorkspaceSource`` over the session lists the
session's own actions (queued or not) and every other process's as listed actions, and
each decision goes through it to the session's ``decide`` (the one decision path)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action, modify
from tests.tui.test_lazy_previews import queued_session

from redline.review.session import Decision
from redline.review.source import ListedAction
from redline.review.workspace_source import WorkspaceSource
from redline.tui.app import RedlineApp
from redline.workspace.preview import Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

SIZE = (140, 40)


@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids decided through a workspace source's ``resolve``, in order."""
    seen: list[str] = []
    real = WorkspaceSource.resolve

    def counted(self: WorkspaceSource, action_id: str, decision: Decision) -> object:
        seen.append(action_id)
        return real(self, action_id, decision)

    monkeypatch.setattr(WorkspaceSource, "resolve", counted)
    return seen


def queue_elsewhere(root: Path, path: str) -> str:
    """An action queued by another process (a second queue on the folder)."""
    (root / path).write_text("x = 1\n")
    other = WorkspaceQueue(root)
    try:
        draft = ActionDraft(
            f"Edit {path}",
            Source.current("mcp", "zed", "z"),
            source_tool_name="edit",
            preview=Preview([modify(path, "x = 1\n", "x = 2\n")]),
        )
        return other.push(draft).id
    finally:
        other.close()


async def test_rows_are_the_sources_listed_actions_and_y_decides_through_it(
    tmp_path: Path, resolved: list[str]
) -> None:
    theirs = queue_elsewhere(tmp_path, "theirs.py")
    session, queue = queued_session(tmp_path)
    (tmp_path / "mine.py").write_text("a = 1\n")
    mine = session.store.push(make_action("Edit mine.py", path="mine.py"))
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stack.rows) == 2)
            source = app.inbox.workspace_source
            assert isinstance(source, WorkspaceSource) and source.session is session
            assert app.inbox.review_source is source
            rows = [app.inbox.pending.row(row.action_id) for row in app.stack.rows]
            assert all(isinstance(row, ListedAction) for row in rows)
            assert [row.id for row in rows if row is not None] == [mine.id, theirs]
            assert [row.source for row in rows if row is not None] == ["agent", "mcp:zed"]
            # The other process's action, selected and applied with y: through the source.
            assert app.stack.select_id(theirs)
            await wait_until(pilot, lambda: app.preview.shown_id == theirs)
            await pilot.press("y")
            await wait_until(pilot, lambda: (tmp_path / "theirs.py").read_text() == "x = 2\n")
            await wait_until(pilot, lambda: [r.action_id for r in app.stack.rows] == [mine.id])
            assert resolved == [theirs]
            # The session's own: through the source too, to the session's decide.
            await pilot.press("n")
            await wait_until(pilot, lambda: not app.stack.rows)
            assert resolved == [theirs, mine.id]
            assert session.resolutions[-1][:3] == ("discard", "no reason given", mine.id)
    finally:
        queue.close()


async def test_a_session_without_a_queue_lists_its_own_actions_through_the_source(
    resolved: list[str],
) -> None:
    session = FakeSession()
    first = session.store.push(make_action("first"))
    second = session.store.push(make_action("second", path="src/b.py"))
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        source = app.inbox.workspace_source
        assert source.queue is None and source.session is session
        row = app.inbox.pending.row(second.id)
        assert row is not None and row.facts == (("src/b.py",), 1, 1)
        assert app.stack.top_id == second.id
        await pilot.press("y")
        await wait_until(pilot, lambda: [r.action_id for r in app.stack.rows] == [first.id])
        assert resolved == [second.id]


async def test_apply_all_decides_each_of_the_sessions_actions_through_the_source(
    resolved: list[str],
) -> None:
    applied: list[str] = []
    session = FakeSession()
    ids = [
        session.store.push(make_action(label, path=f"src/{label}.py", applied=applied)).id
        for label in ("a", "b")
    ]
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        app.inbox.action_apply_all()
        await wait_until(pilot, lambda: not app.inbox.busy and not session.store.has_pending)
        assert applied == ["b", "a"] and resolved == ids[::-1]
