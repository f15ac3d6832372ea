"""Issue 45: in ``redline --all`` the propose-time checks run for the selected action only,
in its own workspace, under that workspace's trust; nothing runs on opening.

Three workspaces, their actions queued by another process: ``api`` (trusted) declares
``api-lint``, ``web`` (trusted) declares ``web-tests``, ``docs`` (not trusted) declares
``docs-check``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.test_all_inbox import BASE, _queue_elsewhere, _shown
from textual.content import Content

from redline.checks.results import load_results
from redline.review.all_source import AllWorkspacesSource
from redline.tui.all_app import AllWorkspacesApp
from redline.tui.source_checks import SelectedChecks
from redline.workspace.queue import WorkspaceQueue

TRUE = shutil.which("true") or "/bin/true"


def _workspace(base: Path, name: str, check: str, *, trusted: bool) -> Path:
    from redline.trust import trust

    root = base / name
    root.mkdir(parents=True)
    (root / "a.txt").write_text(BASE)
    (root / ".redline").mkdir()
    (root / ".redline" / "config.toml").write_text(
        f'[queue]\nworkspace_id = "ws{name}"\n\n'
        f'[[checks]]\nname = "{check}"\ncommand = ["{TRUE}", "{{files}}"]\n'
        'format = "exit-code"\n'
    )
    if trusted:
        trust(root)
    return root.resolve()


def _title(checks: SelectedChecks) -> str:
    return Content.from_markup(str(checks.pane.border_title)).plain


def _stored(root: Path, local: str = "pa-1") -> list[tuple[str, str]]:
    with WorkspaceQueue(root) as queue:
        return [(r.name, r.status) for r in load_results(queue, local).results]


def _done(root: Path) -> bool:
    stored = _stored(root)
    return bool(stored) and all(status != "running" for _, status in stored)


async def test_the_selected_actions_workspace_checks_run_for_it_only(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    (isolated_user_config / "config.toml").write_text('[check_runner]\nsandbox = "off"\n')
    api = _workspace(tmp_path, "api", "api-lint", trusted=True)
    web = _workspace(tmp_path, "web", "web-tests", trusted=True)
    docs = _workspace(tmp_path, "docs", "docs-check", trusted=False)
    _queue_elsewhere(api, "mcp", "cursor", "Edit api a.txt")
    _queue_elsewhere(web, "exec", "exec", "Edit web a.txt")
    _queue_elsewhere(docs, "mcp", "zed", "Edit docs a.txt")

    app = AllWorkspacesApp(AllWorkspacesSource())
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: len(app.listed_ids) == 3 and _shown(app))
        checks = app.inbox.checks
        assert isinstance(checks, SelectedChecks)
        # docs is not trusted: its configured workspace_id is not taken either.
        (docs_id,) = (i for i in app.listed_ids if i not in ("pa-1@wsapi", "pa-1@wsweb"))
        # Opening: the top is shown, no check runs (nothing is stored, no runner made).
        assert app.shown_id == docs_id
        assert checks.running() is None and not checks._runners
        assert _stored(api) == [] and _stored(web) == [] and _stored(docs) == []
        assert not checks.pane.display

        # api's action selected: api's check runs for it; web's action gets nothing.
        app.select("pa-1@wsapi")
        await wait_until(pilot, lambda: _done(api))
        assert _stored(api) == [("api-lint", "pass")]
        assert _stored(web) == [] and _stored(docs) == []
        await wait_until(pilot, lambda: checks.pane.display and "pass" in _title(checks))
        assert _title(checks) == "Checks api-lint pass"

        # web's: web's own check, for it alone.
        app.select("pa-1@wsweb")
        await wait_until(pilot, lambda: _done(web))
        assert _stored(web) == [("web-tests", "pass")]
        assert _stored(api) == [("api-lint", "pass")] and _stored(docs) == []

        # docs is not trusted: its declared check never runs, c is greyed with the reason.
        app.select(docs_id)
        await wait_until(
            pilot,
            lambda: checks._target is not None and checks._target[0] == docs_id,
        )
        assert checks.running() is None
        assert "not trusted" in checks.refusal(docs_id)
        assert not app.inbox.check_action("run_checks", ())  # greyed, with the reason
        await pilot.press("c")
        await pilot.pause()
        assert _stored(docs) == []
        assert not checks.pane.display

        # c on web's action runs its checks again.
        app.select("pa-1@wsweb")
        await wait_until(pilot, lambda: app.shown_id == "pa-1@wsweb")
        assert app.inbox.check_action("run_checks", ()) is True
        assert checks.run_selected()
        await wait_until(pilot, lambda: checks.running() is None and _done(web))
        assert _stored(web) == [("web-tests", "pass")]


async def test_moving_the_selection_cancels_the_previous_actions_run(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    (isolated_user_config / "config.toml").write_text('[check_runner]\nsandbox = "off"\n')
    api = _workspace(tmp_path, "api", "api-lint", trusted=True)
    slow = f'["{sys.executable}", "-c", "import time; time.sleep(120)"]'
    config = api / ".redline" / "config.toml"
    config.write_text(config.read_text().replace(f'["{TRUE}", "{{files}}"]', slow))
    web = _workspace(tmp_path, "web", "web-tests", trusted=True)
    _queue_elsewhere(api, "mcp", "cursor", "Edit api a.txt")
    _queue_elsewhere(web, "exec", "exec", "Edit web a.txt")

    app = AllWorkspacesApp(AllWorkspacesSource())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: len(app.listed_ids) == 2 and _shown(app))
        checks = app.inbox.checks
        assert isinstance(checks, SelectedChecks)
        app.select("pa-1@wsapi")
        await wait_until(pilot, lambda: checks.running() == "pa-1@wsapi")
        # The run is marked before its "running" result is stored: await that too.
        await wait_until(pilot, lambda: _stored(api) == [("api-lint", "running")])
        assert checks.running() == "pa-1@wsapi"
        # Moved on before it ended: api's run is cancelled, its partial results removed.
        app.select("pa-1@wsweb")
        await wait_until(pilot, lambda: _done(web))
        await wait_until(pilot, lambda: _stored(api) == [])
        assert _stored(web) == [("web-tests", "pass")]
