"""The listing index: unchanged record files are not read again; changes, forgeries and
replays are never taken from it (issue 29, "scale seen on the way")."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from redline.review.queued import resolve_queued
from redline.workspace.queue import WorkspaceQueue, index, storage

from .helpers import create_draft, edit_draft, ids


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled, and the index is saved after any read."""
    monkeypatch.setattr(index, "SETTLE_NS", -(10**15))
    monkeypatch.setattr(index, "PERSIST_AFTER", 1)


def _index_path(root: Path) -> Path:
    return root / ".redline" / "queue" / index.INDEX


def _fill(root: Path, count: int) -> WorkspaceQueue:
    queue = WorkspaceQueue(root)
    for number in range(count):
        queue.push(create_draft(f"f{number}.txt", f"text {number}\n"))
    return queue


def test_unchanged_records_are_not_read_again(ws: Path, settled: None, reads: list[str]) -> None:
    queue = _fill(ws, 5)
    assert ids(queue) == ["pa-5", "pa-4", "pa-3", "pa-2", "pa-1"]
    assert len(reads) == 5
    reads.clear()
    assert ids(queue) == ["pa-5", "pa-4", "pa-3", "pa-2", "pa-1"]
    assert reads == []
    # Another redline (a new queue object) takes them from the signed index on disk.
    assert _index_path(ws).is_file()
    with WorkspaceQueue(ws) as other:
        listed = other.list()
        assert [r.id for r in listed] == ["pa-5", "pa-4", "pa-3", "pa-2", "pa-1"]
        assert [r.label for r in listed] == [f"Create f{n}.txt" for n in (4, 3, 2, 1, 0)]
        assert other.preview(listed[0]) is not None
    assert reads == []


def test_changes_by_another_process_are_seen(ws: Path, settled: None, reads: list[str]) -> None:
    queue = _fill(ws, 3)
    queue.list()
    with WorkspaceQueue(ws) as other:  # stands in for another process
        other.update("pa-2", stale=True, stale_reason="a.txt (modified since the preview)")
        other.replace("pa-1", create_draft("g.txt", "g\n", label="Create g.txt"))
        other.push(create_draft("h.txt", "h\n"))
    reads.clear()
    listed = {r.id: r for r in queue.list()}
    assert sorted(listed) == ["pa-2", "pa-3", "pa-4", "pa-5"]
    assert listed["pa-2"].stale and listed["pa-2"].stale_reason.startswith("a.txt")
    assert listed["pa-4"].label == "Create g.txt" and listed["pa-4"].replaces == "pa-1"
    assert sorted(reads) == ["pa-2.json", "pa-4.json", "pa-5.json"]  # only what changed


def test_a_record_swapped_behind_the_index_is_read_and_refused(ws: Path, settled: None) -> None:
    queue = _fill(ws, 2)
    queue.list()
    path = ws / ".redline" / "queue" / "actions" / "pa-1.json"
    before = path.stat()
    raw = path.read_bytes()
    # Same size, same modification time: only the change time (which nobody can set) differs.
    path.write_bytes(raw.replace(b"Create f0.txt", b"Create X0.txt"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    with WorkspaceQueue(ws) as other:
        assert ids(other) == ["pa-2"]
        assert [p.action_id for p in other.problems] == ["pa-1"]
        assert "signature" in str(other.problems[0])
    assert ids(queue) == ["pa-2"]


def _forge(root: Path, edit: Any, key: bytes | None = None) -> None:
    """Rewrite the index on disk through ``edit(header, summaries, records)``; with ``key``,
    sign the result with it (marshal's bytes are signed as written: the tags are made
    from the very parts written)."""
    path = _index_path(root)
    header, summaries_raw, records_raw = index.split(path.read_bytes())
    summaries, records = index.load_part(summaries_raw), index.load_part(records_raw)
    edit(header, summaries, records)
    summaries_raw, records_raw = index.dump_part(summaries), index.dump_part(records)
    if key is not None:
        header["records_tag"] = storage.tag_for(key, records_raw, index.PURPOSE_RECORDS)
        header["summaries_tag"] = storage.tag_for(
            key,
            summaries_raw + b"\0" + header["records_tag"].encode(),
            index.PURPOSE_SUMMARIES,
        )
    path.write_bytes(index.join(header, summaries_raw, records_raw))


def test_a_forged_index_is_not_trusted(ws: Path, settled: None) -> None:
    _fill(ws, 2).list()

    def relabel(_header: Any, summaries: Any, records: Any) -> None:
        for record in records:
            record["label"] = "rm -rf everything"
            record["preview"]["changes"][0]["path"] = ".git/hooks/pre-commit"
        for summary in summaries:
            summary[11] = [".git/hooks/pre-commit"]

    _forge(ws, relabel)
    with WorkspaceQueue(ws) as other:
        listed = other.list()
        assert [r.label for r in listed] == ["Create f1.txt", "Create f0.txt"]
        assert [r.files for r in listed] == [["f1.txt"], ["f0.txt"]]
    # The forged index was replaced by a good one.
    assert b"rm -rf" not in _index_path(ws).read_bytes()


def test_an_index_signed_with_another_key_is_ignored(ws: Path, settled: None) -> None:
    _fill(ws, 1).list()

    def resign(header: Any, summaries: Any, records: Any) -> None:
        records[0]["label"] = "forged"

    _forge(ws, resign, b"k" * 32)
    with WorkspaceQueue(ws) as other:
        assert [r.label for r in other.list()] == ["Create f0.txt"]


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"\x00" * 100,
        b'{"version": 1}\n',
        b'{"version": 99, "summaries_tag": "x"}\n[]\n[]\n',
        b'{"version": 2, "codec": [0, 3, 1], "sizes": [0, 0]}\n',
        b'{"version": 2, "codec": %s, "sizes": [5, 9]}\n[]' % str(index.CODEC).encode(),
    ],
    ids=["empty", "binary", "header only", "newer format", "another python", "cut short"],
)
def test_a_damaged_index_is_ignored(ws: Path, settled: None, damage: bytes) -> None:
    _fill(ws, 2).list()
    _index_path(ws).write_bytes(damage)
    with WorkspaceQueue(ws) as other:
        assert ids(other) == ["pa-2", "pa-1"] and other.problems == []
    assert _index_path(ws).read_bytes() != damage  # replaced


