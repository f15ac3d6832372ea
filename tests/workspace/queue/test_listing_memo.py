"""The listing memo (issue 44): ``redline pending list`` prints each unchanged record from its
remembered row, and prints exactly what the records say whenever a record or a file changed,
or the memo was forged or damaged."""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.queue import WorkspaceQueue, index, listing, staleness, storage

from .helpers import create_draft, edit_draft


def _queue(root: Path) -> None:
    (root / "b.txt").write_text("one\ntwo\n")
    with WorkspaceQueue(root) as queue:
        queue.push(create_draft("new.txt", "new\n"))
        queue.push(edit_draft(root, "b.txt", label="Edit b"))
        queue.push(create_draft("c.txt", "x\n", label="Create c"))


def _table(capfd: pytest.CaptureFixture[str], root: Path) -> str:
    capfd.readouterr()
    assert main(["pending", "-C", str(root), "list"]) == 0
    return capfd.readouterr().out


def _row(out: str, action_id: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(action_id + " "))


def _in_another_process(root: Path, code: str) -> None:
    """Run ``code`` with ``queue`` (a WorkspaceQueue of ``root``) in a separate process."""
    script = (
        "import sys\nfrom pathlib import Path\nfrom redline.workspace.queue import WorkspaceQueue\n"
        f"queue = WorkspaceQueue(Path(sys.argv[1]))\n{code}\nqueue.close()\n"
    )
    subprocess.run([sys.executable, "-c", script, str(root)], check=True)


