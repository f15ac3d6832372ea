"""The MCP tools' logic in-process (no MCP): outcome lines, replacement, the wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from redline.mcp_server.proposals import STILL_PENDING, ProposalError, Proposals, outcome_line
from redline.review.queued import resolve_queued
from redline.workspace.queue import ActionDraft, Resolution, Source


@pytest.fixture
def proposals(tmp_path: Path) -> Proposals:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    work = Proposals(tmp_path)
    yield work
    work.close()


def test_outcome_lines() -> None:
    record = {"label": "Edit: a.txt"}
    assert (
        outcome_line(Resolution("pa-1", "apply", "ok", record=record))
        == "pa-1 applied: Edit: a.txt. Reason: ok"
    )
    assert (
        outcome_line(Resolution("pa-2", "discard", "no", record=record))
        == "pa-2 discarded: Edit: a.txt. Reason: no"
    )
    assert (
        outcome_line(Resolution("pa-3", "replaced", replaced_by="pa-4", record=record))
        == "pa-3 replaced by pa-4: Edit: a.txt. Reason: "
    )
    assert outcome_line(Resolution("pa-5", "removed", record=record)) == (
        "pa-5 discarded: Edit: a.txt. Reason: removed from the queue"
    )
    assert outcome_line(
        Resolution("pa-6", "discard", "too big", rule="no-big", record=record)
    ).endswith("Reason: too big (rule no-big)")


async def test_propose_then_replaced(proposals: Proposals) -> None:
    session = proposals.session_for("stdio")
    assert proposals.session_for("stdio") == session
    assert proposals.session_for("http-client:other") != session
    outcome = await proposals.propose_edit("agent via MCP", session, "a.txt", "two", "three")
    assert outcome.action_id is not None
    queue = proposals.queue
    record = queue.get(outcome.action_id)
    assert record is not None
    assert record.applied_text == "Applied edit to a.txt."
    preview = queue.preview(record)
    new = queue.replace(
        outcome.action_id,
        ActionDraft(label="Edit: a.txt", source=Source.current("mcp"), preview=preview),
    )
    text = await proposals.await_review(outcome.action_id, 5)
    assert text == f"{outcome.action_id} replaced by {new.id}: Edit: a.txt. Reason: "
    assert proposals.status(session, new.id) == f"{new.id} pending: Edit: a.txt"


async def test_await_returns_on_a_resolution_from_elsewhere(proposals: Proposals) -> None:
    session = proposals.session_for("stdio")
    outcome = await proposals.propose_write("agent via MCP", session, "b.txt", "new\n")
    assert outcome.action_id is not None
    assert await proposals.await_review(outcome.action_id, 0) == STILL_PENDING
    waiting = asyncio.create_task(proposals.await_review(outcome.action_id, 50))
    other = Proposals(proposals.root)  # a second handle, as another process would have
    try:
        result = await resolve_queued(other.queue, outcome.action_id, "apply", "fine")
    finally:
        other.close()
    assert not result.is_error, result.text
    text = await asyncio.wait_for(waiting, 60)
    assert text.splitlines() == [
        f"{outcome.action_id} applied: Write: b.txt. Reason: fine",
        "Applied write to b.txt (created).",
    ]
    assert (proposals.root / "b.txt").read_text() == "new\n"


async def test_refusals_end_cleanly(proposals: Proposals) -> None:
    session = proposals.session_for("stdio")
    with pytest.raises(ProposalError, match=r"^`old` is empty.*Nothing was queued\.$"):
        await proposals.propose_edit("x", session, "a.txt", "", "b")
    with pytest.raises(ProposalError, match=r"not found in a\.txt.*text\. Nothing was queued\.$"):
        await proposals.propose_edit("x", session, "a.txt", "zzz", "b")
    same = await proposals.propose_write("x", session, "a.txt", "one\ntwo\n")
    assert same.action_id is None and "nothing to write" in same.text
    with pytest.raises(ProposalError, match="timeout_s"):
        await proposals.await_review("pa-1", -1)
    assert proposals.queue.list() == []


async def test_review_rules_decide_at_push(tmp_path: Path) -> None:
    import os

    config = Path(os.environ["REDLINE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "rules.toml").write_text(
        '[[rule]]\nname = "docs"\ndecision = "apply"\npaths = ["docs/**"]\n\n'
        '[[rule]]\nname = "no-secrets"\ndecision = "discard"\npaths = ["secrets/**"]\n'
        'reason = "never touch secrets"\n'
    )
    work = Proposals(tmp_path)
    try:
        session = work.session_for("stdio")
        applied = await work.propose_write("x", session, "docs/a.md", "hello\n")
        assert applied.text.startswith("Applied by rule docs: Write: docs/a.md.")
        assert (tmp_path / "docs" / "a.md").read_text() == "hello\n"
        dropped = await work.propose_write("x", session, "secrets/k.txt", "k\n")
        assert dropped.text == (
            "Discarded by rule no-secrets: Write: secrets/k.txt. Reason: never touch secrets"
        )
        assert not (tmp_path / "secrets").exists()
        waits = await work.propose_write("x", session, "src/b.py", "b = 1\n")
        assert waits.text.startswith("Queued ")
        assert [r.id for r in work.queue.list()] == [waits.action_id]
    finally:
        work.close()


async def test_with_nobody_watching_a_waiting_proposal_is_told_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46: the MCP server notifies for what waits (not for what a rule decided)."""
    import os

    from redline.workspace.presence import present

    config = Path(os.environ["REDLINE_CONFIG_DIR"])
    (config / "config.toml").write_text('[notify]\ncommand = ["notify-me", "{id}", "{label}"]\n')
    (config / "rules.toml").write_text(
        '[[rule]]\nname = "docs"\ndecision = "apply"\npaths = ["docs/**"]\n'
    )
    started: list[list[str]] = []
    monkeypatch.setattr(
        "redline.notify.spawn_detached", lambda argv, *_a: started.append(list(argv))
    )
    work = Proposals(tmp_path)
    try:
        session = work.session_for("stdio")
        await work.propose_write("cursor", session, "docs/a.md", "ruled\n")
        waits = await work.propose_write("cursor", session, "src/b.py", "b = 1\n")
        assert started == [["notify-me", waits.action_id, "Write: src/b.py"]]
        with present(work.root, "dashboard"):
            await work.propose_write("cursor", session, "src/c.py", "c = 1\n")
        assert len(started) == 1  # a dashboard watches: nothing more
    finally:
        work.close()
