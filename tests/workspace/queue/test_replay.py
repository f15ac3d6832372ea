"""A resolved action stays unusable for good, also after retention pruned every trace of it
in the workspace (its resolution and its journal entry): the used-id set is the proof."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from redline.cli import main
from redline.review.queued import resolve_queued
from redline.workspace import journal
from redline.workspace.queue import ActionGone, WorkspaceQueue, resolved
from redline.workspace.queue.used import Ranges, UsedIds, UsedIdsError, used_ids_path

from .helpers import create_draft, edit_draft


def _apply_and_keep_a_copy(ws: Path) -> tuple[str, bytes]:
    """Push a create, keep a copy of its signed record, apply it; return (id, copy)."""
    queue = WorkspaceQueue(ws)
    record = queue.push(create_draft("new.txt", "created once\n"))
    copy = (ws / ".redline/queue/actions" / f"{record.id}.json").read_bytes()
    result = asyncio.run(resolve_queued(queue, record.id, "apply", "ok"))
    assert not result.is_error, result.text
    assert (ws / "new.txt").read_text() == "created once\n"
    queue.close()
    return record.id, copy


def _prune_everything(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What retention does after 1,000 resolutions / 30 days and 50 applies."""
    monkeypatch.setattr(resolved, "KEEP_RESOLUTIONS", 0)
    with WorkspaceQueue(ws, reconcile=False) as queue:
        queue.prune()
    journal.prune(ws, keep=0)
    assert list((ws / ".redline/queue/resolved").iterdir()) == []
    assert list((ws / ".redline/journal").iterdir()) == []


def _replay(ws: Path, action_id: str, copy: bytes) -> None:
    (ws / "new.txt").unlink()  # so the create would apply cleanly again
    target = ws / ".redline/queue/actions" / f"{action_id}.json"
    target.write_bytes(copy)
    os.chmod(target, 0o600)


def test_a_replayed_record_is_refused_after_pruning(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    action_id, copy = _apply_and_keep_a_copy(ws)
    _prune_everything(ws, monkeypatch)
    _replay(ws, action_id, copy)
    # Straight at the claim (no reconcile first): refused, nothing written.
    queue = WorkspaceQueue(ws, reconcile=False)
    with (
        pytest.raises(ActionGone, match=f"{action_id} is no longer pending: it was already"),
        queue.claim(action_id),
    ):
        pass
    result = asyncio.run(resolve_queued(queue, action_id, "apply", "again"))
    assert result.is_error and "already resolved" in result.text
    assert not (ws / "new.txt").exists()
    # Never listed as pending: reported as unusable, then removed (it was resolved before).
    assert queue.list() == [] and [p.action_id for p in queue.problems] == [action_id]
    queue.close()
    with WorkspaceQueue(ws) as reopened:
        assert reopened.list() == [] and reopened.problems == []
        assert any(f"{action_id} had already been resolved" in m for m in reopened.messages)


def test_a_replayed_record_is_refused_from_the_command_line(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    action_id, copy = _apply_and_keep_a_copy(ws)
    _prune_everything(ws, monkeypatch)
    _replay(ws, action_id, copy)
    assert main(["pending", "-C", str(ws), "apply", action_id]) == 1
    out, err = capsys.readouterr()
    assert f"{action_id} had already been resolved" in err
    assert not (ws / "new.txt").exists()
    # The leftover copy is gone; the queue is clean and says so.
    assert main(["pending", "-C", str(ws), "list", "--json"]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out)["actions"] == []
    assert not (ws / ".redline/queue/actions" / f"{action_id}.json").exists()


def test_the_proof_lives_outside_the_workspace(ws: Path) -> None:
    """Deleting every trace in the workspace (log, journal, counter) does not help either."""
    import shutil

    action_id, copy = _apply_and_keep_a_copy(ws)
    path = used_ids_path(ws)
    assert path.is_relative_to(Path(os.environ["XDG_STATE_HOME"]))
    assert path.read_text() == "1\n"
    for folder in (ws / ".redline/queue/resolved", ws / ".redline/journal"):
        shutil.rmtree(folder)
        folder.mkdir(mode=0o700)
    (ws / ".redline/queue/next-id").unlink()
    _replay(ws, action_id, copy)
    queue = WorkspaceQueue(ws, reconcile=False)
    result = asyncio.run(resolve_queued(queue, action_id, "apply", "again"))
    assert result.is_error and "already resolved" in result.text, result.text
    assert not (ws / "new.txt").exists()
    # A fresh counter never hands the used id out again either.
    assert queue.push(create_draft("other.txt", "x\n")).id == "pa-2"
    queue.close()


def test_ids_resolved_by_an_older_redline_are_seeded_from_its_log(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    first = queue.push(edit_draft(ws))
    second = queue.push(edit_draft(ws, label="second"))
    asyncio.run(resolve_queued(queue, second.id, "discard", "no"))
    # An older redline kept no used-id set: only its resolved log knows.
    used_ids_path(ws).unlink()
    asyncio.run(resolve_queued(queue, first.id, "discard", "no"))
    assert used_ids_path(ws).read_text() == "1-2\n"
    queue.close()


def test_a_damaged_used_id_set_fails_closed(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    record = queue.push(edit_draft(ws))
    path = used_ids_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("1-x\n")
    result = asyncio.run(resolve_queued(queue, record.id, "apply", "ok"))
    assert result.is_error
    assert "used-id set is damaged (line 1 is not N or LOW-HIGH)" in result.text
    assert (ws / "a.txt").read_text() == "hello\nworld\n"
    queue.close()


def test_ranges_stay_compact() -> None:
    ranges = Ranges()
    for number in (5, 3, 4, 1, 9, 2, 7):
        ranges.add_range(number, number)
    assert ranges.encode() == b"1-5\n7\n9\n"
    ranges.add_range(8, 8)
    assert ranges.encode() == b"1-5\n7-9\n"
    assert 6 not in ranges and 7 in ranges and 0 not in ranges and ranges.highest() == 9
    assert len(ranges) == 8
    assert Ranges.decode(b"1-5\n7-9\n", Path("x")).encode() == b"1-5\n7-9\n"
    with pytest.raises(UsedIdsError, match="damaged"):
        Ranges.decode(b"9-3\n", Path("x"))


def test_marking_is_idempotent_and_durable(ws: Path) -> None:
    used = UsedIds(ws)
    assert used.add([3]).encode() == b"3\n"
    assert used.add([3]).encode() == b"3\n"
    assert UsedIds(ws).read().encode() == b"3\n"
