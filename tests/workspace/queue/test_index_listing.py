"""``redline pending list`` prints exactly the same bytes whether it read the record files
or took them from the listing index (issue 44: the index is encoded for speed; the output
must not change by a byte)."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.queue import WorkspaceQueue, index, listing

from .helpers import create_draft, edit_draft


def _queue(root: Path) -> None:
    """Creates, edits, a stale one, odd labels: what the table and the JSON show."""
    (root / "b.txt").write_text("one\ntwo\n")
    with WorkspaceQueue(root) as queue:
        for number in range(4):
            queue.push(create_draft(f"dir/f{number}.txt", f"text {number}\n" * (number + 1)))
        queue.push(edit_draft(root, "a.txt", label="Edit a.txt\nwith a newline \x1b[31m"))
        queue.push(edit_draft(root, "b.txt", label="Éditer b.txt — ünïcode"))
        queue.push(create_draft("c.txt", "x\n", label="later made stale"))
    (root / "b.txt").write_text("changed elsewhere\n")  # b.txt's edit is stale now
    (root / "c.txt").write_text("exists already\n")  # c.txt's create is stale now


def _listed(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    capfd.readouterr()
    status = main(["pending", "-C", str(root), "list", *args])
    out, err = capfd.readouterr()
    return status, out, err


@pytest.mark.parametrize("args", [[], ["--json"]], ids=["table", "json"])
def test_the_listing_is_the_same_from_the_files_and_from_the_index(
    ws: Path, settled: None, reads: list[str], capfd: pytest.CaptureFixture[str], args: list[str]
) -> None:
    _queue(ws)
    path = ws / ".redline" / "queue" / index.INDEX
    path.unlink(missing_ok=True)
    (ws / ".redline" / "queue" / listing.LISTING).unlink(missing_ok=True)
    reads.clear()
    from_files = _listed(capfd, ws, *args)
    assert len(reads) == 7  # every record file read
    # the index written (the table: its rows, which need no index while they are good)
    assert (path if args else ws / ".redline" / "queue" / listing.LISTING).exists()
    reads.clear()
    from_index = _listed(capfd, ws, *args)
    assert reads == []  # every record taken from the index (the table: from its rows)
    assert from_index == from_files
    assert from_files[0] == 0 and "stale" in from_files[1] and "pa-7" in from_files[1]


def test_the_table_is_the_same_by_way_of_the_index(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str]
) -> None:
    _queue(ws)
    from_files = _listed(capfd, ws)
    with WorkspaceQueue(ws) as queue:
        queue.list()  # writes the index
    memo = ws / ".redline" / "queue" / listing.LISTING
    memo.unlink()
    assert _listed(capfd, ws) == from_files  # rows built again, by way of the index
    assert memo.exists()
    assert _listed(capfd, ws) == from_files  # from the rows
