"""The dashboard once an external agent's process ended: fakes only, no subprocess.

The banner, the marks on what the agent left (read defensively from untrusted details),
the keys that need a live agent, and one snapshot of the banner at 80×24. Regenerate the
snapshot after an intended visual change with ``uv run pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, make_action
from tests.tui.test_snapshots import PYTHON_NEW, PYTHON_OLD, _app, _settle
from textual.pilot import Pilot

from redline.drivers.acp.events import AcpAgentExit
from redline.review.events import AgentState
from redline.review.store import PendingAction
from redline.tui.agent_ended import NOTE_WIDTH, ended_note, exit_error_lines
from redline.tui.widgets.ended_banner import EndedBanner
from redline.workspace.queue import Source


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        ({"agent_ended": "exited with status 1"}, "exited with status 1"),
        ({"agent_ended": True}, "ended"),
        ({"agent_ended": "  "}, None),
        ({"agent_ended": 9}, None),
        ({"agent_ended": False}, None),
        ({"agent_ended": ["exited"]}, None),
        ({"agent_ended": {"how": "exited"}}, None),
        ({"agent_ended": None}, None),
        ({}, None),
        ("agent_ended", None),
        (None, None),
        (["agent_ended"], None),
        ({"agent_ended": "was\nkilled\x1b[31m by\tSIGKILL"}, "was killed\\x1b[31m by SIGKILL"),
    ],
)
def test_ended_note_reads_untrusted_details(details: Any, expected: str | None) -> None:
    assert ended_note(details) == expected


def test_ended_note_cuts_a_long_text() -> None:
    note = ended_note({"agent_ended": "x" * 500})
    assert note is not None and len(note) == NOTE_WIDTH and note.endswith("…")


def test_exit_error_keeps_only_the_last_output() -> None:
    message = "agent gemini ended its turn with an error: the process exited with status 1; its last output:\n  boom\n  bye"
    plain = [line.plain for line in exit_error_lines(message, "exited with status 1")]
    assert plain == ["  the agent's last output:", "    boom", "    bye"]
    assert exit_error_lines(message.partition("\n")[0], "exited with status 1") == []
    # An error about something else is shown whole.
    other = [line.plain for line in exit_error_lines("the model refused", "exited with status 1")]
    assert "the model refused" in other[0]


def _acp_action(label: str, ended: Any, **kwargs: Any) -> PendingAction:
    action = make_action(label, source="acp:write_text_file", **kwargs)
    return action.stamped(
        details={
            "source": {"kind": "acp", "name": "gemini via ACP"},
            "path": kwargs.get("path", "src/app.py"),
            "agent_ended": ended,
        },
        source=Source("acp", "gemini via ACP"),
    )


def _ended_session() -> FakeSession:
    session = FakeSession(model_label="gemini via ACP", scripted=False)
    session.push(
        _acp_action(
            "Write: inventory/store.py",
            "exited with status 1",
            path="inventory/store.py",
            old=PYTHON_OLD,
            new=PYTHON_NEW,
        )
    )
    session.push(
        _acp_action(
            "Write: CHANGELOG.md",
            "exited with status 1",
            path="CHANGELOG.md",
            old="",
            new="# Changes\n",
        )
    )
    return session


async def test_an_unexpected_exit_shows_the_banner_and_turns_live_keys_off() -> None:
    session = FakeSession(model_label="gemini via ACP", scripted=False)
    for label, ended in (
        ("Write: a.py", 42),
        ("Write: b.py", ["x"]),
        ("Write: c.py", {"nested": True}),
        ("Write: d.py", "was killed by SIGKILL"),
    ):
        session.push(_acp_action(label, ended, path=label.removeprefix("Write: ")))
    app = _app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await _settle(pilot)
        banner = app.screen_stack[0].query_one(EndedBanner)
        assert not banner.display
        assert app.check_action("focus_prompt", ())
        session.emit(AcpAgentExit(-9, "was killed by SIGKILL", expected=False))
        await wait_until(pilot, lambda: app.agent_ended is not None)
        assert banner.display
        shown = str(banner.render())
        assert "gemini via ACP was killed by SIGKILL" in shown
        assert "4 actions it left stay for review" in shown
        # Only the well-formed note is shown; the others are ignored, nothing fails.
        ended = {row.label: row.ended for row in app.stack.rows}
        assert ended == {
            "Write: a.py": "",
            "Write: b.py": "",
            "Write: c.py": "",
            "Write: d.py": "was killed by SIGKILL",
        }
        assert not app.check_action("focus_prompt", ())
        assert not app.check_action("stop_agent", ())
        assert app.check_action("apply_top", ())
        await pilot.press("n")
        await wait_until(pilot, lambda: session.store.count == 3)
        assert "3 actions it left stay for review" in str(banner.render())
        assert app.activity.plain.count("was killed by SIGKILL") == 1
        assert app._exception is None


async def test_an_expected_exit_is_no_ended_agent() -> None:
    session = _ended_session()
    app = _app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await _settle(pilot)
        session.emit(AcpAgentExit(0, "exited with status 0", expected=True))
        await wait_until(pilot, lambda: "exited with status 0" in app.activity.plain)
        assert app.agent_ended is None
        assert not app.screen_stack[0].query_one(EndedBanner).display
        assert app.check_action("focus_prompt", ())


def test_ended_banner_at_80x24(snap_compare: Any) -> None:
    session = _ended_session()

    async def ended(pilot: Pilot[Any]) -> None:
        app = pilot.app
        session.emit(AcpAgentExit(1, "exited with status 1", expected=False))
        app.agent_state = AgentState.FAILED  # type: ignore[attr-defined]
        await _settle(pilot)

    assert snap_compare(_app(session), terminal_size=(80, 24), run_before=ended)