def test_an_old_index_never_brings_back_a_resolved_action(ws: Path, settled: None) -> None:
    queue = _fill(ws, 2)
    queue.list()
    old_index = _index_path(ws).read_bytes()
    record_path = ws / ".redline" / "queue" / "actions" / "pa-1.json"
    old_record = record_path.read_bytes()
    result = asyncio.run(resolve_queued(queue, "pa-1", "discard", "no"))
    assert not result.is_error
    # Put back both the record and the index that listed it.
    record_path.write_bytes(old_record)
    _index_path(ws).write_bytes(old_index)
    with WorkspaceQueue(ws) as other:
        assert ids(other) == ["pa-2"]
        assert other.get("pa-2") is not None
    assert not record_path.exists()  # removed as a leftover, never acted on
    assert not (ws / "f0.txt").exists()


def test_young_files_are_not_remembered(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "PERSIST_AFTER", 1)
    monkeypatch.setattr(index, "SETTLE_NS", 10**18)  # every file was written just now
    queue = _fill(ws, 2)
    assert ids(queue) == ["pa-2", "pa-1"]
    assert queue._index is not None and queue._index.entries == {}
    assert not _index_path(ws).exists()


@pytest.mark.parametrize("others", [3, 40])
def test_a_decision_reads_only_the_actions_it_touches(
    ws: Path, settled: None, reads: list[str], others: int
) -> None:
    """Applying one action reads its record and those on the same file, whatever the
    length of the queue (the others' summaries come from the index)."""
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws, "a.txt", "hello\nthere\n"))  # pa-1
    queue.push(edit_draft(ws, "a.txt", "hello\nworld\nagain\n"))  # pa-2: same file
    for number in range(others):
        queue.push(create_draft(f"f{number}.txt", f"text {number}\n"))
    queue.list()
    queue.close()
    reads.clear()
    with WorkspaceQueue(ws) as fresh:  # as `redline pending apply` does
        fresh.ensure_reconciled()
        result = asyncio.run(resolve_queued(fresh, "pa-1", "apply", ""))
    assert not result.is_error, result.text
    assert "pa-2" in result.text  # re-based onto pa-1
    assert (ws / "a.txt").read_text() == "hello\nthere\n"
    # pa-1 under its claim, pa-2 under its claim; nothing else.
    assert sorted(set(reads)) == ["pa-1.json", "pa-2.json"]


@pytest.mark.parametrize("tomorrow", [False, True], ids=["same fields", "other fields"])
def test_an_index_of_other_fields_falls_back_to_the_files(
    ws: Path, settled: None, tomorrow: bool
) -> None:
    """A correctly signed index is used as it is (the control: a label changed in it shows);
    one whose records do not have this redline's fields (another version's) is not used
    for them: the files are read instead."""
    from redline.workspace import auth

    _fill(ws, 2).list()

    def resign(header: Any, summaries: Any, records: Any) -> None:
        for record in records:
            record["label"] = "from the index"
            if tomorrow:
                record["field_of_tomorrow"] = 1

    _forge(ws, resign, auth.workspace_key(ws))
    with WorkspaceQueue(ws) as other:
        labels = [r.label for r in other.list()]
    if tomorrow:
        assert labels == ["Create f1.txt", "Create f0.txt"]
    else:
        assert labels == ["from the index", "from the index"]
