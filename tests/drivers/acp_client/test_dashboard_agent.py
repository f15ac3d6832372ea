"""`redline --agent`: the dashboard over the scripted ACP agent, driven by keys."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher

from redline.drivers.acp.session import AcpSession
from redline.drivers.acp.spec import resolve_agent
from redline.tui.app import RedlineApp
from redline.workspace.details import agent_ended

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


def _shown(app: RedlineApp) -> str | None:
    """The label of the action the dashboard shows and would resolve on `y` or `n` now.

    None while nothing is shown or the previous resolution is still being finished (the
    dashboard then ignores the keys).
    """
    action = app.preview.action
    return None if action is None or app.inbox.busy else action.label


async def test_apply_one_discard_another_with_a_reason(tmp_path: Path) -> None:
    steps = [
        {"do": "text", "text": "starting the edits"},
        {"do": "fs_write", "path": "app.py", "content": "print('bye')\n"},
        {"do": "fs_write", "path": "other.py", "content": "x = 1\n"},
    ]
    session, record = _session(tmp_path, steps)
    app = RedlineApp(session, initial_prompt="go", watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=(150, 45)) as pilot:
            # A key acts on the action the dashboard shows, not on the store: the store gets
            # the push on the agent's thread and the dashboard shows it a message later.
            await wait_until(pilot, lambda: _shown(app) == "Write: app.py", timeout=GUARD)
            await pilot.press("y")
            await wait_until(
                pilot, lambda: (session.cwd / "app.py").read_text() == "print('bye')\n", GUARD
            )
            await wait_until(pilot, lambda: _shown(app) == "Write: other.py", timeout=GUARD)
            assert session.store.count == 1
            await pilot.press("r", *"not this file", "enter", "n")
            await wait_until(
                pilot,
                lambda: sum(1 for h in _heard(record) if h["event"] == "prompt") == 2,
                timeout=GUARD,
            )
            await wait_until(pilot, lambda: app.agent_state == "idle", timeout=GUARD)
            assert "starting the edits" in app.activity.plain
            assert "Write: other.py" in app.activity.plain
    finally:
        session.close()
    heard = _heard(record)
    assert not (session.cwd / "other.py").exists()
    write = [h for h in heard if h["event"] == "write"]
    assert write[1]["error"] == "Discarded by the reviewer: not this file"
    last_prompt = [h["text"] for h in heard if h["event"] == "prompt"][-1]
    assert "Write: other.py: discarded. Reason: not this file" in str(last_prompt)
    assert "Write: app.py: applied" in str(last_prompt)


def test_crash_while_a_write_is_held_keeps_it_queued(tmp_path: Path) -> None:
    steps = [{"do": "write_and_crash", "path": "app.py", "content": "changed\n"}]
    session, record = _session(tmp_path, steps)
    seen: list[str] = []
    session.subscribe(lambda event: seen.append(event.type))
    with session:
        assert session.prompt("go") == "error"
        assert {"event": "crashing", "answered": False} in _heard(record)
        (action,) = session.store.snapshot()
        assert action.label == "Write: app.py"
        ended = agent_ended(action.details)
        assert ended == "was killed by SIGKILL" or "exited with status 9" in (ended or "")
        # Applying it later writes what the agent asked for, through safe apply.
        result = session.resolve("apply", "fine")
        assert not result.is_error
    assert (session.cwd / "app.py").read_text() == "changed\n"
    assert "error" in seen
