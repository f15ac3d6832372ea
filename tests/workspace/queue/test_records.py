"""The queue's storage: order, ids, replacement, the resolved log, bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from redline.workspace.queue import (
    ActionBusy,
    ActionDraft,
    ActionGone,
    QueueRecordError,
    QueueUnavailable,
    Resolution,
    Source,
    WorkspaceQueue,
    resolved,
)

from .helpers import create_draft, edit_draft, ids


def test_push_is_durable_and_listed_top_first(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    first = queue.push(edit_draft(ws, label="one"))
    second = queue.push(create_draft("b.txt", "new\n"))
    assert (first.id, second.id) == ("pa-1", "pa-2")
    other = WorkspaceQueue(ws)  # another process would see the same
    assert ids(other) == ["pa-2", "pa-1"]
    record = other.get("pa-1")
    assert record is not None and record.label == "one" and record.files == ["a.txt"]
    assert (record.added, record.removed, record.applied_by) == (1, 0, "preview")
    preview = other.preview(record)
    assert preview is not None and preview.changes[0].new_text == "hello\nworld\nmore\n"  # type: ignore[union-attr]


def test_contents_are_stored_once(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    for _ in range(5):
        queue.push(edit_draft(ws))
    # old text and new text, shared by all five records
    assert len(os.listdir(ws / ".redline/queue/contents")) == 2


def test_ids_are_never_reused(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    for _ in range(3):
        queue.push(edit_draft(ws))
    with queue.claim("pa-3") as claim:
        claim.finish(Resolution("pa-3", "discard", "no"))
    assert queue.push(edit_draft(ws)).id == "pa-4"
    # Even with the counter lost, ids seen in the queue and the log are skipped.
    (ws / ".redline/queue/next-id").unlink()
    assert WorkspaceQueue(ws).push(edit_draft(ws)).id == "pa-5"


def test_replace_keeps_position_with_a_new_id(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    for _ in range(3):
        queue.push(edit_draft(ws))
    new = queue.replace("pa-2", edit_draft(ws, label="fresh"))
    assert new.id == "pa-4"
    assert ids(queue) == ["pa-3", "pa-4", "pa-1"]
    resolution = queue.resolution("pa-2")
    assert resolution is not None and resolution.decision == "replaced"
    assert resolution.replaced_by == "pa-4"
    with pytest.raises(ActionGone) as info, queue.claim("pa-2"):
        pass
    assert info.value.replaced_by == "pa-4" and "replaced by pa-4" in str(info.value)
    # a push goes on top
    assert queue.push(edit_draft(ws)).id == "pa-5"
    assert ids(queue)[0] == "pa-5"


def test_claim_excludes_a_second_claimant(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    other = WorkspaceQueue(ws)
    with (
        queue.claim("pa-1"),
        pytest.raises(ActionBusy, match="being resolved"),
        other.claim("pa-1"),
    ):
        pass
    with other.claim("pa-1") as claim:  # released again
        claim.finish(Resolution("pa-1", "discard"))
    with pytest.raises(ActionGone, match="already discarded"), queue.claim("pa-1"):
        pass


def test_session_view_sees_only_its_own_actions(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws, session_id="a"))
    queue.push(edit_draft(ws, session_id="b"))
    view = queue.session_view("a")
    assert [r.id for r in view.list()] == ["pa-1"] and view.has_pending
    top = view.top()
    assert top is not None and top.id == "pa-1"
    assert not queue.session_view("c").has_pending


def test_resolved_log_is_bounded_and_contents_collected(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolved, "KEEP_RESOLUTIONS", 5)
    monkeypatch.setattr(resolved, "PRUNE_EVERY", 10)
    monkeypatch.setattr(resolved, "BLOB_GRACE_SECONDS", -1.0)
    queue = WorkspaceQueue(ws)
    for index in range(10):
        queue.push(create_draft(f"f{index}.txt", f"text {index}\n"))
    for index in range(1, 11):
        with queue.claim(f"pa-{index}") as claim:
            claim.finish(Resolution(f"pa-{index}", "discard"))
    names = sorted(os.listdir(ws / ".redline/queue/resolved"))
    assert len(names) == 5 and "pa-10.json" in names
    # contents of the dropped resolutions are gone, those of the kept ones stay
    assert len(os.listdir(ws / ".redline/queue/contents")) == 5


def test_a_deciding_process_that_defers_pruning_prunes_when_told_or_closed(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard defers the pruning a decision makes due (a whole listing of the queue)
    until the decision's outcome is posted: nothing is pruned by the decision itself, all of
    it by housekeep(), and what is still due when the queue closes, by close()."""
    monkeypatch.setattr(resolved, "KEEP_RESOLUTIONS", 2)
    monkeypatch.setattr(resolved, "PRUNE_EVERY", 5)
    monkeypatch.setattr(resolved, "BLOB_GRACE_SECONDS", -1.0)
    log = ws / ".redline/queue/resolved"
    other = WorkspaceQueue(ws)  # another process queues them
    for index in range(10):
        other.push(create_draft(f"f{index}.txt", f"text {index}\n"))
    other.close()
    queue = WorkspaceQueue(ws)
    queue.defer_pruning = True
    for index in range(1, 6):
        with queue.claim(f"pa-{index}") as claim:
            claim.finish(Resolution(f"pa-{index}", "discard"))
    assert queue.prune_due and len(os.listdir(log)) == 5  # pa-5 made it due: not done yet
    queue.housekeep()
    assert not queue.prune_due and sorted(os.listdir(log)) == ["pa-4.json", "pa-5.json"]
    for index in range(6, 11):
        with queue.claim(f"pa-{index}") as claim:
            claim.finish(Resolution(f"pa-{index}", "discard"))
    assert len(os.listdir(log)) == 7
    queue.close()
    assert sorted(os.listdir(log)) == ["pa-10.json", "pa-9.json"]
    # Not deferred (every other process): the decision that makes it due prunes at once.
    again = WorkspaceQueue(ws)
    for index in range(11, 16):
        again.push(create_draft(f"g{index}.txt", "x\n"))
    for index in range(11, 16):
        with again.claim(f"pa-{index}") as claim:
            claim.finish(Resolution(f"pa-{index}", "discard"))
    assert not again.prune_due and sorted(os.listdir(log)) == ["pa-14.json", "pa-15.json"]
    again.close()


