"""Issue 47's "done when", in the dashboard with Claude Code's hook in processes of their
own: the agent proposes, the person comments on two lines and requests changes, the hook
tells the agent, its next proposal is revision 2 showing only what changed with its
comments carried, and the person applies two of its three hunks."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher

from redline.tui.app import RedlineApp
from redline.tui.screens.conversation import ConversationScreen
from redline.workspace.queue import WorkspaceQueue

BASE = "".join(f"line {n}\n" for n in range(1, 31))
FIRST = BASE.replace("line 2\n", "LINE 2\n").replace("line 15\n", "LINE 15\n")
FIRST = FIRST.replace("line 28\n", "LINE 28\n")
SECOND = FIRST.replace("LINE 2\n", "Line two\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "a.txt").write_text(BASE, encoding="utf-8")
    return ws


@pytest.fixture
def session(root: Path) -> Iterator[Any]:
    from redline.drivers.model.providers.unconfigured import UnconfiguredProvider
    from redline.sdk import create_agent_session

    made = create_agent_session(
        root, UnconfiguredProvider("no model"), resolver="human", log_session=False
    )
    yield made
    made.close()


def hook(root: Path, content: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "redline", "hook", "claude"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(recorded("pre-write-2.json", root, content=content))
    proc.stdin.close()
    return proc


async def answer(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    out = (await asyncio.to_thread(proc.stdout.read)).decode()
    await asyncio.to_thread(proc.wait, 60)
    return dict(json.loads(out)["hookSpecificOutput"])


def ids(root: Path) -> list[str]:
    with WorkspaceQueue(root) as queue:
        return [r.id for r in queue.list()]


def rows(app: RedlineApp) -> list[str]:
    screen = app.screen
    assert isinstance(screen, ConversationScreen)
    count = screen.options.option_count
    return [str(screen.options.get_option_at_index(i).prompt) for i in range(count)]


async def comment_on(pilot: Any, app: RedlineApp, shown: str, text: str) -> None:
    screen = app.screen
    assert isinstance(screen, ConversationScreen)
    screen.options.highlighted = next(i for i, r in enumerate(rows(app)) if shown in r)
    await pilot.press("a", *text, "enter")
    await wait_until(pilot, lambda: any(f": {text}" in r for r in rows(app)))


async def test_comment_request_changes_revision_2_apply_two_of_three(
    root: Path, session: Any
) -> None:
    first = hook(root, FIRST)
    second: subprocess.Popen[bytes] | None = None
    try:
        app = RedlineApp(session, watcher_factory=FakeWatcher)
        async with app.run_test(size=(150, 45)) as pilot:
            await wait_until(pilot, lambda: app.stack.selected_id == "pa-1")
            await pilot.press("m")
            await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
            await comment_on(pilot, app, "+LINE 2", "spell it out")
            await comment_on(pilot, app, "+LINE 15", "fine")
            await pilot.press("n")  # Request changes
            told = await answer(first)
            assert told["permissionDecision"] == "deny"
            assert "a.txt:2: spell it out\na.txt:15: fine" in told["permissionDecisionReason"]
            # The agent's next proposal in the same session.
            second = hook(root, SECOND)
            await wait_until(pilot, lambda: app.stack.selected_id == "pa-2")
            await pilot.press("m")
            await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
            shown = rows(app)
            assert any("-LINE 2" in r for r in shown) and any("+Line two" in r for r in shown)
            assert not any("LINE 15" in r and "+" in r.split("LINE")[0] for r in shown)
            assert any("c-1 line 2 outdated: spell it out" in r for r in shown)
            assert any("c-2 line 15: fine" in r for r in shown)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, ConversationScreen))
            # Two of its three hunks.
            await wait_until(pilot, lambda: app.inbox.controls.parts == 3)
            await pilot.press("right_curly_bracket", "space", "right_curly_bracket", "space")
            await wait_until(pilot, lambda: app.inbox.controls.picked == 2)
            await pilot.press("y")
            said = await answer(second)
            await wait_until(pilot, lambda: not app.inbox.busy)
        assert said["permissionDecision"] == "deny"
        assert said["permissionDecisionReason"].startswith("Applied in part as reviewed (pa-2)")
        assert (root / "a.txt").read_text(encoding="utf-8") == SECOND.replace(
            "LINE 28\n", "line 28\n"
        )
        [rest] = ids(root)
        assert rest not in ("pa-1", "pa-2")
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
