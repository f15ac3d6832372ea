"""Pilot: an action that arrives while the dashboard is not in front rings the bell, asks
the terminal for a desktop notification and runs the user's [notify] command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action
from textual import events

from redline import trust as trust_store
from redline.tui.app import RedlineApp
from redline.tui.screens.help import HelpScreen

SIZE = (120, 40)
HOSTILE = "edit a.py $(touch pwned); rm -rf x `id`"
RECORDER = (
    "import os, sys\n"
    "with open(sys.argv[1] + '.tmp', 'w', encoding='utf-8') as out:\n"
    "    out.write('\\n'.join(sys.argv[2:]) + '\\n')\n"
    "    out.write(os.environ['REDLINE_ACTION_LABEL'] + '\\n')\n"
    "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
)


@pytest.fixture(autouse=True)
def iterm(monkeypatch: pytest.MonkeyPatch) -> None:
    # A terminal known to show OSC 9; not inside tmux.
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("VTE_VERSION", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def app_for(session: FakeSession) -> tuple[RedlineApp, list[str]]:
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    return app, []


def record_terminal(app: RedlineApp, written: list[str]) -> None:
    """Keep what the app writes to the terminal through its driver (headless drops it),
    but Textual's own pointer-shape escapes (OSC 22)."""
    driver = app._driver
    assert driver is not None

    def write(data: str) -> None:
        if not data.startswith("\x1b]22;"):
            written.append(data)

    driver.write = write  # type: ignore[method-assign]


async def test_blurred_dashboard_rings_and_notifies_focused_does_not() -> None:
    session = FakeSession()
    session.push(make_action("already there"))
    app, written = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        record_terminal(app, written)
        assert app.dashboard_in_front
        session.push(make_action("seen in front"))
        await wait_until(pilot, lambda: app.stack.total == 2)
        await pilot.pause()
        assert written == []

        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.dashboard_in_front)
        session.push(make_action("edit app.py"))
        await wait_until(pilot, lambda: bool(written))
        assert written == ["\a\x1b]9;pa-3 edit app.py (agent) waits for review\x07"]

        app.post_message(events.AppFocus())
        await wait_until(pilot, lambda: app.dashboard_in_front)
        session.push(make_action("back in front"))
        await wait_until(pilot, lambda: app.stack.total == 4)
        await pilot.pause()
        assert len(written) == 1


async def test_a_dialog_over_the_inbox_counts_as_not_in_front() -> None:
    session = FakeSession()
    app, written = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        record_terminal(app, written)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert not app.dashboard_in_front
        session.push(make_action("while reading help"))
        await wait_until(pilot, lambda: bool(written))
        assert written[0].startswith("\a\x1b]9;pa-1 while reading help")


async def test_bell_only_and_off(isolated_user_config: Path) -> None:
    (isolated_user_config / "config.toml").write_text(
        '[notify]\ndesktop = "off"\n', encoding="utf-8"
    )
    session = FakeSession()
    app, written = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        record_terminal(app, written)
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.dashboard_in_front)
        session.push(make_action("one"))
        await wait_until(pilot, lambda: bool(written))
        assert written == ["\a"]


async def test_notify_command_runs_with_a_hostile_label_passed_literally(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    script = tmp_path / "record.py"
    script.write_text(RECORDER, encoding="utf-8")
    out = tmp_path / "notified.txt"
    command = [sys.executable, str(script), str(out), "{id}", "{label}", "{source}"]
    quoted = ", ".join(f"'{part}'" for part in command)
    (isolated_user_config / "config.toml").write_text(
        f'[notify]\ndesktop = "off"\nbell = false\ncommand = [{quoted}]\n', encoding="utf-8"
    )
    session = FakeSession(cwd=tmp_path)
    app, written = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        record_terminal(app, written)
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.dashboard_in_front)
        session.push(make_action(HOSTILE))
        await wait_until(pilot, out.exists)
    assert out.read_text(encoding="utf-8").splitlines() == [
        "pa-1",
        HOSTILE,
        "agent",
        HOSTILE,
    ]
    assert written == []  # bell and desktop are off
    assert not (tmp_path / "pwned").exists()
    assert not Path("pwned").exists()


async def test_a_failing_command_is_said_in_the_activity_log(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    missing = tmp_path / "no-such-notifier"
    (isolated_user_config / "config.toml").write_text(
        f"[notify]\ncommand = ['{missing}']\n", encoding="utf-8"
    )
    session = FakeSession(cwd=tmp_path)
    app, _written = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.dashboard_in_front)
        session.push(make_action("one"))
        await wait_until(pilot, lambda: "not found" in app.activity.plain)
        assert f"notify command {str(missing)!r} not found" in app.activity.plain


async def test_untrusted_workspace_notify_is_ignored_with_a_note(tmp_path: Path) -> None:
    state = tmp_path / ".redline"
    state.mkdir(mode=0o700)
    (state / "config.toml").write_text('[notify]\ncommand = ["curl", "x"]\n', encoding="utf-8")
    session = FakeSession(cwd=tmp_path)
    app, _written = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "notify ignored" in app.activity.plain)
        assert "redline trust allows it" in app.activity.plain
    trust_store.trust(tmp_path)
    app, _written = app_for(FakeSession(cwd=tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "notify ignored" not in app.activity.plain


async def test_a_broken_notify_table_is_a_note_and_the_bell_still_rings(
    isolated_user_config: Path,
) -> None:
    path = isolated_user_config / "config.toml"
    path.write_text('[notify]\ncommand = "notify-send hi"\n', encoding="utf-8")
    session = FakeSession()
    app, written = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "notify.command" in app.activity.plain)
        assert str(path) in app.activity.plain
        assert "(notify command off)" in app.activity.plain
        record_terminal(app, written)
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.dashboard_in_front)
        session.push(make_action("one"))
        await wait_until(pilot, lambda: bool(written))
        assert written[0].startswith("\a")
