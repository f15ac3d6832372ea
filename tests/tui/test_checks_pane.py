"""The dashboard's checks: a badge per action, the findings pane, jumps, discard citing."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action, modify
from tests.tui.test_snapshots import _app
from textual.content import Content
from textual.pilot import Pilot

from redline.checks import CheckResult
from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.tui.widgets.checks_pane import ChecksPane
from redline.workspace.preview import Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

SIZE = (140, 40)
OLD = "import os\n\n\ndef f():\n    return os.sep\n"
NEW = "import os\nimport re\n\n\ndef f():\n    return os.sep\n"
RUFF = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache"]
RUFF += ["--output-format=json", "{files}"]


def checks_toml() -> str:
    command = ", ".join(json.dumps(part) for part in RUFF)
    check = f'[[checks]]\nname = "ruff"\ncommand = [{command}]\nformat = "ruff-json"\n'
    # The default test run needs no user namespaces (the sandbox's own tests have a marker).
    return f'{check}\n[check_runner]\nsandbox = "off"\n'


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def setup(root: Path) -> tuple[FakeSession, WorkspaceQueue, str]:
    (root / "m.py").write_text(OLD)
    queue = WorkspaceQueue(root)
    session = FakeSession(cwd=root)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    other = WorkspaceQueue(root)
    record = other.push(
        ActionDraft(
            "Edit m.py",
            Source.current("exec", "exec", "other"),
            source_tool_name="edit",
            preview=Preview([modify("m.py", OLD, NEW)]),
        )
    )
    other.close()
    return session, queue, record.id


async def test_badge_pane_jump_and_discard_citing(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    (isolated_user_config / "config.toml").write_text(checks_toml())
    session, queue, action_id = setup(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(
                pilot, lambda: app.stack.check_badges.get(action_id, "").plain == "✗ 1 new"
            )
            pane = app.inbox.query_one(ChecksPane)
            assert pane.display
            findings = pane.query_one("#checks-findings")
            await wait_until(pilot, lambda: findings.option_count == 1)
            assert "m.py:2 F401" in str(findings.get_option_at_index(0).prompt)
            findings.focus()
            await wait_until(pilot, lambda: findings.has_focus)
            findings.highlighted = 0
            await pilot.press("enter")
            view = app.preview.diff_view
            await wait_until(pilot, lambda: view.search_hit is not None)
            assert view._rows[view.search_hit].new_no == 2
            app.stack.focus()
            await pilot.press("N")
            await wait_until(pilot, lambda: queue.resolution(action_id) is not None)
            resolution = queue.resolution(action_id)
            assert resolution is not None and resolution.decision == "discard"
            assert resolution.reason.splitlines()[0] == "checks: ruff 1 new"
            assert "m.py:2: F401" in resolution.reason
    finally:
        queue.close()
    # The workspace was never written.
    assert (tmp_path / "m.py").read_text() == OLD


async def test_an_untrusted_workspace_says_why_its_checks_do_not_run(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    (tmp_path / ".redline").mkdir()
    (tmp_path / ".redline" / "config.toml").write_text(checks_toml())
    session, queue, action_id = setup(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stack.top_id == action_id)
            pane = app.inbox.query_one(ChecksPane)
            await wait_until(pilot, lambda: pane.display)
            header = str(pane.query_one("#checks-header").render())
            assert "ruff skipped" in header and "not trusted" in header
            assert app.stack.check_badges[action_id].plain == "checks skipped"
    finally:
        queue.close()


def passing_checks_toml() -> str:
    true = shutil.which("true") or "/bin/true"
    return (
        f'[[checks]]\nname = "ruff"\ncommand = ["{true}", "{{files}}"]\nformat = "exit-code"\n'
        f'[[checks]]\nname = "tests"\ncommand = ["{true}"]\nformat = "exit-code"\n'
        '[check_runner]\nsandbox = "off"\n'
    )


def test_one_row_when_every_check_passed_at_60x20(
    snap_compare: Any, isolated_user_config: Path
) -> None:
    """The pane is its top border alone: the one-line change's `+` line stays in view."""
    (isolated_user_config / "config.toml").write_text(passing_checks_toml())
    session = FakeSession()
    action = session.push(make_action("Edit: app.py", path="app.py", old="x = 1\n", new="x = 2\n"))

    async def passed(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, RedlineApp)
        await wait_until(
            pilot, lambda: app.stack.check_badges.get(action.id, Content("")).plain == "✓ pass"
        )
        pane = app.inbox.query_one(ChecksPane)
        await wait_until(pilot, lambda: pane.region.height == 1)
        await pilot.pause()

    assert snap_compare(_app(session), terminal_size=(60, 20), run_before=passed)


async def test_one_row_while_running_more_with_reasons(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    hang = [sys.executable, "-c", "import time; time.sleep(600)"]
    command = ", ".join(json.dumps(part) for part in hang)
    (isolated_user_config / "config.toml").write_text(
        f'[[checks]]\nname = "slow"\ncommand = [{command}]\nformat = "exit-code"\n'
        '[check_runner]\nsandbox = "off"\n'
    )
    session = FakeSession(cwd=tmp_path)
    action = session.push(make_action("Edit: app.py", path="app.py", old="x = 1\n", new="x = 2\n"))
    app = _app(session)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(
            pilot, lambda: app.stack.check_badges.get(action.id, Content("")).plain == "checks…"
        )
        pane = app.inbox.query_one(ChecksPane)
        await wait_until(pilot, lambda: pane.display and pane.region.height == 1)
        assert Content.from_markup(str(pane.border_title)).plain == "Checks slow running"
        # A reason (here: the configuration cannot be read) takes a row of its own.
        pane.show([CheckResult("slow", "error", why="it crashed")], "")
        await wait_until(pilot, lambda: pane.region.height == 2)
        header = str(pane.query_one("#checks-header").render())
        assert "slow error (it crashed)" in header


async def test_a_stored_result_of_an_older_config_says_so(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    from redline.workspace.queue.check_results import write_check_results

    (isolated_user_config / "config.toml").write_text(checks_toml())
    session, queue, action_id = setup(tmp_path)
    old = {"name": "ruff", "status": "pass", "new": [], "fixed": [], "config": "0" * 16}
    write_check_results(
        queue,
        action_id,
        {"id": action_id, "pid": 1, "pid_start": 0, "time": 0.0, "checks": [old]},
    )
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            pane = app.inbox.query_one(ChecksPane)
            await wait_until(pilot, lambda: pane.display)
            header = pane.query_one("#checks-header")
            await wait_until(pilot, lambda: header.display)
            text = str(header.render())
            assert "ruff out of date (the check's config changed): c runs it again" in text
    finally:
        queue.close()
