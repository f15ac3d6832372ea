"""SDK sessions on the workspace queue: resolutions from other processes reach the model."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from redline.review.events import Event, PendingResolved, Undone
from redline.sdk import create_agent_session
from redline.workspace.queue import WorkspaceQueue

from .helpers import PreviewNoteTool, ProgrammableProvider, call, of_type, reply

HANG_GUARD = 60.0


def redline(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redline", *args],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env=dict(os.environ),
        check=False,
    )


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        if time.monotonic() > deadline:  # a hang guard, not a speed check
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return root


def test_session_queue_is_the_workspace_view(ws: Path) -> None:
    provider = ProgrammableProvider([reply(call("write", path="n.md", content="x\n"))])
    with create_agent_session(ws, provider, resolver="human", log_session=False) as session:
        assert session.prompt("add") == "awaiting_review"
        assert isinstance(session.queue, WorkspaceQueue)
        (record,) = session.queue.list()
        assert record.source.kind == "sdk"
        assert record.source.session_id == session.session_id
        assert record.applied_by == "preview"


def test_preview_action_applied_elsewhere_is_reported_to_the_model(ws: Path) -> None:
    provider = ProgrammableProvider([reply(call("write", path="n.md", content="x\n"))])
    events: list[Event] = []
    with create_agent_session(ws, provider, resolver="human", log_session=False) as session:
        session.subscribe(events.append)
        assert session.prompt("add") == "awaiting_review"
        (action,) = session.store.snapshot()
        done = redline("pending", "-C", str(ws), "apply", action.id, "--reason", "fine by me")
        assert done.returncode == 0, done.stderr
        wait_for(lambda: bool(of_type(events, PendingResolved)), "the pending_resolved event")
        (resolved,) = of_type(events, PendingResolved)
        assert (resolved.action_id, resolved.action, resolved.reason) == (
            action.id,
            "apply",
            "fine by me",
        )
        assert resolved.by == "human"
        assert not session.store.has_pending
        assert session.resume() == "done"
        texts = [m.content for m in provider.requests[-1].messages if m.role == "user"]
        report = [t for t in texts if "pending actions were resolved" in t]
        assert len(report) == 1
        assert f"applied {action.id}" in report[0] and "Reason: fine by me" in report[0]
    assert (ws / "n.md").read_text(encoding="utf-8") == "x\n"


def test_owner_action_resolved_elsewhere_runs_in_its_owner(ws: Path) -> None:
    note = PreviewNoteTool()
    provider = ProgrammableProvider([reply(call("note", text="hello"))])
    events: list[Event] = []
    with create_agent_session(
        ws, provider, resolver="human", custom_tools=[note], log_session=False
    ) as session:
        session.subscribe(events.append)
        assert session.prompt("note it") == "awaiting_review"
        (action,) = session.store.snapshot()
        listed = session.queue.get(action.id) if session.queue else None
        assert listed is not None and listed.applied_by == "owner"
        done = redline("pending", "-C", str(ws), "apply", action.id, "--reason", "ok")
        assert done.returncode == 0, done.stdout + done.stderr
        assert note.applied == [("hello", "ok")]
        wait_for(lambda: bool(of_type(events, PendingResolved)), "the pending_resolved event")
        assert not session.store.has_pending
        assert session.resume() == "done"
        report = [
            m.content
            for m in provider.requests[-1].messages
            if m.role == "user" and "pending actions were resolved" in m.content
        ]
        assert len(report) == 1 and f"applied {action.id}" in report[0]


def test_undo_from_another_process_is_reported_to_the_model(ws: Path) -> None:
    provider = ProgrammableProvider([reply(call("write", path="n.md", content="x\n"))])
    events: list[Event] = []
    with create_agent_session(ws, provider, resolver="human", log_session=False) as session:
        session.subscribe(events.append)
        assert session.prompt("add") == "awaiting_review"
        (action,) = session.store.snapshot()
        assert redline("pending", "-C", str(ws), "apply", action.id).returncode == 0
        wait_for(lambda: bool(of_type(events, PendingResolved)), "the pending_resolved event")
        undone = redline("undo", "-C", str(ws))
        assert undone.returncode == 0, undone.stdout + undone.stderr
        assert not (ws / "n.md").exists()
        wait_for(lambda: bool(of_type(events, Undone)), "the undone event")
        assert session.resume() == "done"
        (report,) = [
            m.content
            for m in provider.requests[-1].messages
            if m.role == "user" and "pending actions were resolved" in m.content
        ]
        assert f"applied {action.id}" in report and "Undid" in report


def test_custom_tool_preview_without_apply_is_applied_by_preview(ws: Path) -> None:
    from pydantic import BaseModel

    from redline.workspace.preview import FileCreate, Preview

    class Params(BaseModel):
        text: str

    class Jot:
        name = "jot"
        label = "Jot"
        description = "Queue a file"
        parameters = Params
        deferrable = True

        def __init__(self, api: object) -> None:
            self.api = api

        def execute(self, tool_call_id: str, params: Params) -> str:
            preview = Preview([FileCreate("jot.md", params.text)])
            return self.api.push_pending_action(label="Jot", preview=preview)  # type: ignore[attr-defined, no-any-return]

    provider = ProgrammableProvider([reply(call("jot", text="hi\n"))])
    with create_agent_session(
        ws, provider, resolver="human", custom_tools=[Jot], log_session=False
    ) as session:
        assert session.prompt("jot") == "awaiting_review"
        (action,) = session.store.snapshot()
        record = session.queue.get(action.id) if session.queue else None
        assert record is not None and record.applied_by == "preview"
    # The session has ended; any process can still apply it.
    done = redline("pending", "-C", str(ws), "apply", action.id)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ws / "jot.md").read_text(encoding="utf-8") == "hi\n"
