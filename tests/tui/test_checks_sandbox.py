"""The dashboard's propose-time checks run sandboxed; with no sandbox they stop, and the
dashboard says why once (per user)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.checks.conftest import PYTEST, make_project, snapshot
from tests.checks.escape import python_read_binds, trap
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher

from redline.checks import sandbox
from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.workspace.preview import FileCreate, Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

SIZE = (140, 40)
NOTICE_TITLE = "Checks need a sandbox"


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def check_toml(name: str, command: list[str], fmt: str, extra: str = "") -> str:
    argv = ", ".join(json.dumps(part) for part in command)
    return f'[[checks]]\nname = "{name}"\ncommand = [{argv}]\nformat = "{fmt}"\n{extra}'


def open_app(root: Path) -> tuple[RedlineApp, WorkspaceQueue]:
    queue = WorkspaceQueue(root)
    session = FakeSession(cwd=root)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    return RedlineApp(session, watcher_factory=FakeWatcher), queue  # type: ignore[arg-type]


def push_from_elsewhere(root: Path, path: str, text: str) -> str:
    """The proposal arrives from another process's queue (an agent's hook, MCP, exec)."""
    other = WorkspaceQueue(root)
    record = other.push(
        ActionDraft(
            f"Create {path}",
            Source.current("mcp", "cursor", "other"),
            source_tool_name="propose_edit",
            preview=Preview([FileCreate(path, text)]),
        )
    )
    other.close()
    return record.id


def notices(app: RedlineApp) -> list[str]:
    return [str(n.message) for n in app._notifications if n.title == NOTICE_TITLE]


async def test_no_sandbox_stops_the_checks_and_says_so_once(
    tmp_path: Path, isolated_user_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "kind", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    marker = tmp_path / "ran"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    (isolated_user_config / "config.toml").write_text(check_toml("t", command, "exit-code"))
    root = make_project(tmp_path / "ws", git=False)
    first = push_from_elsewhere(root, "a.py", "x = 1\n")
    app, queue = open_app(root)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(
                pilot, lambda: app.stack.check_badges.get(first, "").plain == "✗ error"
            )
            await wait_until(pilot, lambda: bool(notices(app)))
            [text] = notices(app)
            assert "Checks did not run: sandbox unavailable: bwrap is not installed" in text
            assert "redline sandbox" in text
    finally:
        queue.close()
    assert not marker.exists()
    # The next dashboard (and the next action) shows the error, not the notice again.
    second = push_from_elsewhere(root, "b.py", "y = 1\n")
    app, queue = open_app(root)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(
                pilot, lambda: app.stack.check_badges.get(second, "").plain == "✗ error"
            )
            await pilot.pause()
            assert notices(app) == []
    finally:
        queue.close()
    assert not marker.exists()


@pytest.mark.sandbox
async def test_the_propose_time_run_is_sandboxed(
    tmp_path: Path,
    isolated_user_config: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    why = sandbox.unavailable()
    if why:
        pytest.skip(f"no sandbox can be made on this machine: {why}")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    root = make_project(tmp_path / "ws", git=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    text = check_toml("pytest", PYTEST, "pytest", "timeout = 120\n")
    text += f"\n[check_runner]\nread = {python_read_binds()}\n"
    (isolated_user_config / "config.toml").write_text(text)
    before = snapshot(root)
    with trap(root, outside, home) as aim:
        action = push_from_elsewhere(root, "tests/test_escape.py", aim.source())
        app, queue = open_app(root)
        try:
            async with app.run_test(size=SIZE) as pilot:
                # Nobody asked: receiving the proposal started its check.
                await wait_until(
                    pilot,
                    lambda: app.stack.check_badges.get(action, "").plain == "✗ 1 new",
                    timeout=120,
                )
                survivors = aim.survivors()
        finally:
            queue.close()
    assert survivors == []
    assert aim.accepted == []
    assert snapshot(root) == before
    assert list(home.iterdir()) == []
    assert sorted(p.name for p in outside.iterdir()) == ["agent.sock"]


async def test_the_pane_says_a_workspace_cannot_turn_the_sandbox_off(
    tmp_path: Path, isolated_user_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redline.tui.widgets.checks_pane import ChecksPane

    monkeypatch.setattr(sandbox, "kind", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    command = [sys.executable, "-c", "pass"]
    (isolated_user_config / "config.toml").write_text(check_toml("t", command, "exit-code"))
    root = make_project(tmp_path / "ws", git=False)
    (root / ".redline").mkdir(exist_ok=True)
    (root / ".redline" / "config.toml").write_text('[check_runner]\nsandbox = "off"\n')
    action = push_from_elsewhere(root, "a.py", "x = 1\n")
    app, queue = open_app(root)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(
                pilot, lambda: app.stack.check_badges.get(action, "").plain == "✗ error"
            )
            pane = app.inbox.query_one(ChecksPane)
            await wait_until(pilot, lambda: pane.display)
            header = str(pane.query_one("#checks-header").render())
            assert "check_runner.sandbox ignored: only your own config.toml" in header
    finally:
        queue.close()
