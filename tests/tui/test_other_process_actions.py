"""The dashboard decides another process's actions exactly as its own (issue 42).

Each action here is queued by a second, real process: ``redline pending import`` or
``redline hook claude`` on a recorded payload, run with ``python -m redline``. The
dashboard runs over the real session (``create_agent_session``), as ``redline`` opens it.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher
from textual.widgets import TextArea

from redline.tui.app import RedlineApp
from redline.tui.screens.editor import EditorScreen
from redline.workspace.queue import ActionDraft, QueueRecord, Source, WorkspaceQueue

SIZE = (150, 45)
LINES = [f"line {n}\n" for n in range(1, 15)]
BASE = "".join(LINES)
NEW = BASE.replace("line 2\n", "LINE 2\n").replace("line 13\n", "LINE 13\n")
FIRST_ONLY = BASE.replace("line 2\n", "LINE 2\n")
SECOND_ONLY = BASE.replace("line 13\n", "LINE 13\n")


def redline(root: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """``redline -C ROOT ARGS`` in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "redline", "-C", str(root), *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "a.txt").write_text(BASE, encoding="utf-8")
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


def import_change(root: Path, new: str = NEW) -> None:
    patch = root.parent / "change.patch"
    diff = difflib.unified_diff(
        BASE.splitlines(keepends=True), new.splitlines(keepends=True), "a/a.txt", "b/a.txt"
    )
    patch.write_text("".join(diff), encoding="utf-8")
    done = redline(root, "pending", "import", str(patch))
    assert done.returncode == 0, done.stderr


def pending(root: Path) -> list[QueueRecord]:
    with WorkspaceQueue(root) as queue:
        return queue.list()


def text(root: Path) -> str:
    return (root / "a.txt").read_text(encoding="utf-8")


def notified(app: RedlineApp, words: str) -> bool:
    return any(words in str(note.message) for note in app._notifications)


def app_for(session: Any) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)


async def pick_first_hunk(pilot: Any, app: RedlineApp) -> None:
    await pilot.press("right_curly_bracket", "space")
    await wait_until(pilot, lambda: app.inbox.controls.picked == 1)


async def test_y_with_a_picked_hunk_applies_only_that_hunk(root: Path, session: Any) -> None:
    import_change(root)
    [record] = pending(root)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == record.id)
        await wait_until(pilot, lambda: app.inbox.controls.parts == 2)
        await pick_first_hunk(pilot, app)
        assert app.inbox._bindings.key_to_bindings["y"][0].description == "Apply 1/2 hunks"
        await pilot.press("y")
        await wait_until(pilot, lambda: text(root) == FIRST_ONLY)
        await wait_until(pilot, lambda: not app.inbox.busy)
        [rest] = pending(root)
        assert rest.id != record.id and rest.applied_by == "preview"
        # The selection follows the top: the rest, whole.
        await wait_until(pilot, lambda: app.stack.selected_id == rest.id)
        await pilot.press("y")
        await wait_until(pilot, lambda: text(root) == NEW and pending(root) == [])


async def test_n_with_a_picked_hunk_discards_only_that_hunk(root: Path, session: Any) -> None:
    import_change(root)
    [record] = pending(root)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.inbox.controls.parts == 2)
        await pick_first_hunk(pilot, app)
        await pilot.press("n")
        # The rest is queued before the picked hunk's discard is logged: a moment holds both.
        await wait_until(pilot, lambda: [r.id for r in pending(root)] not in ([], [record.id]))
        await wait_until(pilot, lambda: len(pending(root)) == 1)
        assert text(root) == BASE
        [rest] = pending(root)
        assert rest.id != record.id
        await wait_until(pilot, lambda: app.stack.selected_id == rest.id and not app.inbox.busy)
        await pilot.press("y")
        await wait_until(pilot, lambda: text(root) == SECOND_ONLY and pending(root) == [])


async def test_e_edits_another_process_action_then_y_writes_the_edit(
    root: Path, session: Any
) -> None:
    import_change(root)
    [record] = pending(root)
    edited = BASE.replace("line 5\n", "reviewed 5\n")
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == record.id)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        app.screen.query_one(TextArea).load_text(edited)
        await pilot.press("ctrl+s")
        # The edit replaces the record: wait for the one replacement alone (for a moment
        # the queue may list the new record beside the old one).
        await wait_until(
            pilot, lambda: len(ids := [r.id for r in pending(root)]) == 1 and ids != [record.id]
        )
        [new] = pending(root)
        assert new.edited
        await wait_until(pilot, lambda: app.stack.selected_id == new.id)
        assert not notified(app, "no longer pending")
        await pilot.press("y")
        await wait_until(pilot, lambda: text(root) == edited and pending(root) == [])