def test_owner_action_of_a_dead_process_is_orphaned(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    gone = Source("exec", "test", "s1", pid=2**22 + 12345, pid_start=1)
    queue.push(ActionDraft(label="custom", source=gone, details={"n": 1}))
    record = queue.get("pa-1")
    assert record is not None and record.applied_by == "owner" and record.orphaned()
    alive = queue.push(ActionDraft(label="mine", source=Source.current("sdk")))
    assert not alive.orphaned()


def test_a_reused_pid_is_not_mistaken_for_the_owner(ws: Path) -> None:
    me = Source.current("sdk")
    assert me.alive()
    assert me.pid_start is None or not Source("sdk", "", "", me.pid, me.pid_start + 1).alive()


def test_details_must_be_json(ws: Path) -> None:
    with pytest.raises(ValueError, match="details are not JSON"):
        WorkspaceQueue(ws).push(ActionDraft(label="x", source=Source.current(), details={1j}))


# -- bad input: each record fails alone, with a message naming it ---------------------------
def _damage(ws: Path, action_id: str, data: bytes) -> None:
    (ws / f".redline/queue/actions/{action_id}.json").write_bytes(data)


def _parts(ws: Path, action_id: str) -> tuple[dict[str, object], dict[str, object]]:
    """A record file is a header line (version, tag) and the signed JSON record."""
    header, record = (ws / f".redline/queue/actions/{action_id}.json").read_text().split("\n")[:2]
    return json.loads(header), json.loads(record)


def _join(header: dict[str, object], record: dict[str, object]) -> bytes:
    return (json.dumps(header) + "\n" + json.dumps(record) + "\n").encode()


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda raw: raw[: len(raw) // 2], "damaged or truncated"),
        (lambda raw: b"", "empty file"),
        (lambda raw: b"[1, 2]", "no valid header line"),
        (lambda raw: raw.split(b"\n")[0] + b"\n[1, 2]\n", "does not carry"),
    ],
)
def test_corrupt_or_truncated_record(ws: Path, damage, expected: str) -> None:  # type: ignore[no-untyped-def]
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    queue.push(edit_draft(ws))
    path = ws / ".redline/queue/actions/pa-1.json"
    path.write_bytes(damage(path.read_bytes()))
    assert ids(queue) == ["pa-2"]
    assert len(queue.problems) == 1 and "pa-1" in str(queue.problems[0])
    assert expected in str(queue.problems[0])
    assert queue.push(edit_draft(ws)).id == "pa-3"  # still usable


