"""ReviewSession decisions in git and in the decisions log (``[git] on_apply``, real git)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.workspace.gitrepo import git, init_repo, isolate_git, write_config

from redline.review.events import EventStream
from redline.review.file_action import file_action
from redline.review.provenance import Decided, commit_message
from redline.review.session import Decision, ReviewSession
from redline.review.store import PendingAction, PendingActionStore
from redline.workspace.decisions import read
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import Source, WorkspaceQueue

BASE = "".join(f"line {i}\n" for i in range(1, 13))


def edit(root: Path, new: str, name: str = "a.txt") -> PendingAction:
    old = (root / name).read_bytes()
    preview = Preview([FileModify(name, sha256_bytes(old), old.decode(), new)])
    return file_action(
        root,
        preview,
        label=f"Edit {name}",
        source_tool_name="edit",
        applied_text="",
        repreview=None,
    )


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_user_config: Path) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    return init_repo(tmp_path / "ws", {"a.txt": BASE})


@pytest.fixture
def review(ws: Path) -> Iterator[ReviewSession]:
    store = PendingActionStore(
        queue=WorkspaceQueue(ws), source=Source.current("acp", "gemini", "s1")
    )
    session = ReviewSession(ws, store, EventStream("s1"))
    yield session
    session.close()


async def test_a_session_apply_is_committed_and_logged(ws: Path, review: ReviewSession) -> None:
    action = review.propose(edit(ws, BASE.replace("line 3", "three")))
    outcome = await review.resolve(action.id, Decision("apply", "ok"))
    assert outcome.kind == "applied" and "git: committed pa-1 as " in outcome.text
    trailers = git(ws, "log", "-1", "--format=%(trailers:only,unfold)").strip().splitlines()
    assert "Redline-Source: acp:gemini" in trailers and "Redline-Reason: ok" in trailers
    records, bad = read(ws)
    assert bad == 0 and [(r.id, r.decision, r.commit) for r in records] == [
        ("pa-1", "applied", git(ws, "rev-parse", "HEAD").strip())
    ]


async def test_an_edited_session_action_and_a_rule_decision(
    ws: Path, review: ReviewSession
) -> None:
    action = review.propose(edit(ws, BASE + "agent\n"))
    edited = await review.edit(action.id, "a.txt", BASE + "person\n")
    outcome = await review.resolve(
        edited.new_action_id, Decision("apply", "", by="rule", rule="r1")
    )
    assert outcome.kind == "applied"
    message = git(ws, "log", "-1", "--format=%B")
    assert "Redline-Edited: yes" in message and "Redline-Action: pa-2" in message
    last = read(ws)[0][-1]
    assert (last.id, last.edited, last.resolved_by, last.reviewer) == ("pa-2", True, "rule", "")


async def test_a_discard_is_logged_without_a_commit(ws: Path, review: ReviewSession) -> None:
    action = review.propose(edit(ws, "gone\n"))
    outcome = await review.resolve(action.id, Decision("discard", "no thanks"))
    assert outcome.kind == "discarded" and "git:" not in outcome.text
    assert git(ws, "rev-list", "--count", "HEAD").strip() == "1"
    last = read(ws)[0][-1]
    assert (last.decision, last.reason, last.commit) == ("discarded", "no thanks", None)


def test_commit_message_keeps_subject_and_trailers_on_one_line_each() -> None:
    text = commit_message(
        [Decided("pa-7", "Fix\x1b[31m it\nnow", "mcp:cursor", "apply", "why\r\nnot", True)],
        "R <r@x>",
    )
    assert text == (
        "Fix [31m it now\n\n"
        "Redline-Action: pa-7\nRedline-Source: mcp:cursor\nRedline-Reviewer: R <r@x>\n"
        "Redline-Edited: yes\nRedline-Reason: why not\n"
    )


def test_a_later_commit_line_joins_its_applied_decision(tmp_path: Path) -> None:
    """``committed`` lines (a hook's write committed after the decision) are folded into
    the action's newest ``applied`` decision, never shown as decisions of their own."""
    from redline.workspace.decisions import COMMITTED, DecisionRecord, append, commit_of

    def line(action_id: str, decision: str, commit: str | None = None) -> DecisionRecord:
        return DecisionRecord(
            action_id, "Edit a", "hook:claude", decision, False, "", "person", "", 1.0, commit
        )

    append(tmp_path, line("pa-1", "applied"))
    append(tmp_path, line("pa-2", "discarded"))
    append(tmp_path, line("pa-1", COMMITTED, "c0ffee"))
    append(tmp_path, line("pa-9", COMMITTED, "bad"))  # no decision to join: dropped
    records, bad = read(tmp_path)
    assert bad == 0
    assert [(r.id, r.decision, r.commit) for r in records] == [
        ("pa-1", "applied", "c0ffee"),
        ("pa-2", "discarded", None),
    ]
    assert commit_of(tmp_path, "pa-1") == "c0ffee"
