"""The diff view's file notes count lines in the right number ("1 line", not "1 lines")."""

from __future__ import annotations

from redline.review.texts import counted
from redline.tui.diff_model import unified_rows
from redline.workspace.preview import FileCreate, FileDelete, sha256_bytes


def test_a_one_line_file_is_one_line() -> None:
    rows = unified_rows(FileCreate("a.txt", "only\n"))
    assert rows[0].text == "new file, 1 line"
    rows = unified_rows(FileDelete("a.txt", sha256_bytes(b"x\n"), "x\n"))
    assert rows[0].text == "deleted file, 1 line"
    assert unified_rows(FileCreate("b.txt", "1\n2\n"))[0].text == "new file, 2 lines"


def test_counted() -> None:
    assert [counted(n, "line") for n in (0, 1, 2)] == ["0 lines", "1 line", "2 lines"]
    assert counted(2, "entry", "entries") == "2 entries"
