"""Snapshot tests: fixed states of the dashboard, no live agent thread, nothing random.

Regenerate after an intended visual change with ``uv run pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

from typing import Any

from tests.tui.fakes import FakeSession, make_action, multi_file_preview
from textual.pilot import Pilot

from redline.review.events import (
    AgentState,
    ErrorEvent,
    MessageDelta,
    MessageEnd,
    ResolutionFailed,
    ToolEnd,
    ToolStart,
)
from redline.review.result import ToolResult
from redline.tui.app import RedlineApp

SIZE = (130, 38)
PYTHON_OLD = "import os\n\n\ndef greet(name):\n    return 'hi ' + name\n\n\nprint(greet('x'))\n"
PYTHON_NEW = (
    "import os\n\n\ndef greet(name: str) -> str:\n    return f'hi {name}'\n\n\nprint(greet('x'))\n"
)


class _NoWatcher:
    def __init__(self, *_args: object) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def _app(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=_NoWatcher)


async def _settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await pilot.pause()


def test_empty(snap_compare: Any) -> None:
    assert snap_compare(_app(FakeSession()), terminal_size=SIZE, run_before=_settle)


def test_one_action(snap_compare: Any) -> None:
    session = FakeSession()
    session.push(
        make_action(
            "Add type hints to greet",
            path="src/greet.py",
            old=PYTHON_OLD,
            new=PYTHON_NEW,
            source="ast_edit",
        )
    )
    assert snap_compare(_app(session), terminal_size=SIZE, run_before=_settle)


def test_deep_stack(snap_compare: Any) -> None:
    session = FakeSession()
    for index in range(40):
        session.push(make_action(f"Edit number {index}", path=f"src/module_{index}.py"))
    session.push(
        make_action("Batch rename", preview=multi_file_preview(), source="batch_rename_preview")
    )
    assert snap_compare(_app(session), terminal_size=SIZE, run_before=_settle)


def test_stale_top(snap_compare: Any) -> None:
    session = FakeSession()
    session.push(make_action("Earlier edit"))
    session.push(
        make_action(
            "Rename helper", path="src/greet.py", old=PYTHON_OLD, new=PYTHON_NEW, source="ast_edit"
        )
    )
    session.store.mark_stale("pa-2", "src/greet.py changed on disk since the preview")
    assert snap_compare(_app(session), terminal_size=SIZE, run_before=_settle)


def test_failed_apply(snap_compare: Any) -> None:
    session = FakeSession()
    session.push(
        make_action(
            "Write config", path="config.toml", old="a = 1\n", new="a = 2\n", source="write"
        )
    )

    async def fail(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, RedlineApp)
        session.emit(
            ResolutionFailed(
                message="Apply failed for Write config: config.toml: permission denied. "
                "The action is still pending.",
                action_id="pa-1",
                action="apply",
                reason="no reason given",
                label="Write config",
                source_tool_name="write",
                by="human",
            )
        )
        await _settle(pilot)

    assert snap_compare(_app(session), terminal_size=SIZE, run_before=fail)


def test_agent_error(snap_compare: Any) -> None:
    session = FakeSession(model_label="openai:gpt-4o-mini", scripted=False)

    async def error(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, RedlineApp)
        session.emit(MessageDelta(text="Let me look at the code."))
        session.emit(MessageEnd(text="Let me look at the code."))
        session.emit(ToolStart(tool_call_id="c1", name="read", args={"path": "src/greet.py"}))
        session.emit(
            ToolEnd(
                tool_call_id="c1",
                name="read",
                result=ToolResult.text_result("import os"),
                is_error=False,
            )
        )
        session.emit(ErrorEvent(message="openai: 401 Unauthorized (check OPENAI_API_KEY)"))
        app.agent_state = AgentState.FAILED
        await _settle(pilot)

    assert snap_compare(_app(session), terminal_size=SIZE, run_before=error)


def test_help_screen(snap_compare: Any) -> None:
    assert snap_compare(
        _app(FakeSession()), terminal_size=SIZE, press=["question_mark"], run_before=_settle
    )
