"""More of the dashboard over a real session (scripted plans, the real store and files)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher

from redline.commands.dashboard import NO_MODEL
from redline.drivers.model.providers.scripted import ScriptedProvider
from redline.drivers.model.providers.unconfigured import UnconfiguredProvider
from redline.drivers.model.session import AgentSession
from redline.review.events import AgentState, PendingResolved
from redline.sdk import create_agent_session
from redline.tui.app import RedlineApp


def scripted(
    tmp_path: Path, steps: list[dict[str, Any]], wait_scale: float = 0.0
) -> ScriptedProvider:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"name": "flows", "steps": steps}), encoding="utf-8")
    return ScriptedProvider(plan, wait_scale=wait_scale)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n", encoding="utf-8")
    return root


@pytest.fixture
def sessions() -> Iterator[list[AgentSession]]:
    opened: list[AgentSession] = []
    yield opened
    for session in opened:
        session.close()


def open_session(sessions: list[AgentSession], root: Path, provider: Any) -> AgentSession:
    session = create_agent_session(root, provider, resolver="human", log_session=False)
    sessions.append(session)
    return session


EDIT = {"call": [{"tool": "edit", "args": {"path": "a.py", "old": "x = 1", "new": "x = 2"}}]}


async def test_stale_top_is_refused_then_repreviewed_and_applied(
    tmp_path: Path, workspace: Path, sessions: list[AgentSession]
) -> None:
    session = open_session(sessions, workspace, scripted(tmp_path, [EDIT, {"say": "thanks"}]))
    app = RedlineApp(session, initial_prompt="bump x", watcher_factory=FakeWatcher)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.agent_state == "waiting for review", timeout=60)
        (workspace / "a.py").write_text("# note\nx = 1\n", encoding="utf-8")
        FakeWatcher.instances[-1].fire("a.py")
        await wait_until(
            pilot, lambda: session.store.peek() is not None and session.store.peek().stale
        )  # type: ignore[union-attr]
        await pilot.press("y")
        await pilot.pause(0.2)
        assert session.store.count == 1
        assert (workspace / "a.py").read_text(encoding="utf-8") == "# note\nx = 1\n"
        await pilot.press("p")
        # The re-preview is on the dashboard (not only in the store) and the press is done: a
        # `y` before that decides the stale action still shown, which is refused again.
        await wait_until(pilot, lambda: app.inbox.preview.shown_id == "pa-2" and not app.inbox.busy)
        await pilot.press("y")
        await wait_until(pilot, lambda: not session.store.has_pending)
        await wait_until(pilot, lambda: app.agent_state == "idle", timeout=60)
    assert (workspace / "a.py").read_text(encoding="utf-8") == "# note\nx = 2\n"


async def test_apply_button_with_reason_reaches_the_session(
    tmp_path: Path, workspace: Path, sessions: list[AgentSession]
) -> None:
    session = open_session(sessions, workspace, scripted(tmp_path, [EDIT, {"say": "ok"}]))
    resolved: list[PendingResolved] = []
    session.subscribe(lambda e: resolved.append(e) if isinstance(e, PendingResolved) else None)
    app = RedlineApp(session, initial_prompt="bump x", watcher_factory=FakeWatcher)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.agent_state == "waiting for review", timeout=60)
        await pilot.press("r", *"two is right", "escape")
        await pilot.click("#apply")
        await wait_until(pilot, lambda: bool(resolved))
        await wait_until(pilot, lambda: app.agent_state == "idle", timeout=60)
    assert (resolved[0].action, resolved[0].reason, resolved[0].by) == (
        "apply",
        "two is right",
        "human",
    )
    assert (workspace / "a.py").read_text(encoding="utf-8") == "x = 2\n"


async def test_stop_ends_a_running_agent_quickly(
    tmp_path: Path, workspace: Path, sessions: list[AgentSession]
) -> None:
    # The plan waits 600 s: only the stop ends the run within the hang guards.
    provider = scripted(tmp_path, [{"wait": 600}, {"say": "too late"}], wait_scale=1.0)
    session = open_session(sessions, workspace, provider)
    app = RedlineApp(session, initial_prompt="wait", watcher_factory=FakeWatcher)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.agent_state is AgentState.RUNNING, timeout=60)
        await pilot.press("ctrl+x")
        # Stopping takes well under a second; the bound only guards against a hang.
        await wait_until(pilot, lambda: not session.running, timeout=60)
        assert app.agent_state is AgentState.STOPPED
        assert session.last_status == "aborted"


async def test_quit_while_the_agent_runs_never_hangs(
    tmp_path: Path, workspace: Path, sessions: list[AgentSession]
) -> None:
    # The plan waits 600 s: quitting must not wait for it (hang guards only).
    provider = scripted(tmp_path, [{"wait": 600}, {"say": "too late"}], wait_scale=1.0)
    session = open_session(sessions, workspace, provider)
    app = RedlineApp(session, initial_prompt="wait", watcher_factory=FakeWatcher)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.agent_state is AgentState.RUNNING, timeout=60)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, timeout=60)
    assert not session.running


async def test_no_model_configured_still_opens_and_explains(
    workspace: Path, sessions: list[AgentSession]
) -> None:
    session = open_session(sessions, workspace, UnconfiguredProvider(NO_MODEL))
    app = RedlineApp(session, watcher_factory=FakeWatcher, startup_notices=[NO_MODEL])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "redline demo" in app.activity.plain
        await pilot.click("#prompt")
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: app.agent_state == "failed", timeout=60)
        assert app.activity.plain.count("No model is configured") >= 2


async def test_undo_greys_out_and_a_second_undo_says_why_once(
    tmp_path: Path, workspace: Path, sessions: list[AgentSession]
) -> None:
    session = open_session(sessions, workspace, scripted(tmp_path, [EDIT, {"say": "ok"}]))
    app = RedlineApp(session, initial_prompt="bump x", watcher_factory=FakeWatcher)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.agent_state == "waiting for review", timeout=60)
        # Nothing applied yet: the journal has nothing to undo, so `u` is greyed out.
        await wait_until(pilot, lambda: app.check_action("undo", ()) is None)
        await pilot.press("y")
        await wait_until(pilot, lambda: app.agent_state == "idle", timeout=60)
        await wait_until(pilot, lambda: app.check_action("undo", ()) is True)
        await pilot.press("u")
        await wait_until(pilot, lambda: "undone" in app.activity.plain and not app.inbox.busy)
        await wait_until(pilot, lambda: app.check_action("undo", ()) is None)
        # The palette's "Undo last apply" still runs and says why nothing happened.
        app.action_undo()
        await wait_until(
            pilot, lambda: "Nothing to undo" in app.activity.plain and not app.inbox.busy
        )
        await pilot.pause()
        assert app.activity.plain.count("Nothing to undo") == 1
    assert (workspace / "a.py").read_text(encoding="utf-8") == "x = 1\n"
