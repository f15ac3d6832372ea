"""The team queue as a review source: rows listed as the one listed action, views bound by
their hash, and what it cannot do declared with the reason (no PostgreSQL: a fake client;
against a real server see test_team_dashboard.py)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from tests.tui.team_fakes import ROWS, FakeTeamQueue

from redline.review.session import Decision
from redline.review.source import CAPABILITY_NAMES, ListedAction, ReviewSource, WorkspaceRef
from redline.teamqueue.source import TeamSource


def test_rows_are_listed_actions_with_their_workspace() -> None:
    source: ReviewSource = TeamSource(FakeTeamQueue(ROWS))
    listed = source.listed()
    assert [row.id for row in listed] == [row["id"] for row in ROWS]
    first = listed[0]
    assert first.local_id == "pa-2" and first.source == "acp:gemini"
    assert first.workspace == WorkspaceRef("g1a2b3c4d5e6", "/home/ann/api")
    assert first.facts == (("src/app.py",), 1, 1) and first.created_at is not None
    assert source.spans_workspaces


def test_only_whole_decisions_and_every_other_capability_says_why_not() -> None:
    caps = TeamSource(FakeTeamQueue(ROWS)).capabilities
    assert caps.whole.available
    for name in CAPABILITY_NAMES:
        if name != "whole":
            assert not caps.get(name).available and caps.refusal(name), name
    assert "redline undo" in caps.refusal("undo")


def test_a_decision_carries_the_view_it_was_made_on() -> None:
    queue = FakeTeamQueue(ROWS)
    source = TeamSource(queue)
    team_id = ROWS[1]["id"]
    refused = source.decide(team_id, Decision("apply", "ok"))
    assert not refused.ok and "not shown yet" in refused.text and queue.decided == []
    view = source.view(team_id)
    assert view.diff and view.view_hash == f"view-of-{team_id}" and view.action.id == team_id
    outcome = source.decide(team_id, Decision("apply", "ok"), view)
    assert outcome.ok and queue.decided == [(team_id, "apply", "ok")]
    assert queue.view_hashes == [f"view-of-{team_id}"]
    parts = source.decide(team_id, Decision("apply", "ok", only=("src/app.py#1",)), view)
    assert not parts.ok and "whole actions" in parts.text


def test_a_lost_race_and_an_unreadable_action() -> None:
    queue = FakeTeamQueue(ROWS)
    team_id = ROWS[0]["id"]
    queue.taken[team_id] = f"{team_id} was already decided: apply by bob"
    source = TeamSource(queue)
    outcome = source.decide(team_id, Decision("discard"), source.view(team_id))
    assert not outcome.ok and outcome.lost and "by bob" in outcome.text
    queue.shows = set()
    view = source.view(team_id)
    assert view.error == f"cannot read {team_id}" and view.diff is None


def test_watch_hands_listed_actions() -> None:
    source = TeamSource(FakeTeamQueue(ROWS))
    stop = threading.Event()
    seen: list[Sequence[ListedAction]] = []
    status: list[tuple[bool, str]] = []

    def rows(listed: Sequence[ListedAction]) -> None:
        seen.append(listed)
        stop.set()

    source.watch(stop, rows, lambda online, text: status.append((online, text)))
    assert status == [(True, "")] and [r.id for r in seen[0]] == [r["id"] for r in ROWS]
