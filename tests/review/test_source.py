"""The listed action: made from a queue record by the one function, and what it keeps."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from redline.review.source import (
    Capability,
    SourceCapabilities,
    WorkspaceRef,
    listed_from_record,
)
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue


def test_a_record_lists_as_one_frozen_row_without_reading_its_preview(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    queue = WorkspaceQueue(tmp_path)
    preview = Preview([FileModify("a.txt", sha256_bytes(b"one\n"), "one\n", "one\ntwo\n")])
    record = queue.push(
        ActionDraft(
            label="Edit a.txt",
            source_tool_name="edit",
            source=Source.current("mcp", "cursor", "s9"),
            preview=preview,
        )
    )
    ws = WorkspaceRef("g1a2b3c4d5e6", str(tmp_path))
    row = listed_from_record(record, workspace=ws, qualified=True)
    assert row.id == "pa-1@g1a2b3c4d5e6" and row.local_id == "pa-1"
    assert (row.label, row.source, row.kind) == ("Edit a.txt", "mcp:cursor", "file_change")
    assert row.facts == (("a.txt",), 1, 0)
    assert row.workspace == ws and row.owner == "s9" and not row.stale
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.label = "other"  # type: ignore[misc]
    stale = listed_from_record(record, stale_reasons=("a.txt changed",))
    assert stale.id == "pa-1" and stale.stale and stale.stale_reason == "a.txt changed"


def test_capabilities_say_why_not() -> None:
    caps = SourceCapabilities(undo=Capability.no("The team queue undoes nothing here."))
    assert caps.refusal("undo") == "The team queue undoes nothing here."
    assert caps.refusal("whole") == ""
    narrowed = caps.narrowed(parts="pa-3 resolves only as a whole", edit="")
    assert not narrowed.parts.available and narrowed.edit.available
    assert caps.narrowed() is caps
