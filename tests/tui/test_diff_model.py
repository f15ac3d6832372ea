"""The diff rows the preview draws: counts read as words."""

from __future__ import annotations

from redline.tui.diff_model import unified_rows
from redline.workspace.preview import FileCreate, FileDelete, sha256_bytes


def _meta(change: object) -> list[str]:
    return [row.text for row in unified_rows(change, 3) if row.kind == "meta"]  # type: ignore[arg-type]


def test_new_and_deleted_files_count_their_lines_in_words() -> None:
    assert _meta(FileCreate("a.py", "x = 1\n")) == ["new file, 1 line"]
    assert _meta(FileCreate("a.py", "x = 1\ny = 2\n")) == ["new file, 2 lines"]
    gone = FileDelete("a.py", sha256_bytes(b"x = 1\n"), "x = 1\n")
    assert _meta(gone) == ["deleted file, 1 line"]
