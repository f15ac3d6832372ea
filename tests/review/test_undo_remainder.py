"""Undo of a partial (hunk) apply brings the rest of that action back to a consistent state."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.review.test_session import BASE, changed, edit

from redline.review.events import EventStream
from redline.review.session import Decision, ReviewSession
from redline.review.store import PendingActionStore
from redline.workspace.queue import Source, WorkspaceQueue


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text(BASE)
    return root


@pytest.fixture
def review(ws: Path) -> Iterator[ReviewSession]:
    store = PendingActionStore(queue=WorkspaceQueue(ws), source=Source.current("sdk", "", "s1"))
    session = ReviewSession(ws, store, EventStream("s1"))
    yield session
    session.close()


async def test_undo_of_a_partial_apply_rebases_the_rest_onto_the_restored_file(
    ws: Path, review: ReviewSession
) -> None:
    action = review.propose(edit(ws, changed(2, 10)))
    outcome = await review.resolve(action.id, Decision("apply", "first part", only=("a.txt#1",)))
    assert outcome.kind == "applied" and outcome.remaining_id
    assert (ws / "a.txt").read_text() == changed(2)

    result = review.undo()
    assert not result.is_error
    assert (ws / "a.txt").read_text() == BASE

    [rest] = review.store.snapshot()
    assert not rest.stale, rest.stale_reason
    assert rest.id != outcome.remaining_id  # carried over under a new id
    assert rest.preview is not None
    # The rest now proposes only hunk 2, against the restored file, and applies cleanly.
    done = await review.resolve(rest.id, Decision("apply", "the rest"))
    assert done.kind == "applied", done.text
    assert (ws / "a.txt").read_text() == changed(10)


async def test_undo_leaves_a_conflicting_rest_stale_with_its_reason(
    ws: Path, review: ReviewSession
) -> None:
    action = review.propose(edit(ws, changed(2, 10)))
    outcome = await review.resolve(action.id, Decision("apply", "", only=("a.txt#1",)))
    assert outcome.kind == "applied"
    (ws / "a.txt").write_text(changed(2, 10, mark="Y"))  # someone rewrote both lines
    # Undo refuses (the file changed since the apply): nothing is carried over, and the
    # rest is stale with the reason it was marked for.
    result = review.undo()
    assert result.is_error
    review.check_staleness()
    [rest] = review.store.snapshot()
    assert rest.stale and "a.txt" in rest.stale_reason
