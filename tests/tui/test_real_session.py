"""The dashboard over the real scripted session: the demo plan, reviewed by keys."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher

from redline.tui.app import RedlineApp


@pytest.fixture
def demo_session(tmp_path: Path):  # type: ignore[no-untyped-def]
    from redline.commands.demo import prepare_workspace
    from redline.drivers.model.providers.scripted import ScriptedProvider
    from redline.resources import demo_plan_path, example_tools_dir
    from redline.sdk import create_agent_session

    workspace = prepare_workspace(str(tmp_path / "demo"))
    session = create_agent_session(
        workspace,
        ScriptedProvider(demo_plan_path(), wait_scale=0.0),
        resolver="human",
        tool_paths=[example_tools_dir() / "batch_rename_preview.py"],
        log_session=False,
    )
    yield session
    session.close()


async def test_review_the_demo_with_keys(demo_session) -> None:  # type: ignore[no-untyped-def]
    from redline.commands.demo import DEMO_PROMPT

    app = RedlineApp(demo_session, initial_prompt=DEMO_PROMPT, watcher_factory=FakeWatcher)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, lambda: app.agent_state == "waiting for review", timeout=60)
        assert demo_session.store.count == 5
        await pilot.press("r", *"keep txt names", "enter")  # Enter discards with the reason
        await wait_until(pilot, lambda: demo_session.store.count == 4 and not app.inbox.busy)
        assert "DISCARDED" in app.activity.plain and "keep txt names" in app.activity.plain
        while demo_session.store.has_pending:
            count = demo_session.store.count
            await pilot.press("y")
            await wait_until(
                pilot, lambda c=count: demo_session.store.count == c - 1 and not app.inbox.busy
            )  # type: ignore[misc]
        await wait_until(pilot, lambda: app.agent_state == "idle", timeout=60)
        assert "agent ended: done" in app.activity.plain
        assert (demo_session.cwd / "CHANGELOG.md").exists()
        await pilot.press("u")
        await wait_until(pilot, lambda: "undone" in app.activity.plain, timeout=60)
        # The undo names its journal entry and the action the apply came from.
        assert re.search(r"↶ undone \d{6} \(pa-\d+\) ", app.activity.plain)
