"""The dashboard's review conversation (issue 47): `m` on an action queued by another
process, comments added and deleted on the cursor's line, "Request changes", a revision's
interdiff and the switch to the full diff for hunks, viewed marks; snapshots at 160×48 and
80×24."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher

from redline.review.comments import Target, add_comment, stored
from redline.tui.app import RedlineApp
from redline.tui.screens.conversation import INTERDIFF_HUNKS, ConversationScreen
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

LINES = [f"line {n}\n" for n in range(1, 15)]
BASE = "".join(LINES)
FIRST = BASE.replace("line 2\n", "LINE 2\n").replace("line 13\n", "LINE 13\n")
SECOND = BASE.replace("line 2\n", "Line two\n").replace("line 13\n", "LINE 13\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "a.txt").write_text(BASE, encoding="utf-8")
    (ws / "b.txt").write_text("one\n", encoding="utf-8")
    return ws


@pytest.fixture
def session(root: Path) -> Iterator[Any]:
    from redline.drivers.model.providers.unconfigured import UnconfiguredProvider
    from redline.sdk import create_agent_session

    made = create_agent_session(
        root, UnconfiguredProvider("no model"), resolver="human", log_session=False
    )
    yield made
    made.close()


def draft(new: str, *, b: str | None = None) -> ActionDraft:
    changes = [FileModify("a.txt", sha256_bytes(BASE.encode()), BASE, new)]
    if b is not None:
        changes.append(FileModify("b.txt", sha256_bytes(b"one\n"), "one\n", b))
    return ActionDraft(
        label="Edit a.txt",
        source=Source.current("exec", "agent", "other-session"),
        source_tool_name="edit",
        preview=Preview(changes),
    )


async def revision(root: Path) -> str:
    """pa-1 commented on and discarded elsewhere; pa-2 is the agent's revision 2."""
    from redline.review.queued import resolve_queued

    with WorkspaceQueue(root) as queue:
        first = queue.push(draft(FIRST, b="uno\n"))
        add_comment(queue, first.id, Target("a.txt", 2), "spell it out")
        add_comment(queue, first.id, Target("a.txt", 13), "good")
        assert not (await resolve_queued(queue, first.id, "discard", "rename")).is_error
        second = queue.push(draft(SECOND, b="uno\n"))
        assert second.revision == 2
        return second.id


def app_for(session: Any) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)


def screen(app: RedlineApp) -> ConversationScreen:
    found = app.screen
    assert isinstance(found, ConversationScreen)
    return found


def shown(app: RedlineApp) -> list[str]:
    options = screen(app).options
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def notified(app: RedlineApp, words: str) -> bool:
    return any(words in str(note.message) for note in app._notifications)


async def test_add_and_delete_a_comment_then_request_changes(root: Path, session: Any) -> None:
    with WorkspaceQueue(root) as queue:
        record = queue.push(draft(FIRST))
    app = app_for(session)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == record.id)
        assert app.inbox._bindings.key_to_bindings["n"][0].description == "Discard"
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        rows = shown(app)
        cursor = next(i for i, row in enumerate(rows) if "+LINE 2" in row)
        screen(app).options.highlighted = cursor
        await pilot.press("a", *"say why", "enter")
        with WorkspaceQueue(root) as queue:
            await wait_until(pilot, lambda: len(stored(queue, record.id)) == 1)
            [comment] = stored(queue, record.id)
        assert (comment["line"], comment["side"], comment["text"]) == (2, "new", "say why")
        await wait_until(pilot, lambda: any("c-1 line 2: say why" in r for r in shown(app)))
        rows = shown(app)
        assert "c-1 line 2" in rows[cursor + 1]  # right under its line
        assert app.screen._bindings.key_to_bindings["n"][0].description == "Request changes"
        # x on the line deletes its comment.
        screen(app).options.highlighted = cursor
        await pilot.press("x")
        with WorkspaceQueue(root) as queue:
            await wait_until(pilot, lambda: stored(queue, record.id) == [])
        # A comment on a removed line (the current text), then request changes.
        rows = shown(app)
        screen(app).options.highlighted = next(i for i, r in enumerate(rows) if "-line 13" in r)
        await pilot.press("a", *"keep", "enter")
        await wait_until(pilot, lambda: any("c-2 line 13 (current text)" in r for r in shown(app)))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConversationScreen))
        await wait_until(
            pilot,
            lambda: app.inbox._bindings.key_to_bindings["n"][0].description == "Request changes",
        )
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        await pilot.press("n")
        with WorkspaceQueue(root) as queue:
            await wait_until(pilot, lambda: queue.resolution(record.id) is not None)
            resolution = queue.resolution(record.id)
    assert resolution is not None and resolution.decision == "discard"
    assert "a.txt:-13: keep" in resolution.result_text


async def test_a_revision_opens_on_its_interdiff_and_hunks_switch_to_the_full_diff(
    root: Path, session: Any
) -> None:
    action_id = await revision(root)
    app = app_for(session)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == action_id)
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        title = str(app.screen.query_one("#conversation-title").render())
        assert "revision 2: since revision 1 (pa-1)" in title
        rows = shown(app)
        assert any("-LINE 2" in r for r in rows) and any("+Line two" in r for r in rows)
        assert not any("LINE 13" in r and r.lstrip()[:1] in "+-" for r in rows)
        assert any("c-1 line 2 outdated: spell it out" in r for r in rows)
        assert any("c-2 line 13: good" in r for r in rows), rows
        await pilot.press("right_curly_bracket")
        await wait_until(pilot, lambda: notified(app, INTERDIFF_HUNKS))
        assert screen(app).mode == "full"
        assert any("+LINE 13" in r for r in shown(app))
        await pilot.press("t")
        assert screen(app).mode == "interdiff"
        # b.txt did not change between the revisions.
        await pilot.press("right_square_bracket")
        assert any("no change since the previous revision" in r for r in shown(app))


async def test_viewed_marks_dim_the_file_and_jump_to_the_next_unviewed(
    root: Path, session: Any
) -> None:
    with WorkspaceQueue(root) as queue:
        record = queue.push(draft(FIRST, b="uno\n"))
    app = app_for(session)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == record.id)
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        await pilot.press("v")
        await wait_until(pilot, lambda: notified(app, "a.txt viewed; next unviewed: b.txt"))
        assert screen(app).file_index == 1
        title = str(app.screen.query_one("#conversation-title").render())
        assert "a.txt ✓" in title and "b.txt ✓" not in title
        await pilot.press("v")
        await wait_until(pilot, lambda: notified(app, "every file of"))
    with WorkspaceQueue(root) as queue:
        from redline.review.viewed import viewed_files

        found = queue.get(record.id)
        assert found is not None
        assert viewed_files(queue, record.id, queue.preview(found)) == {
            "a.txt": True,
            "b.txt": True,
        }


@pytest.mark.parametrize("size", [(160, 48), (80, 24)], ids=["160x48", "80x24"])
def test_conversation_look(
    snap_compare: Any, root: Path, session: Any, size: tuple[int, int]
) -> None:
    action_id = asyncio.run(revision(root))

    async def opened(pilot: Any) -> None:
        app = pilot.app
        await wait_until(pilot, lambda: app.stack.selected_id == action_id)
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        await pilot.pause()

    assert snap_compare(app_for(session), terminal_size=size, run_before=opened)
