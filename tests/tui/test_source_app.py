"""The dashboard's one screen over a workspace's review source with no session open (how
issue 45's all-workspaces inbox reaches each workspace): an action queued by another
process is listed, shown with its Preview, and decided — whole or in parts — through the
queue's claim, landing in its workspace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.tui.conftest import wait_until

from redline.review.workspace_source import WorkspaceSource
from redline.tui.source_app import SourceApp
from redline.workspace.queue import WorkspaceQueue

BASE = "".join(f"line {i}\n" for i in range(1, 37))
NEW = BASE.replace("line 2\n", "two\n").replace("line 30\n", "thirty\n")

PUSH = """
import sys
from pathlib import Path
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue
root = Path(sys.argv[1])
old = (root / "a.txt").read_text()
preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, sys.argv[2])])
WorkspaceQueue(root).push(ActionDraft(label="Edit a.txt", source=Source.current("mcp", "cursor"),
    source_tool_name="edit", preview=preview))
"""


def queued_elsewhere(ws: Path, text: str) -> None:
    subprocess.run([sys.executable, "-c", PUSH, str(ws), text], check=True)


async def test_another_process_action_is_decided_in_parts_on_the_one_screen(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text(BASE)
    queued_elsewhere(ws, NEW)
    app = SourceApp(WorkspaceSource(WorkspaceQueue(ws)))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.shown_id == "pa-1")
        inbox = app.inbox
        assert inbox.check_action("toggle_part", ()) is True  # a Preview: hunks can be picked
        assert inbox.check_action("focus_prompt", ()) is None  # no agent here
        await pilot.press("}", "space", "y")  # the first hunk only
        await wait_until(pilot, lambda: (ws / "a.txt").read_text() != BASE)
        assert (ws / "a.txt").read_text() == BASE.replace("line 2\n", "two\n")
        # The rest waits under a new id; the screen lists it once the queue says so.
        await wait_until(pilot, lambda: app.listed_ids not in ([], ["pa-1"]))
        (rest,) = app.listed_ids
        await wait_until(pilot, lambda: app.shown_id == rest)
        await pilot.press("n")
        await wait_until(pilot, lambda: app.listed_ids == [])
    assert (ws / "a.txt").read_text() == BASE.replace("line 2\n", "two\n")
    assert app.watch_stopped.wait(30)


async def test_marked_actions_are_decided_through_the_source(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text(BASE)
    queued_elsewhere(ws, NEW)
    app = SourceApp(WorkspaceSource(WorkspaceQueue(ws)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.shown_id == "pa-1")
        queued_elsewhere(ws, NEW)  # a second proposal of the same change, by another process
        await wait_until(pilot, lambda: len(app.listed_ids) == 2)
        app.inbox.stack.focus()
        await pilot.press("space", "j", "space")
        assert app.inbox.stack.marked == ("pa-2", "pa-1")
        await pilot.press("r", *"both", "escape", "n")
        await wait_until(pilot, lambda: app.listed_ids == [])
        # The watcher's listing can arrive before the decisions' own report: await both.
        await wait_until(pilot, lambda: "Discarded 2 of 2 marked" in app.inbox.activity.plain)
    assert (ws / "a.txt").read_text() == BASE
