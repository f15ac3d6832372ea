"""``WorkspaceQueue.touching``: the actions a decision re-bases, found through the index's
map of files to records, including ones another process queued since (issue 44)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from redline.workspace.queue import WorkspaceQueue, index, storage

from .helpers import create_draft, edit_draft


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "SETTLE_NS", -(10**15))


PUSH = """
import sys
from pathlib import Path
from redline.workspace.preview import FileCreate, Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue
with WorkspaceQueue(Path(sys.argv[1])) as queue:
    queue.push(ActionDraft(label="late", source=Source.current("exec", "other"),
        source_tool_name="write", preview=Preview([FileCreate(sys.argv[2], "x\\n")])))
"""


def test_only_the_actions_naming_the_files_are_found(
    ws: Path, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "b.txt").write_text("b\n")
    with WorkspaceQueue(ws) as queue:
        queue.push(edit_draft(ws, "a.txt"))  # pa-1
        queue.push(edit_draft(ws, "b.txt"))  # pa-2
        queue.push(create_draft("c.txt", "c\n"))  # pa-3
        queue.push(edit_draft(ws, "a.txt", new="other\n"))  # pa-4
        queue.list()  # the index knows them all
        subprocess.run([sys.executable, "-c", PUSH, str(ws), "a.txt"], check=True)  # pa-5
        reads: list[str] = []
        original = storage.Signed.read_stat

        def counting(self: storage.Signed, name: str, shown: str) -> Any:
            if self.folder == "actions":
                reads.append(name)
            return original(self, name, shown)

        monkeypatch.setattr(storage.Signed, "read_stat", counting)
        assert [s.id for s in queue.touching({"a.txt"})] == ["pa-5", "pa-4", "pa-1"]
        assert reads == ["pa-5.json"]  # only the one the index did not know
        assert [s.id for s in queue.touching({"b.txt", "c.txt"})] == ["pa-3", "pa-2"]
        assert queue.touching({"d.txt"}) == []
        (ws / ".redline" / "queue" / "actions" / "pa-4.json").unlink()  # gone meanwhile
        assert [s.id for s in queue.touching({"a.txt"})] == ["pa-5", "pa-1"]
