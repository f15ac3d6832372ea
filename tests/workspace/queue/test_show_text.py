"""`redline pending show` says who applies an action in words and shows its details as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.queue import WorkspaceQueue

from .helpers import edit_draft


def test_show_says_redline_applies_and_prints_details_as_text(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (ws / "a.txt").write_text("one\n")
    details = {
        "agent": "claude",
        "tool_name": "Write",
        "permission_mode": None,
        "group_size": 2,
        "files": ["a.txt", "b.txt"],
        "tool_input": {"file_path": "a.txt"},
    }
    with WorkspaceQueue(ws) as queue:  # queued as another process (a hook) would
        record = queue.push(edit_draft(ws, details=details))
    capfd.readouterr()
    assert main(["pending", "-C", str(ws), "show", record.id]) == 0
    out = capfd.readouterr().out
    assert "  applied by: redline (safe apply)\n" in out
    assert (
        "  details:\n"  # the record keeps its keys sorted
        "    agent: claude\n"
        "    files: a.txt, b.txt\n"
        "    group size: 2\n"
        "    permission mode: -\n"
        "    tool input: file_path: a.txt\n"
        "    tool name: Write\n"
    ) in out
    assert '{"' not in out
