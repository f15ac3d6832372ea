"""Snapshot: an action with two of its three hunks picked (gutter marks, resolve bar)."""

from __future__ import annotations

from typing import Any

from tests.tui.fakes import FakeSession, make_action, modify
from textual.pilot import Pilot

from redline.tui.app import RedlineApp
from redline.workspace.preview import Preview

SIZE = (130, 38)
OLD = "".join(f"v{n} = {n}\n" for n in range(1, 21))
NEW = OLD.replace("v2 = 2\n", "v2 = 'two'\n").replace("v10 = 10\n", "v10 = 'ten'\n")
NEW = NEW.replace("v18 = 18\n", "v18 = 'eighteen'\n")


class _NoWatcher:
    def __init__(self, *_args: object) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def test_partial_selection(snap_compare: Any) -> None:
    session = FakeSession()
    session.push(make_action("Rename the constants"))
    session.push(
        make_action("Quote three values", preview=Preview([modify("src/values.py", OLD, NEW)]))
    )
    app = RedlineApp(session, watcher_factory=_NoWatcher)

    async def pick(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await pilot.press("right_curly_bracket", "space", "right_curly_bracket")
        await pilot.press("right_curly_bracket", "space")
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=pick)
