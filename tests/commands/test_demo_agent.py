"""The demo agent answers a person's decisions: each with its reason, and what comes next."""

from __future__ import annotations

from pathlib import Path

from redline.commands.demo import DEMO_PROMPT, prepare_workspace
from redline.demo.agent import DemoProvider, read_report
from redline.drivers.model.turns import Resolution, resolution_reminder
from redline.resources import demo_plan_path, example_tools_dir
from redline.review.events import MessageEnd
from redline.sdk import create_agent_session


def test_the_demo_agent_answers_every_decision(tmp_path: Path) -> None:
    workspace = prepare_workspace(str(tmp_path / "copy"))
    provider = DemoProvider(demo_plan_path(), wait_scale=0.0)
    session = create_agent_session(
        workspace,
        provider,
        resolver="human",
        tool_paths=[example_tools_dir() / "batch_rename_preview.py"],
    )
    said: list[str] = []
    with session:
        session.subscribe(lambda e: said.append(e.text) if isinstance(e, MessageEnd) else None)
        assert session.prompt(DEMO_PROMPT) == "awaiting_review"
        pending = [action.id for action in session.store.snapshot()]
        assert len(pending) == 5
        said.clear()
        for action_id in pending:
            if action_id == "pa-4":
                outcome = session.resolve("discard", "no changelog yet", action_id=action_id)
            else:
                outcome = session.resolve("apply", f"ok {action_id}", action_id=action_id)
            assert not outcome.is_error, outcome.text
        assert session.resume() == "done"
    reply = " ".join(text for text in said if text)
    assert reply.startswith("Thanks for the review.")
    assert "pa-4 is discarded: Write: CHANGELOG.md (no changelog yet)" in reply
    assert "I will not redo it" in reply
    assert "pa-3 is applied: Edit: inventory/models.py (ok pa-3)." in reply
    assert "Next: run the project's tests (pytest)" in reply
    assert "All queued changes are resolved" not in reply  # the plan's canned line is gone


def test_read_report_reads_what_the_runtime_writes() -> None:
    text = resolution_reminder(
        [
            Resolution("applied", "pa-1", "Edit: a (b).py", "fine", "Applied: Edit: a (b).py."),
            Resolution("discarded", "pa-2", "Write: c", "", "Discarded: Write: c. Reason: "),
        ]
    )
    decisions = read_report(text)
    assert [(d.verb, d.action_id, d.label, d.reason) for d in decisions] == [
        ("applied", "pa-1", "Edit: a (b).py", "fine"),
        ("discarded", "pa-2", "Write: c", ""),
    ]


def test_the_answer_names_an_undone_action_by_its_id_and_the_missing_reason_once(
    tmp_path: Path,
) -> None:
    workspace = prepare_workspace(str(tmp_path / "copy"))
    provider = DemoProvider(demo_plan_path(), wait_scale=0.0)
    session = create_agent_session(
        workspace,
        provider,
        resolver="human",
        tool_paths=[example_tools_dir() / "batch_rename_preview.py"],
    )
    said: list[str] = []
    with session:
        session.subscribe(lambda e: said.append(e.text) if isinstance(e, MessageEnd) else None)
        assert session.prompt(DEMO_PROMPT) == "awaiting_review"
        pending = [action.id for action in session.store.snapshot()]
        said.clear()
        for action_id in pending:  # no reasons given at all
            verb = "discard" if action_id == "pa-4" else "apply"
            assert not session.resolve(verb, "", action_id=action_id).is_error
        undone = session.undo()
        assert not undone.is_error, undone.text
        assert session.resume() == "done"
    reply = " ".join(text for text in said if text)
    undone_id = [a for a in pending if a != "pa-4"][-1]  # the last one applied
    assert f"{undone_id} was undone: " in reply
    assert reply.lower().count("no reason given") == 1
    said_in_order = ", ".join(pending[:-1]) + " and " + pending[-1]
    assert f"(For {said_in_order}, no reason given.)" in reply
