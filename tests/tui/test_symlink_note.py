"""The dashboard's detail pane says where an action asked through a symlink really writes."""

from __future__ import annotations

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, make_action, modify
from tests.tui.test_snapshots import _app, _settle
from textual.widgets import Static

from redline.workspace.preview import Preview


async def test_the_detail_pane_says_via() -> None:
    session = FakeSession()
    preview = Preview(
        [modify("src/app.py", "a = 1\n", "a = 2\n")], via={"src/app.py": "tests/app.py"}
    )
    session.push(make_action("Edit: tests/app.py", preview=preview))
    session.push(make_action("Edit: src/other.py", path="src/other.py"))
    app = _app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await _settle(pilot)
        header = app.screen_stack[0].query_one("#preview-header", Static)
        # The top action (src/other.py) was asked as it is: no note.
        await wait_until(pilot, lambda: "src/other.py" in str(header.render()))
        assert "via" not in str(header.render())
        await pilot.press("j")
        await wait_until(pilot, lambda: "tests/app.py" in str(header.render()))
        shown = str(header.render())
        assert "SYMLINK" in shown
        assert "Writes src/app.py (via tests/ → src/)" in shown