def test_tampered_record_is_never_acted_on(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    header, record = _parts(ws, "pa-1")
    record["label"] = "something else"
    _damage(ws, "pa-1", _join(header, record))
    assert ids(queue) == []
    assert "does not carry this user's signature" in str(queue.problems[0])
    with pytest.raises(QueueRecordError, match="pa-1"):
        queue.get("pa-1")


def test_newer_version_is_refused_clearly(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    header, record = _parts(ws, "pa-1")
    header["version"] = 99
    _damage(ws, "pa-1", _join(header, record))
    assert ids(queue) == []
    assert "newer redline (format version 99" in str(queue.problems[0])


def test_record_whose_contents_were_deleted(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(create_draft("b.txt", "unique text\n"))
    queue.push(edit_draft(ws))
    for name in os.listdir(ws / ".redline/queue/contents"):
        (ws / ".redline/queue/contents" / name).unlink()
    record = queue.get("pa-1")
    assert record is not None
    with pytest.raises(
        QueueRecordError, match=r"queue record pa-1: its stored contents .* missing"
    ):
        queue.preview(record)
    assert ids(queue) == ["pa-2", "pa-1"]  # listing needs no contents


def test_record_whose_workspace_file_was_deleted_is_stale(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    record = queue.push(edit_draft(ws))
    (ws / "a.txt").unlink()
    assert queue.stale_reasons(record) == ["a.txt (deleted since the preview)"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_queue_folder_not_writable(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    actions = ws / ".redline/queue/actions"
    actions.chmod(0o500)
    try:
        with pytest.raises(QueueUnavailable, match=r"Cannot write queue record pa-2 .*actions"):
            WorkspaceQueue(ws).push(edit_draft(ws))
        assert ids(WorkspaceQueue(ws)) == ["pa-1"]  # reading still works
    finally:
        actions.chmod(0o700)
    assert not [n for n in os.listdir(actions) if n.startswith(".")]  # no temp left


def test_write_failure_names_the_record(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same path as a read-only folder, for runs as root (which ignores permissions).
    import errno

    from redline.workspace.queue import storage

    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))

    def refuse(*_args: object, **_kw: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    with monkeypatch.context() as patch:
        patch.setattr(storage, "write_atomic", refuse)
        with pytest.raises(QueueUnavailable, match=r"pa-2 .*Permission denied \(EACCES\)"):
            queue.push(create_draft("new.txt", "x\n"))
        with pytest.raises(QueueUnavailable, match=r"record pa-3 .*EACCES"):
            queue.push(ActionDraft(label="no contents", source=Source.current()))
    assert ids(queue) == ["pa-1"]


def test_cached_key_tag_matches_auth_sign(ws: Path) -> None:
    from redline.workspace import auth
    from redline.workspace.queue import storage

    payload = b'{"id":"pa-1"}'
    tag = storage.tag_for(auth.workspace_key(ws), payload, "queue")
    assert tag == auth.sign(ws, payload, purpose="queue")
    assert auth.verify(ws, payload, tag, purpose="queue")
    assert not auth.verify(ws, payload, tag, purpose="queue-resolved")


def test_a_fifo_in_place_of_a_record_is_reported_not_waited_on(ws: Path) -> None:
    """A named pipe planted as ``actions/pa-N.json`` used to block every listing forever
    (opening a FIFO for reading waits for a writer). Run in a child: a hang fails there."""
    import subprocess
    import sys

    queue = WorkspaceQueue(ws)
    queue.push(create_draft("b.txt", "b\n"))
    os.mkfifo(ws / ".redline" / "queue" / "actions" / "pa-7.json")
    done = subprocess.run(
        [sys.executable, "-m", "redline", "pending", "-C", str(ws), "list"],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard, not a timing assertion
        check=False,
    )
    assert done.returncode == 1
    assert "pa-1" in done.stdout
    assert "queue record pa-7 (.redline/queue/actions/pa-7.json) is damaged" in done.stderr
