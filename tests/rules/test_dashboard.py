"""The dashboard's `a`: a session rule for the selected action, which then decides."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher

from redline.drivers.model.providers.scripted import ScriptedProvider
from redline.sdk import create_agent_session
from redline.tui.app import RedlineApp


def edit(path: str, old: str, new: str) -> dict[str, object]:
    return {"call": [{"tool": "edit", "args": {"path": path, "old": old, "new": new}}]}


async def test_always_apply_adds_a_session_rule_that_decides(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (root / "tests" / "b.py").write_text("y = 1\n", encoding="utf-8")
    plan = tmp_path / "plan.json"
    steps = [edit("tests/a.py", "x = 1", "x = 2"), edit("tests/b.py", "y = 1", "y = 2")]
    plan.write_text(json.dumps({"name": "a", "steps": [*steps, {"say": "done"}]}))
    session = create_agent_session(
        root, ScriptedProvider(plan, wait_scale=0), resolver="human", log_session=False
    )
    try:
        app = RedlineApp(session, initial_prompt="go", watcher_factory=FakeWatcher)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.agent_state == "waiting for review", timeout=60)
            await pilot.press("a")
            await wait_until(pilot, lambda: app.screen.is_modal)
            await pilot.press("y")
            # the rule applies the waiting edit at once ...
            await wait_until(pilot, lambda: not session.store.has_pending, timeout=60)
            assert (root / "tests" / "a.py").read_text(encoding="utf-8") == "x = 2\n"
            assert session.rules is not None
            assert [r.name for r in session.rules.session_rules] == [
                "always apply edit changes under tests/**"
            ]
            # ... and the next one as it is pushed, once the dashboard resumes the agent
            await wait_until(pilot, lambda: app.agent_state == "idle", timeout=60)
        assert (root / "tests" / "b.py").read_text(encoding="utf-8") == "y = 2\n"
    finally:
        session.close()


async def test_the_dashboard_says_an_untrusted_workspace_has_ignored_rules(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    (root / ".redline").mkdir(parents=True, mode=0o700)
    (root / ".redline" / "rules.toml").write_text(
        '[[rule]]\nname = "repo"\ndecision = "apply"\n', encoding="utf-8"
    )
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"name": "a", "steps": [{"say": "hi"}]}))
    session = create_agent_session(
        root, ScriptedProvider(plan, wait_scale=0), resolver="human", log_session=False
    )
    try:
        app = RedlineApp(session, watcher_factory=FakeWatcher)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_until(pilot, lambda: "not trusted" in app.activity.plain)
            assert "Review rules:" in app.activity.plain
            assert "rules.toml: ignored" in app.activity.plain
    finally:
        session.close()
