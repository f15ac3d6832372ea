"""`redline --agent`: the dashboard when the external agent waits on review, crashes or is
stopped, driven by keys against the scripted ACP agent (a real subprocess)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher

from redline.drivers.acp.session import AcpSession
from redline.drivers.acp.spec import resolve_agent
from redline.review.events import AgentState
from redline.tui.app import RedlineApp
from redline.tui.widgets.ended_banner import EndedBanner
from redline.tui.widgets.prompt_input import PromptInput

AGENT = Path(__file__).with_name("scripted_agent.py")
GUARD = 120


def _session(tmp_path: Path, steps: list[dict[str, object]]) -> tuple[AcpSession, Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    record = tmp_path / "record.jsonl"
    command = shlex.join([sys.executable, str(AGENT), str(script), str(record)])
    return AcpSession(root, resolve_agent(command, root), log_session=False), record


def _heard(record: Path) -> list[dict[str, object]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


def _prompts(record: Path) -> list[str]:
    return [str(h["text"]) for h in _heard(record) if h["event"] == "prompt"]


def _banner(app: RedlineApp) -> EndedBanner:
    return app.screen_stack[0].query_one(EndedBanner)


def _live(app: RedlineApp, action: str) -> bool:
    return bool(app.check_action(action, ()))


async def test_waiting_for_review_then_running_again(tmp_path: Path) -> None:
    gate = tmp_path / "go-on"
    steps = [
        {"do": "fs_write", "path": "app.py", "content": "print('bye')\n"},
        # Holds the turn open (nothing held): the dashboard must show it running again.
        {"do": "wait_file", "path": str(gate)},
        {"do": "text", "text": "after the write"},
    ]
    session, record = _session(tmp_path, steps)
    app = RedlineApp(session, initial_prompt="go", watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    states: list[AgentState] = []
    try:
        async with app.run_test(size=(150, 45)) as pilot:
            # The agent's only open request is the held write: it waits on the person.
            await wait_until(pilot, lambda: app.agent_state == "waiting for review", GUARD)
            # From here (it waits until y: nothing else moves it), every state it takes. A
            # watch made before could miss the first ones: the agent may get here before it.
            states.append(app.agent_state)
            app.watch(app, "agent_state", lambda state: states.append(state), init=False)
            # The status line and the footer follow the state on their own refresh: awaited
            # (the held write keeps it waiting until y).
            await wait_until(
                pilot, lambda: app.status_line.state is AgentState.WAITING_FOR_REVIEW, GUARD
            )
            assert session.store.count == 1
            # Its turn is still open: stop stays live while it waits.
            await wait_until(pilot, lambda: _live(app, "stop_agent"), GUARD)
            await pilot.press("y")
            await wait_until(pilot, lambda: app.agent_state == "running", GUARD)
            gate.write_text("")
            await wait_until(pilot, lambda: len(_prompts(record)) == 2, GUARD)
            await wait_until(pilot, lambda: app.agent_state == "idle", GUARD)
            assert not _banner(app).ended
    finally:
        session.close()
    assert (session.cwd / "app.py").read_text() == "print('bye')\n"
    assert "Write: app.py: applied" in _prompts(record)[1]
    assert states[0] is AgentState.WAITING_FOR_REVIEW
    assert AgentState.RUNNING in states[1:], states
    assert states[-1] is AgentState.IDLE
    assert app.agent_ended is None


async def test_crash_with_a_held_write_shows_the_end_and_keeps_review(tmp_path: Path) -> None:
    steps = [
        {"do": "text", "text": "writing now"},
        {"do": "write_and_crash", "path": "app.py", "content": "changed\n"},
    ]
    session, record = _session(tmp_path, steps)
    app = RedlineApp(session, initial_prompt="go", watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=(150, 45)) as pilot:
            await wait_until(pilot, lambda: app.agent_state == "failed", GUARD)
            # The session marks what the agent left with its end: the stack shows it.
            await wait_until(pilot, lambda: bool(app.stack.rows and app.stack.rows[0].ended), GUARD)
            assert app.stack.rows[0].ended == "exited with status 9"
            row = app.stack._line(app.stack.rows[0], 0, 0, 140).plain
            assert "agent ended" in row
            assert app.agent_ended == "exited with status 9"
            banner = _banner(app)
            # The banner is redrawn from the session's events: await it, not the next frame.
            await wait_until(
                pilot,
                lambda: (
                    banner.ended
                    and banner.display
                    and "1 action it left stays for review" in str(banner.render())
                ),
                GUARD,
            )
            shown = str(banner.render())
            assert "python via ACP exited with status 9" in shown
            assert "1 action it left stays for review" in shown
            # The activity says how the process ended once; the turn's error adds only
            # the agent's last output, and no second "agent ended" line follows.
            plain = app.activity.plain
            assert plain.count("exited with status 9") == 1
            assert "agent ended" not in plain
            assert "scripted agent started" in plain
            # Keys that need a live agent are off; review keys work on what it left.
            assert not _live(app, "stop_agent")
            assert not _live(app, "focus_prompt")
            assert app.screen_stack[0].query_one("#prompt", PromptInput).disabled
            assert _live(app, "apply_top") and _live(app, "discard_top")
            header = str(app.preview.query_one("#preview-header").render())
            assert "AGENT ENDED" in header and "exited with status 9" in header
            await pilot.press("i")
            assert not isinstance(app.focused, PromptInput)
            await pilot.press("y")
            await wait_until(pilot, lambda: session.store.count == 0, GUARD)
            await wait_until(pilot, lambda: "nothing pending" in str(banner.render()), GUARD)
            # Resuming is refused with the reason, without starting a run.
            app.action_resume_session()
            await pilot.pause()
            assert app.agent_state == "failed"
    finally:
        session.close()
    assert {"event": "crashing", "answered": False} in _heard(record)
    assert (session.cwd / "app.py").read_text() == "changed\n"
    assert len(_prompts(record)) == 1


async def test_crash_without_a_held_request(tmp_path: Path) -> None:
    session, _record = _session(tmp_path, [{"do": "crash", "status": 3}])
    app = RedlineApp(session, initial_prompt="go", watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: app.agent_ended is not None, GUARD)
            await wait_until(pilot, lambda: app.agent_state == "failed", GUARD)
            assert app.agent_ended == "exited with status 3"
            assert "nothing pending" in str(_banner(app).render())
            assert app.activity.plain.count("exited with status 3") == 1
            assert not _live(app, "focus_prompt")
    finally:
        session.close()


async def test_stop_is_not_an_ended_agent(tmp_path: Path) -> None:
    session, record = _session(tmp_path, [{"do": "wait_cancel"}])
    app = RedlineApp(session, initial_prompt="go", watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=(150, 45)) as pilot:
            await wait_until(pilot, lambda: "waiting" in app.activity.plain, GUARD)
            assert app.agent_state == "running"
            await pilot.press("ctrl+x")
            assert app.agent_state == "stopped"
            await wait_until(pilot, lambda: {"event": "cancel"} in _heard(record), GUARD)
            assert app.agent_ended is None
            assert not _banner(app).ended
            assert "agent stopped by you" in app.activity.plain
            # The agent lives on: the prompt key works and a new prompt reaches it.
            assert _live(app, "focus_prompt")
            await pilot.press("i", *"again", "enter")
            await wait_until(pilot, lambda: len(_prompts(record)) == 2, GUARD)
            await wait_until(pilot, lambda: app.agent_state == "idle", GUARD)
            assert "Noted (2)." in app.activity.plain
    finally:
        session.close()
    assert _prompts(record)[1] == "again"


async def test_stop_while_waiting_for_review_keeps_the_write_for_review(tmp_path: Path) -> None:
    steps = [{"do": "fs_write", "path": "app.py", "content": "print('later')\n"}]
    session, record = _session(tmp_path, steps)
    app = RedlineApp(session, initial_prompt="go", watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=(150, 45)) as pilot:
            await wait_until(pilot, lambda: app.agent_state == "waiting for review", GUARD)
            assert _live(app, "stop_agent")
            await pilot.press("ctrl+x")
            assert app.agent_state == "stopped"
            await wait_until(pilot, lambda: {"event": "cancel"} in _heard(record), GUARD)
            assert not _live(app, "stop_agent")
            assert app.agent_ended is None
            # The held write was refused to the agent but stays for review.
            await wait_until(
                pilot, lambda: any(h["event"] == "write" for h in _heard(record)), GUARD
            )
            assert session.store.count == 1
            await pilot.press("y")
            await wait_until(pilot, lambda: session.store.count == 0, GUARD)
            assert app.agent_state == "stopped"
    finally:
        session.close()
    assert (session.cwd / "app.py").read_text() == "print('later')\n"
    assert len(_prompts(record)) == 1
