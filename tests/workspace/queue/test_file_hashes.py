"""The listing's memo of workspace files' hashes (issue 44): an unchanged file is not read
again for the staleness check, and a changed, young, swapped or forged one never counts."""

from __future__ import annotations

import json
import marshal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redline.workspace.queue import WorkspaceQueue, hashes, index, staleness, storage

from .helpers import edit_draft


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled, and the memo is saved after any read."""
    monkeypatch.setattr(index, "SETTLE_NS", -(10**15))
    monkeypatch.setattr(hashes, "PERSIST_AFTER", 1)


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The workspace files the staleness check read (and hashed)."""
    seen: list[str] = []
    original = staleness.fsutil.read_current

    def counting(path: Any, limit: int | None = None) -> Any:
        seen.append(Path(path).name)
        return original(path, limit)

    monkeypatch.setattr(staleness.fsutil, "read_current", counting)
    yield seen


def _queue_of_three(ws: Path) -> None:
    with WorkspaceQueue(ws) as queue:
        for name in ("a.txt", "b.txt", "c.txt"):
            (ws / name).write_text(f"{name}\n")
            queue.push(edit_draft(ws, name))


def _stale(ws: Path) -> dict[str, list[str]]:
    """What one listing (a new queue object: another process) says is stale, by label."""
    with WorkspaceQueue(ws) as queue:
        cache: dict[str, str | None] = {}
        found = {r.label: queue.stale_reasons(r, cache) for r in queue.list()}
        queue.remember_hashes()
        return found


def test_an_unchanged_file_is_not_read_again(ws: Path, settled: None, hashed: list[str]) -> None:
    _queue_of_three(ws)
    assert _stale(ws) == {"Edit a.txt": [], "Edit b.txt": [], "Edit c.txt": []}
    assert sorted(hashed) == ["a.txt", "b.txt", "c.txt"]
    hashed.clear()
    assert _stale(ws) == {"Edit a.txt": [], "Edit b.txt": [], "Edit c.txt": []}
    assert hashed == []


def test_a_changed_file_is_read_and_reported(ws: Path, settled: None, hashed: list[str]) -> None:
    _queue_of_three(ws)
    _stale(ws)
    (ws / "b.txt").write_text("changed by hand\n")
    (ws / "c.txt").unlink()
    hashed.clear()
    assert _stale(ws) == {
        "Edit a.txt": [],
        "Edit b.txt": ["b.txt (modified since the preview)"],
        "Edit c.txt": ["c.txt (deleted since the preview)"],
    }
    assert sorted(hashed) == ["b.txt", "c.txt"]  # a.txt is remembered


def test_a_file_replaced_by_a_link_is_never_taken_from_the_memo(ws: Path, settled: None) -> None:
    _queue_of_three(ws)
    _stale(ws)
    (ws / "a.txt").unlink()
    (ws / "elsewhere.txt").write_text("a.txt\n")  # the same bytes, behind a symbolic link
    (ws / "a.txt").symlink_to(ws / "elsewhere.txt")
    assert _stale(ws)["Edit a.txt"] == ["a.txt (modified since the preview)"]


def test_young_files_are_hashed_every_time(
    ws: Path, hashed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hashes, "PERSIST_AFTER", 1)
    monkeypatch.setattr(index, "SETTLE_NS", 10**18)  # every file was written just now
    _queue_of_three(ws)
    _stale(ws)
    hashed.clear()
    _stale(ws)
    assert sorted(hashed) == ["a.txt", "b.txt", "c.txt"]


@pytest.mark.parametrize("damage", ["forged", "other key", "garbage"])
def test_a_forged_or_damaged_memo_is_ignored(
    ws: Path, settled: None, hashed: list[str], damage: str
) -> None:
    _queue_of_three(ws)
    _stale(ws)
    memo = ws / ".redline" / "queue" / hashes.HASHES
    header, _, payload = memo.read_bytes().partition(b"\n")
    # The memo now says b.txt's bytes are a.txt's hash, for b.txt's identity.
    data = marshal.loads(payload)
    data["b.txt"] = (data["b.txt"][0], data["a.txt"][1])
    forged = marshal.dumps(data)
    if damage == "forged":
        memo.write_bytes(header + b"\n" + forged)
    elif damage == "other key":
        tag = storage.tag_for(b"k" * 32, forged, hashes.PURPOSE)
        head = {"version": hashes.HASHES_FORMAT, "codec": index.CODEC, "tag": tag}
        memo.write_bytes(json.dumps(head).encode() + b"\n" + forged)
    else:
        memo.write_bytes(header + b"\n" + payload[: len(payload) // 2])
    hashed.clear()
    assert _stale(ws)["Edit b.txt"] == []
    assert sorted(hashed) == ["a.txt", "b.txt", "c.txt"]
