"""One workspace as a review source, over its queue with no session open (the way issue
45's all-workspaces inbox reaches a workspace): rows from the index, the Preview read only
when viewed, decisions through the queue's claim, what an owner action allows."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from redline.review.session import Decision
from redline.review.source import ListedAction, ReviewSource, WorkspaceRef
from redline.review.workspace_source import WorkspaceSource
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

BASE = "".join(f"line {i}\n" for i in range(1, 37))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text(BASE)
    return root


def push(root: Path, new: str, *, applied_by: str | None = None, kind: str = "exec") -> str:
    old = (root / "a.txt").read_text()
    preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, new)])
    record = WorkspaceQueue(root).push(
        ActionDraft(
            label="Edit a.txt",
            source=Source.current(kind, "", "s1"),
            source_tool_name="edit",
            preview=preview,
            applied_by=applied_by,
        )
    )
    return record.id


def test_listed_from_the_index_and_viewed_on_demand(ws: Path) -> None:
    push(ws, BASE.replace("line 2\n", "two\n"))
    ref = WorkspaceRef("g1a2b3c4d5e6", str(ws))
    source: ReviewSource = WorkspaceSource(WorkspaceQueue(ws), workspace=ref, qualified=True)
    (row,) = source.listed()
    assert row.id == "pa-1@g1a2b3c4d5e6" and row.workspace == ref and not row.stale
    assert row.facts == (("a.txt",), 1, 1) and not source.spans_workspaces
    view = source.view(row.id)
    assert view.preview is not None and view.hunks == ("a.txt#1",) and not view.error
    (ws / "a.txt").write_text(BASE + "more\n")
    (stale,) = source.listed()
    assert stale.stale and "a.txt" in stale.stale_reason


def test_a_decision_goes_through_the_queue_and_lands_in_the_workspace(ws: Path) -> None:
    push(ws, BASE.replace("line 2\n", "two\n").replace("line 30\n", "thirty\n"))
    source = WorkspaceSource(WorkspaceQueue(ws))
    outcome = source.decide("pa-1", Decision("apply", "ok", only=("a.txt#1",)))
    assert outcome.ok, outcome.text
    assert (ws / "a.txt").read_text() == BASE.replace("line 2\n", "two\n")
    (rest,) = source.listed()  # the other hunk waits under a new id
    assert rest.id != "pa-1"
    assert source.gone_text("pa-1").startswith(f"pa-1 was replaced by {rest.id}")
    undone = source.undo()
    assert undone.ok, undone.text
    assert (ws / "a.txt").read_text() == BASE


def test_an_owner_action_allows_only_whole_decisions_with_the_reason(ws: Path) -> None:
    # Queued by another process (a hook-like owner that has ended).
    code = (
        "import sys; from pathlib import Path;"
        "from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue;"
        "WorkspaceQueue(Path(sys.argv[1])).push(ActionDraft(label='Run npm test',"
        " source=Source.current('hook', 'claude', 's2'), details={'command': 'npm test'}))"
    )
    subprocess.run([sys.executable, "-c", code, str(ws)], check=True)
    source = WorkspaceSource(WorkspaceQueue(ws))
    (row,) = source.listed()
    assert row.kind == "permission" and row.applied_by == "owner" and row.stale  # orphaned
    allows = source.allows(row)
    assert allows.whole.available and not allows.parts.available
    assert "no file preview" in allows.refusal("parts")
    assert "applied by the process that queued it" in allows.refusal("edit")


def test_watch_hands_a_fresh_listing_when_another_process_queues(ws: Path) -> None:
    source = WorkspaceSource(WorkspaceQueue(ws))
    stop = threading.Event()
    seen: list[Sequence[ListedAction]] = []
    arrived = threading.Event()

    def rows(listed: Sequence[ListedAction]) -> None:
        seen.append(listed)
        if listed:
            arrived.set()

    watcher = threading.Thread(target=source.watch, args=(stop, rows, lambda *_: None))
    watcher.start()
    try:
        push(ws, "changed\n")
        assert arrived.wait(30), "the new action was never listed"
    finally:
        stop.set()
        watcher.join(30)
    assert seen[0] == [] and [r.id for r in seen[-1]] == ["pa-1"]