async def test_an_outside_edit_shows_stale_at_once_and_p_repreviews_it(
    root: Path, session: Any
) -> None:
    import_change(root)
    [record] = pending(root)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == record.id)
        (root / "a.txt").write_text(BASE.replace("line 7\n", "line seven\n"), encoding="utf-8")
        FakeWatcher.instances[-1].fire("a.txt")
        # STALE as `pending list` says it: no refused apply needed first.
        await wait_until(pilot, lambda: app.stack.rows[0].stale)
        assert "a.txt" in app.stack.rows[0].stale_reason
        await pilot.press("p")
        # The re-preview replaces the record: wait for the one replacement alone (for a
        # moment the queue may list the new record beside the old one).
        await wait_until(
            pilot, lambda: len(ids := [r.id for r in pending(root)]) == 1 and ids != [record.id]
        )
        [fresh] = pending(root)
        await wait_until(pilot, lambda: app.stack.selected_id == fresh.id)
        await wait_until(pilot, lambda: not app.stack.rows[0].stale)
        await pilot.press("y")
        merged = NEW.replace("line 7\n", "line seven\n")
        await wait_until(pilot, lambda: text(root) == merged and pending(root) == [])


async def test_a_picked_hunk_of_a_waiting_hook_lands_alone_and_the_agent_is_told(
    root: Path, session: Any
) -> None:
    hook = subprocess.Popen(
        [sys.executable, "-m", "redline", "hook", "claude"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert hook.stdin is not None
        hook.stdin.write(recorded("pre-write-2.json", root, content=NEW))
        hook.stdin.close()
        app = app_for(session)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stack.selected_id is not None)
            action_id = app.stack.selected_id
            [record] = pending(root)
            assert record.applied_by == "owner" and record.owner_serves == ["parts"]
            # p: the agent proposes again, redline cannot.
            await pilot.press("p")
            await wait_until(
                pilot,
                lambda: notified(
                    app,
                    f"{action_id} is waiting in its agent's hook: ask the agent to propose "
                    "again, or discard it",
                ),
            )
            await wait_until(pilot, lambda: app.inbox.controls.parts == 2)
            await pick_first_hunk(pilot, app)
            await pilot.press("y")
            assert hook.stdout is not None and hook.stderr is not None
            out = (await asyncio.to_thread(hook.stdout.read)).decode()
            err = (await asyncio.to_thread(hook.stderr.read)).decode()
            await wait_until(pilot, lambda: not app.inbox.busy)
        answer = json.loads(out)["hookSpecificOutput"]
        assert answer["permissionDecision"] == "deny", err
        said = answer["permissionDecisionReason"]
        [rest] = pending(root)
        assert said.startswith(f"Applied in part as reviewed ({action_id}): ")
        assert f"; {rest.id} holds the rest" in said
        assert text(root) == FIRST_ONLY and rest.applied_by == "preview"
    finally:
        if hook.poll() is None:
            hook.kill()
            hook.wait()


async def test_an_owner_that_resolves_only_whole_greys_the_hunk_keys(
    root: Path, session: Any
) -> None:
    """An owner whose record says nothing of parts (an older redline's hook): space says
    why, and the button never offers some of its hunks."""
    with WorkspaceQueue(root) as queue:
        from redline.workspace.preview import FileModify, Preview, sha256_bytes

        queue.push(
            ActionDraft(
                "Write a.txt",
                Source.current("hook", "claude", "s1"),
                source_tool_name="hook:Write",
                preview=Preview([FileModify("a.txt", sha256_bytes(BASE.encode()), BASE, NEW)]),
                applied_by="owner",
            )
        )
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.inbox.controls.parts == 2)
        assert "only as a whole" in app.inbox.controls.parts_refusal
        await pilot.press("right_curly_bracket", "space")
        await wait_until(pilot, lambda: notified(app, "only as a whole"))
        assert app.inbox.controls.picked == 0
        assert app.inbox._bindings.key_to_bindings["y"][0].description == "Apply"
        assert "hunks" not in str(app.resolve_bar.query_one("#apply").label)


async def test_u_undoes_an_apply_made_by_another_process(root: Path, session: Any) -> None:
    import_change(root)
    [record] = pending(root)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == record.id)
        await wait_until(pilot, lambda: not app.inbox.can_undo)
        done = redline(root, "pending", "apply", record.id)
        assert done.returncode == 0, done.stderr
        assert text(root) == NEW
        # The dashboard applied nothing itself; u undoes the workspace's newest apply.
        await wait_until(pilot, lambda: app.inbox.can_undo)
        await pilot.press("u")
        await wait_until(pilot, lambda: text(root) == BASE)


async def test_a_on_another_process_action_makes_a_rule_that_applies_it(
    root: Path, session: Any
) -> None:
    from redline.tui.screens.confirm import ConfirmScreen

    assert session.capabilities.rules
    import_change(root)
    [record] = pending(root)
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == record.id)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        # The question names the other process's action it will apply at once.
        assert f"It applies {record.id} now." in str(screen.question)
        await pilot.press("y")
        await wait_until(pilot, lambda: text(root) == NEW and pending(root) == [])
        with WorkspaceQueue(root) as queue:
            resolution = queue.resolution(record.id)
        assert resolution is not None and resolution.resolved_by == "rule"
        await wait_until(pilot, lambda: "always apply" in app.activity.plain)
