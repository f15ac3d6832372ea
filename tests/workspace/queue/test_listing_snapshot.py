"""The listing memo's snapshot of ``actions/`` (issue 44): while the folder is as a listing
found it, ``redline pending list`` prints every row without looking at one record file --
and prints exactly what the records and the files say whenever another process pushed,
resolved, replaced or changed a record, an id left the queue, a record was resolved or the
snapshot cannot be trusted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.queue import WorkspaceQueue, index, listing, memo
from redline.workspace.queue.used import Ranges

from .helpers import create_draft, edit_draft

# What main's `redline pending list` printed (before this snapshot) for the queue `_build`
# makes: a fresh action, a label holding a newline and an escape, a record marked stale by
# its pusher, a file changed and a file made by hand, an agent that ended, an owner action
# whose process is gone.
EXPECTED = """\
ID    SOURCE     +/-    LABEL                              NOTE
pa-7  hook:test  +1 -0  Write e.txt                        its tool's process has ended
pa-6  exec:test  +1 -0  Create f                           its agent ended (exit 3)
pa-5  exec:test  +1 -0  Create d                           stale: d.txt (already exists)
pa-4  exec:test  +1 -0  Edit c                             stale: c.txt (modified since the preview)
pa-3  exec:test  +1 -0  Edit a                             stale: its agent saw a.txt change
pa-2  exec:test  +1 -0  Edit b\\x0asecond line \\x1b[31mred
pa-1  exec:test  +1 -0  Create new.txt
7 pending (top first). Show one with `redline pending show ID`.
"""

OWNER = """
import sys
from pathlib import Path
from redline.workspace.preview import FileCreate, Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue
with WorkspaceQueue(Path(sys.argv[1])) as queue:
    queue.push(ActionDraft("Write e.txt", Source.current("hook", "test", "s2"), "hook:Write",
                           Preview([FileCreate("e.txt", "e\\n")]), applied_by="owner"))
"""


def _build(root: Path) -> None:
    (root / "b.txt").write_text("one\ntwo\n")
    (root / "c.txt").write_text("three\n")
    with WorkspaceQueue(root) as queue:
        queue.push(create_draft("new.txt", "new\n"))
        queue.push(edit_draft(root, "b.txt", label="Edit b\nsecond line \x1b[31mred"))
        queue.push(edit_draft(root, "a.txt", label="Edit a"))
        queue.push(edit_draft(root, "c.txt", label="Edit c"))
        queue.push(create_draft("d.txt", "d\n", label="Create d"))
        queue.push(create_draft("f.txt", "f\n", label="Create f"))
    # An owner action whose process (a hook) has ended: orphaned.
    subprocess.run([sys.executable, "-c", OWNER, str(root)], check=True)
    with WorkspaceQueue(root) as queue:
        queue.update("pa-3", stale=True, stale_reason="its agent saw a.txt change")
        queue.update_details("pa-6", {"agent_ended": "ended (exit 3)"})
    (root / "c.txt").write_text("changed by hand\n")
    (root / "d.txt").write_text("made by hand\n")


def _table(capfd: pytest.CaptureFixture[str], root: Path) -> tuple[str, str]:
    capfd.readouterr()
    main(["pending", "-C", str(root), "list"])
    captured = capfd.readouterr()
    return captured.out, captured.err


def _in_another_process(root: Path, code: str) -> None:
    script = (
        "import sys\nfrom pathlib import Path\nfrom redline.workspace.queue import WorkspaceQueue\n"
        "sys.path.insert(0, sys.argv[2])\nfrom helpers import create_draft, edit_draft\n"
        f"root = Path(sys.argv[1])\nqueue = WorkspaceQueue(root)\n{code}\nqueue.close()\n"
    )
    here = str(Path(__file__).parent)
    subprocess.run([sys.executable, "-c", script, str(root), here], check=True)


def _snapshot(root: Path) -> listing.Folder | None:
    with WorkspaceQueue(root) as queue:
        found = queue._listing_memo()
        found.load()
        folder: listing.Folder | None = found.folder
        return folder


def test_the_table_is_the_one_main_printed(
    ws: Path, settled: None, reads: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    _build(ws)
    assert _table(capfd, ws)[0] == EXPECTED  # rows built from the records
    assert _snapshot(ws) is not None
    reads.clear()
    assert _table(capfd, ws)[0] == EXPECTED  # from the snapshot
    assert reads == []


def test_the_snapshot_names_no_record_file_it_did_not_list(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _build(ws)
    _table(capfd, ws)
    folder = _snapshot(ws)
    assert folder is not None
    assert folder[1] == tuple(f"pa-{n}.json" for n in range(7, 0, -1))  # top first
    assert folder[2] == tuple(range(1, 8))
    scans: list[object] = []
    real = os.scandir

    def counting(path: object) -> object:
        scans.append(path)
        return real(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", counting)
    assert _table(capfd, ws)[0] == EXPECTED
    assert scans == []  # the folder's names were not even read


@pytest.mark.parametrize(
    ("code", "present", "absent"),
    [
        ("queue.push(create_draft('g.txt', 'g\\n', label='Create g'))", ["pa-8", "Create g"], []),
        (
            "from redline.cli import main\n"
            "main(['pending', '-C', str(root), 'discard', 'pa-2', '--reason', 'no'])",
            [],
            ["pa-2 "],
        ),
        (
            "queue.replace('pa-4', edit_draft(root, 'b.txt', label='Edit b again'))",
            ["pa-8", "Edit b again"],
            ["pa-4 "],
        ),
        (
            "queue.update('pa-1', stale=True, stale_reason='its agent saw new.txt change')",
            ["stale: its agent saw new.txt change"],
            [],
        ),
    ],
    ids=["push", "discard", "replace", "update"],
)
def test_a_listing_after_another_process_changed_the_queue_is_exact(
    ws: Path,
    settled: None,
    capfd: pytest.CaptureFixture[str],
    code: str,
    present: list[str],
    absent: list[str],
) -> None:
    _build(ws)
    _table(capfd, ws)
    before = _snapshot(ws)
    assert before is not None
    _in_another_process(ws, code)
    out, _err = _table(capfd, ws)
    with WorkspaceQueue(ws) as queue:
        expected_ids = [record.id for record in queue.list()]
    assert [line.split()[0] for line in out.splitlines()[1:-1]] == expected_ids
    for text in present:
        assert text in out
    for text in absent:
        assert text not in out
    assert _snapshot(ws) not in (None, before)  # the new folder remembered
    assert _table(capfd, ws)[0] == out


def test_a_file_changed_after_the_snapshot_shows_the_action_stale(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str]
) -> None:
    _build(ws)
    _table(capfd, ws)
    (ws / "b.txt").write_text("changed again\n")
    (ws / "new.txt").write_text("made by hand\n")
    out, _err = _table(capfd, ws)
    assert "pa-2  exec:test  +1 -0  Edit b\\x0asecond line \\x1b[31mred  stale: b.txt" in out
    assert "stale: new.txt (already exists)" in out


def test_an_id_that_left_the_queue_is_not_listed_from_the_snapshot(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str]
) -> None:
    """A crash between marking an id used and removing its record leaves the record: the
    folder did not change, the used-id set did."""
    _build(ws)
    _table(capfd, ws)
    _in_another_process(ws, "queue._mark_used('pa-2')")
    out, err = _table(capfd, ws)
    assert "pa-2 " not in out and "pa-1 " in out
    assert "pa-2" in err
    assert not (ws / ".redline" / "queue" / "actions" / "pa-2.json").exists()


def test_a_listed_record_in_the_resolved_log_is_settled_not_listed_from_the_snapshot(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str]
) -> None:
    _build(ws)
    _table(capfd, ws)
    with WorkspaceQueue(ws) as queue:
        queue._reconciled = True
        assert queue._from_folder(settle=True) is not None
        resolved = ws / ".redline" / "queue" / "resolved" / "pa-2.json"
        resolved.write_text("{}")
        assert queue._from_folder(settle=True) is None  # reconcile looks at it
    with WorkspaceQueue(ws) as queue:
        queue._reconciled = True
        assert queue._from_folder(settle=False) is not None
    resolved.unlink()
    assert _table(capfd, ws)[0] == EXPECTED


def test_a_listed_record_the_journal_applied_is_settled_not_listed_from_the_snapshot(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash after an apply's journal entry and before its record went: the folder did
    not change, the journal did."""
    _build(ws)
    _table(capfd, ws)
    with WorkspaceQueue(ws) as queue:
        queue._reconciled = True
        assert queue._from_folder(settle=True) is not None
    monkeypatch.setattr(WorkspaceQueue, "_journal_applies", lambda self, since: {"pa-9": 1.0})
    with WorkspaceQueue(ws) as queue:
        queue._reconciled = True
        assert queue._from_folder(settle=True) is not None  # not one of the listed
    monkeypatch.setattr(WorkspaceQueue, "_journal_applies", lambda self, since: {"pa-2": 1.0})
    with WorkspaceQueue(ws) as queue:
        queue._reconciled = True
        assert queue._from_folder(settle=True) is None  # reconcile looks at it


def test_an_empty_queue_is_listed_without_the_journal(
    ws: Path, settled: None, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / ".redline").mkdir()
    with WorkspaceQueue(ws) as queue:
        queue._used()  # the queue's folders made
        queue._fd("actions")
    looked: list[float] = []

    def journal(self: WorkspaceQueue, since: float) -> dict[str, float]:
        looked.append(since)
        return {}

    monkeypatch.setattr(WorkspaceQueue, "_journal_applies", journal)
    for _ in range(2):  # from the folder, then from its snapshot
        assert _table(capfd, ws)[0] == f"No pending actions in {ws.resolve()}.\n"
    assert _snapshot(ws) is not None
    assert looked == []


def _rewrite(root: Path, folder: object) -> None:
    """The listing memo as it is but for its snapshot, signed with the workspace's key."""
    with WorkspaceQueue(root) as queue:
        found = queue._listing_memo()
        found.load()
        data = {**found.known, listing.FOLDER: folder}
        assert memo.write(
            found.root_fd,
            listing.LISTING,
            listing.LISTING_FORMAT,
            listing.PURPOSE,
            found.key,
            listing.MAX_LISTING_BYTES,
            data,
        )


@pytest.mark.parametrize(
    "damage", ["names a row it lacks", "a row of another size", "of another shape", "stamp"]
)
def test_a_snapshot_that_does_not_fit_is_not_used(
    ws: Path, settled: None, reads: list[str], capfd: pytest.CaptureFixture[str], damage: str
) -> None:
    _build(ws)
    _table(capfd, ws)
    folder = _snapshot(ws)
    assert folder is not None
    stamp, names, numbers, oldest, rows = folder  # type: ignore[misc]
    broken: object
    if damage == "names a row it lacks":
        broken = (stamp, ("pa-9.json", *names), numbers, oldest, rows)
    elif damage == "a row of another size":
        broken = (stamp, names, numbers, oldest, (rows[0][:3], *rows[1:]))
    elif damage == "of another shape":
        broken = (stamp, names)
    else:
        broken = ((0, 0, 0, 0), names, numbers, oldest, rows)
    _rewrite(ws, broken)
    reads.clear()
    assert _table(capfd, ws)[0] == EXPECTED
    assert _snapshot(ws) == folder  # the snapshot found again


def test_a_folder_changed_just_now_is_not_remembered(
    ws: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "PERSIST_AFTER", 1)
    monkeypatch.setattr(index, "PERSIST_AFTER", 1)
    monkeypatch.setattr(index, "SETTLE_NS", 10**18)  # every change was just now
    _build(ws)
    assert _table(capfd, ws)[0] == EXPECTED
    assert _snapshot(ws) is None
    assert _table(capfd, ws)[0] == EXPECTED


def test_ranges_meet_sorted_numbers() -> None:
    used = Ranges([(3, 5), (10, 10)])
    assert used.meets([1, 2, 4])
    assert used.meets([10])
    assert not used.meets([1, 2, 6, 9, 11])
    assert not used.meets([])
    assert not Ranges().meets([1, 2, 3])