def test_unchanged_records_are_printed_from_their_rows(
    ws: Path,
    settled: None,
    reads: list[str],
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _queue(ws)
    first = _table(capfd, ws)
    assert (ws / ".redline" / "queue" / listing.LISTING).exists()
    parsed: list[int] = []
    original = index.RecordIndex.fill_records

    def counting(self: index.RecordIndex) -> None:
        parsed.append(len(self.entries))
        original(self)

    monkeypatch.setattr(index.RecordIndex, "fill_records", counting)
    reads.clear()
    assert _table(capfd, ws) == first
    assert reads == []  # no record file read
    assert parsed == []  # and no record parsed from the index: the rows were enough


def test_a_record_another_process_changed_is_printed_as_it_is_now(
    ws: Path, settled: None, reads: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    _queue(ws)
    _table(capfd, ws)
    _in_another_process(
        ws,
        "queue.update('pa-1', stale=True, stale_reason='its agent saw new.txt change')\n"
        "queue.update_details('pa-3', {'agent_ended': 'ended (exit 3)'})",
    )
    reads.clear()
    out = _table(capfd, ws)
    assert "stale: its agent saw new.txt change" in _row(out, "pa-1")
    assert "its agent ended (exit 3)" in _row(out, "pa-3")
    assert "stale" not in _row(out, "pa-2")
    assert sorted(reads) == ["pa-1.json", "pa-3.json"]  # only the changed records were read


def test_a_file_changed_on_disk_shows_the_action_stale(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str]
) -> None:
    _queue(ws)
    out = _table(capfd, ws)
    assert "stale" not in out
    (ws / "b.txt").write_text("changed by hand\n")
    (ws / "c.txt").write_text("made by hand\n")
    out = _table(capfd, ws)
    assert "stale: b.txt (modified since the preview)" in _row(out, "pa-2")
    assert "stale: c.txt (already exists)" in _row(out, "pa-3")
    assert "stale" not in _row(out, "pa-1")


def _forge(memo: Path, damage: str) -> None:
    """The memo says pa-2's label is "Forged", for pa-2's identity, by ``damage``."""
    header, _, payload = memo.read_bytes().partition(b"\n")
    data = marshal.loads(payload)
    key, summary, row = data["pa-2.json"]
    data["pa-2.json"] = (key, summary, listing.Row(*row)._replace(label="Forged")[:])
    forged = marshal.dumps(data)
    if damage == "forged":
        memo.write_bytes(header + b"\n" + forged)
    elif damage == "other key":
        tag = storage.tag_for(b"k" * 32, forged, listing.PURPOSE)
        head = {"version": listing.LISTING_FORMAT, "codec": index.CODEC, "tag": tag}
        memo.write_bytes(json.dumps(head).encode() + b"\n" + forged)
    elif damage == "another python":
        head = json.loads(header)
        head["codec"] = [0, 2, 7]
        memo.write_bytes(json.dumps(head).encode() + b"\n" + payload)
    else:
        memo.write_bytes(header + b"\n" + payload[: len(payload) // 2])


@pytest.mark.parametrize("damage", ["forged", "other key", "another python", "garbage"])
def test_a_forged_or_damaged_memo_is_never_trusted(
    ws: Path, settled: None, reads: list[str], capfd: pytest.CaptureFixture[str], damage: str
) -> None:
    _queue(ws)
    first = _table(capfd, ws)
    memo = ws / ".redline" / "queue" / listing.LISTING
    _forge(memo, damage)
    reads.clear()
    assert _table(capfd, ws) == first  # "Forged" never printed
    assert sorted(reads) == ["pa-1.json", "pa-2.json", "pa-3.json"]  # rows built again
    reads.clear()
    assert _table(capfd, ws) == first  # the memo was replaced by a sound one
    assert reads == []


def test_a_row_of_the_wrong_shape_is_rebuilt(ws: Path, settled: None) -> None:
    memo = listing.ListingMemo(0, b"k" * 32, (b"k" * 32,))
    memo.loaded = True
    key = (1, 2, 3, 4, 5)
    summary = ("pa-1", 1, 0.0, "pending", None, ("a.txt",))
    memo.known = {
        "pa-1.json": (key, summary, ("pa-1", "exec")),
        "pa-2.json": (key, 7, 8),
        "pa-3.json": (key, summary[1:], summary),
    }
    assert memo.get("pa-1.json", key) is None
    assert memo.get("pa-2.json", key) is None
    assert memo.get("pa-3.json", key) is None
    assert memo.get("pa-4.json", key) is None


def test_young_records_are_not_remembered(
    ws: Path, reads: list[str], capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "PERSIST_AFTER", 1)
    monkeypatch.setattr(index, "SETTLE_NS", 10**18)  # every file was written just now
    _queue(ws)
    first = _table(capfd, ws)
    reads.clear()
    assert _table(capfd, ws) == first
    assert sorted(reads) == ["pa-1.json", "pa-2.json", "pa-3.json"]
    assert not (ws / ".redline" / "queue" / listing.LISTING).exists()


def test_a_copy_of_a_resolved_record_is_removed_not_listed(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str]
) -> None:
    _queue(ws)
    _table(capfd, ws)
    record = ws / ".redline" / "queue" / "actions" / "pa-2.json"
    copy = record.read_bytes()
    assert main(["pending", "-C", str(ws), "discard", "pa-2", "--reason", "no"]) == 0
    record.write_bytes(copy)  # a leftover copy of a resolved action, made by hand
    capfd.readouterr()
    assert main(["pending", "-C", str(ws), "list"]) == 0
    out, err = capfd.readouterr()
    assert "pa-2" not in out and "pa-1" in out and "pa-3" in out
    assert "pa-2" in err and not record.exists()


def test_the_dashboards_staleness_check_agrees_with_the_table(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """stale_reasons of a listed record takes what to compare from its row; the answer is
    the one the record itself gives, before and after the files change."""
    _queue(ws)
    _table(capfd, ws)  # the rows remembered
    worked_out: list[object] = []
    original = staleness.checks

    def counting(preview: object) -> list[staleness.Check]:
        worked_out.append(preview)
        return original(preview)

    monkeypatch.setattr(staleness, "checks", counting)
    with WorkspaceQueue(ws) as queue:
        listed = queue.list()
        assert [queue.stale_reasons(r) for r in listed] == [[], [], []]
        assert worked_out == []  # from the rows
        (ws / "b.txt").write_text("changed by hand\n")
        (ws / "c.txt").write_text("made by hand\n")
        by_id = {r.id: queue.stale_reasons(r) for r in queue.list()}
        assert by_id == {
            "pa-1": [],
            "pa-2": ["b.txt (modified since the preview)"],
            "pa-3": ["c.txt (already exists)"],
        }
        fresh = queue.get("pa-2")  # a record object of its own: compared from its preview
        assert fresh is not None
        assert queue.stale_reasons(fresh) == ["b.txt (modified since the preview)"]
        assert len(worked_out) == 1
