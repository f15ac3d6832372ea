"""The dashboard's checks: a badge per action, the findings pane, jumps, discard citing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, modify

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
