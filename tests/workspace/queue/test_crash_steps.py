"""Crash consistency of the queue, deterministically: stop at every step of push, apply,
discard and replace (the queue's own step hook plus the apply transaction's), then open the
queue as the next redline start would and check that journal and queue agree.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from redline.review.queued import resolve_queued
from redline.workspace import journal, transaction
from redline.workspace.queue import WorkspaceQueue, claims
from redline.workspace.transaction import SimulatedCrash

from .helpers import edit_draft, ids

OLD = "hello\nworld\n"
NEW = "hello\nworld\nmore\n"


def _hooks(crash_at: int | None, seen: list[str]) -> None:
    def hit(text: str) -> None:
        seen.append(text)
        if crash_at is not None and len(seen) == crash_at:
            raise SimulatedCrash(text)

    claims._step_hook = hit
    transaction._step_hook = lambda number, text: hit(f"journal {number} {text}")


def _off() -> None:
    claims._step_hook = None
    transaction._step_hook = None


def _count(tmp_path: Path, name: str, run: Callable[[Path], object]) -> list[str]:
    root = tmp_path / f"count-{name}"
    root.mkdir()
    (root / "a.txt").write_text(OLD)
    WorkspaceQueue(root).push(edit_draft(root))
    seen: list[str] = []
    _hooks(None, seen)
    run(root)
    _off()
    return seen


def _apply(root: Path) -> object:
    result = asyncio.run(resolve_queued(WorkspaceQueue(root), "pa-1", "apply", "ok"))
    assert not result.is_error, result.text
    return result


def _discard(root: Path) -> object:
    return asyncio.run(resolve_queued(WorkspaceQueue(root), "pa-1", "discard", "no"))


def _replace(root: Path) -> object:
    return WorkspaceQueue(root).replace("pa-1", edit_draft(root, label="again"))


def _no_temp_files(root: Path) -> bool:
    base = root / ".redline/queue"
    return not any(name.endswith(".tmp") for _, _, names in os.walk(base) for name in names)


def test_apply_stopped_at_every_step_leaves_queue_and_journal_in_agreement(tmp_path: Path) -> None:
    steps = _count(tmp_path, "apply", _apply)
    assert "apply: marked applying" in steps and "apply: resolution logged" in steps
    assert any(s.endswith("committed") for s in steps)
    committed_at = next(i for i, s in enumerate(steps, 1) if s.endswith("committed"))
    for step in range(1, len(steps) + 1):
        root = tmp_path / f"apply{step}"
        root.mkdir()
        (root / "a.txt").write_text(OLD)
        WorkspaceQueue(root).push(edit_draft(root))
        _hooks(step, [])
        with pytest.raises(SimulatedCrash):
            _apply(root)
        _off()
        queue = WorkspaceQueue(root)
        pending = ids(queue)
        applied = step >= committed_at
        assert (root / "a.txt").read_text() == (NEW if applied else OLD), steps[step - 1]
        assert pending == ([] if applied else ["pa-1"]), steps[step - 1]
        resolution = queue.resolution("pa-1")
        assert (resolution is not None and resolution.decision == "apply") == applied
        assert journal.recover(root) == []
        assert _no_temp_files(root)
        if not applied:  # still usable: the same action applies now
            record = queue.get("pa-1")
            assert record is not None and record.state == "pending"
            _apply(root)
            assert (root / "a.txt").read_text() == NEW
        assert len(journal.undo_history(root)) == 1


def test_discard_stopped_at_every_step(tmp_path: Path) -> None:
    steps = _count(tmp_path, "discard", _discard)
    for step in range(1, len(steps) + 1):
        root = tmp_path / f"discard{step}"
        root.mkdir()
        (root / "a.txt").write_text(OLD)
        WorkspaceQueue(root).push(edit_draft(root))
        _hooks(step, [])
        with pytest.raises(SimulatedCrash):
            _discard(root)
        _off()
        queue = WorkspaceQueue(root)
        done = step >= steps.index("discard: resolution logged") + 1
        assert ids(queue) == ([] if done else ["pa-1"]), steps[step - 1]
        assert (queue.resolution("pa-1") is not None) == done
        assert (root / "a.txt").read_text() == OLD


def test_replace_stopped_at_every_step(tmp_path: Path) -> None:
    steps = _count(tmp_path, "replace", _replace)
    assert "replace: new record written" in steps
    for step in range(1, len(steps) + 1):
        root = tmp_path / f"replace{step}"
        root.mkdir()
        (root / "a.txt").write_text(OLD)
        queue = WorkspaceQueue(root)
        queue.push(edit_draft(root))
        queue.push(edit_draft(root))  # pa-2 on top
        _hooks(step, [])
        with pytest.raises(SimulatedCrash):
            _replace(root)
        _off()
        listed = ids(WorkspaceQueue(root))
        written = step >= steps.index("replace: new record written") + 1
        # Exactly one action holds pa-1's place: the old one or its replacement.
        assert listed == (["pa-2", "pa-3"] if written else ["pa-2", "pa-1"]), steps[step - 1]


def test_push_stopped_at_every_step(tmp_path: Path) -> None:
    root = tmp_path / "count-push"
    root.mkdir()
    (root / "a.txt").write_text(OLD)
    seen: list[str] = []
    _hooks(None, seen)
    WorkspaceQueue(root).push(edit_draft(root))
    _off()
    for step in range(1, len(seen) + 1):
        root = tmp_path / f"push{step}"
        root.mkdir()
        (root / "a.txt").write_text(OLD)
        _hooks(step, [])
        with pytest.raises(SimulatedCrash):
            WorkspaceQueue(root).push(edit_draft(root))
        _off()
        queue = WorkspaceQueue(root)
        written = seen[step - 1] == "push: record written"
        assert ids(queue) == (["pa-1"] if written else [])
        assert queue.problems == [] and _no_temp_files(root)
        # an id is burnt, never reused
        assert queue.push(edit_draft(root)).id == "pa-2"


def test_an_apply_committed_by_the_journal_leaves_the_queue_on_open(tmp_path: Path) -> None:
    # A session applied through its own callback and died before it could log the result.
    from redline.workspace.safe_apply import apply_preview

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text(OLD)
    queue = WorkspaceQueue(root)
    record = queue.push(edit_draft(root))
    preview = queue.preview(record)
    assert preview is not None
    apply_preview(root, preview, label=record.label, action_id=record.id)
    reopened = WorkspaceQueue(root)
    assert ids(reopened) == []
    assert any("had been applied" in m for m in reopened.messages)
    resolution = reopened.resolution("pa-1")
    assert resolution is not None and resolution.decision == "apply"
    assert resolution.resolved_by == "recovery"


def test_an_older_journal_entry_with_the_same_id_is_not_taken_for_this_action(
    tmp_path: Path,
) -> None:
    # Before the queue, ids were per process: an old journal may name pa-1 too.
    from redline.workspace.preview import FileCreate, Preview
    from redline.workspace.safe_apply import apply_preview

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text(OLD)
    apply_preview(root, Preview([FileCreate("old.txt", "x\n")]), action_id="pa-1")
    WorkspaceQueue(root).push(edit_draft(root))
    assert ids(WorkspaceQueue(root)) == ["pa-1"]
