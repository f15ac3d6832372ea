"""The journal: undo (newest first, refusals, journaled), history, recovery edge cases."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from redline.workspace import journal
from redline.workspace.journal import UndoError, ensure_state_dir, recover, undo_history, undo_last
from redline.workspace.preview import Preview
from redline.workspace.safe_apply import ApplyError, apply_preview

from .helpers import (
    create,
    delete,
    journal_is_clean,
    mixed_preview,
    modify,
    rename,
    snapshot,
    write,
)


def test_ensure_state_dir(ws: Path) -> None:
    folder = ensure_state_dir(ws)
    assert folder == ws / ".redline"
    assert (folder / ".gitignore").read_text() == "*\n"
    ensure_state_dir(ws)
    assert (folder / ".gitignore").read_text() == "*\n"


def test_recover_on_a_fresh_workspace_does_nothing(ws: Path) -> None:
    assert recover(ws) == []
    assert not (ws / ".redline").exists()


def test_undo_restores_every_kind_of_change(ws: Path) -> None:
    preview, old, new = mixed_preview(ws)
    os.chmod(ws / "gone.txt", 0o640)
    receipt = apply_preview(ws, preview, label="mixed")
    assert snapshot(ws) == new
    undo = undo_last(ws)
    assert snapshot(ws) == old
    assert stat.S_IMODE(os.stat(ws / "gone.txt").st_mode) == 0o640
    assert not (ws / "pkg").exists() and not (ws / "moved").exists()
    assert undo.entry_id == receipt.entry_id
    assert undo.label == "mixed"
    assert undo.files == list(preview.paths)
    assert undo.message == (
        "Undid: mixed (6 files: src/a.py, src/bom.txt, pkg/new/mod.py, gone.txt, old.txt, "
        "moved/renamed.txt)."
    )
    assert journal_is_clean(ws)


def test_undo_is_newest_first_for_at_least_ten_applies(ws: Path) -> None:
    write(ws, "n.txt", "0\n")
    states = [snapshot(ws)]
    for i in range(1, 13):
        apply_preview(
            ws,
            Preview([modify(ws, "n.txt", f"{i}\n"), create(f"f{i}.txt", "x")]),
            label=f"step {i}",
        )
        states.append(snapshot(ws))
    history = undo_history(ws)
    assert [h.label for h in history] == [f"step {i}" for i in range(12, 0, -1)]
    assert history[0].files == ["n.txt", "f12.txt"]
    assert history[0].time >= history[-1].time
    for i in range(12, 0, -1):
        assert undo_last(ws).label == f"step {i}"
        assert snapshot(ws) == states[i - 1]
    with pytest.raises(UndoError, match=r"^Nothing to undo in "):
        undo_last(ws)


def test_undo_refuses_naming_files_changed_since_the_apply(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    write(ws, "b.txt", "b\n")
    write(ws, "c.txt", "c\n")
    apply_preview(
        ws,
        Preview([modify(ws, "a.txt", "A\n"), delete(ws, "b.txt"), modify(ws, "c.txt", "C\n")]),
        label="abc",
    )
    write(ws, "a.txt", "edited again\n")
    write(ws, "b.txt", "back again\n")
    before = snapshot(ws)
    with pytest.raises(UndoError) as info:
        undo_last(ws)
    assert str(info.value) == (
        'Cannot undo "abc": 2 files changed since it was applied: a.txt (modified since the '
        "apply), b.txt (created again since the apply). Nothing was changed."
    )
    assert info.value.files == ["a.txt", "b.txt"]
    assert isinstance(info.value, ApplyError)
    assert snapshot(ws) == before
    assert len(undo_history(ws)) == 1  # still undoable once the files are put back


def test_undo_refuses_when_a_file_was_deleted(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "A\n")]), label="x")
    (ws / "a.txt").unlink()
    with pytest.raises(UndoError, match=r"a\.txt \(deleted since the apply\)"):
        undo_last(ws)


def test_undo_is_journaled_and_not_itself_undoable(ws: Path) -> None:
    write(ws, "a.txt", "1\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "2\n")]), label="first")
    apply_preview(ws, Preview([modify(ws, "a.txt", "3\n")]), label="second")
    receipt = undo_last(ws)
    entry = json.loads((ws / ".redline/journal" / receipt.undo_entry_id / "entry.json").read_text())
    assert entry["kind"] == "undo" and entry["undoes"] == receipt.entry_id
    assert (ws / ".redline/journal" / receipt.undo_entry_id / "done").exists()
    # Undoing again goes to the older apply, never "redoes" the undone one.
    assert [h.label for h in undo_history(ws)] == ["first"]
    assert undo_last(ws).label == "first"
    assert (ws / "a.txt").read_text() == "1\n"


def test_undo_after_interleaved_undo_and_apply(ws: Path) -> None:
    write(ws, "a.txt", "0\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "A\n")]), label="A")
    apply_preview(ws, Preview([modify(ws, "a.txt", "B\n")]), label="B")
    undo_last(ws)
    apply_preview(ws, Preview([modify(ws, "a.txt", "C\n")]), label="C")
    assert [h.label for h in undo_history(ws)] == ["C", "A"]
    undo_last(ws)
    undo_last(ws)
    assert (ws / "a.txt").read_text() == "0\n"


def test_undo_of_rename_renames_back(ws: Path) -> None:
    write(ws, "a.txt", "a\n", mode=0o600)
    inode = os.stat(ws / "a.txt").st_ino
    apply_preview(ws, Preview([rename(ws, "a.txt", "deep/er/b.txt")]))
    undo_last(ws)
    assert os.stat(ws / "a.txt").st_ino == inode
    assert not (ws / "deep").exists()


def test_history_is_pruned_but_keeps_plenty(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "KEEP_APPLIES", 10)
    monkeypatch.setattr(journal.prune, "__defaults__", (10,))
    for i in range(12):  # up to a fifth more than kept: nothing pruned yet
        apply_preview(ws, Preview([create(f"f{i}.txt", "x")]), label=f"{i}")
    assert [h.label for h in undo_history(ws)] == [str(i) for i in range(11, -1, -1)]
    apply_preview(ws, Preview([create("f12.txt", "x")]), label="12")  # back down to 10
    assert [h.label for h in undo_history(ws)] == [str(i) for i in range(12, 2, -1)]
    assert len(list((ws / ".redline/journal").iterdir())) == 10
    apply_preview(ws, Preview([create("f13.txt", "x")]), label="13")
    assert [h.label for h in undo_history(ws)] == [str(i) for i in range(13, 2, -1)]


def test_unverifiable_unfinished_entry_is_left_in_place_and_reported(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    bad = ws / ".redline/journal/000007"
    bad.mkdir(parents=True)
    (bad / "entry.json").write_text("{not json")
    messages = recover(ws)
    # Hand-written: no key of this user verifies it. Never acted on, never moved unasked.
    assert messages == [journal.foreign_message(["000007"])]
    assert messages[0].startswith(
        "Not acted on: 1 entry signed with another key (or not written by your redline for "
        "this workspace) in .redline/journal: 000007. It was left in place"
    )
    assert (bad / "entry.json").read_text() == "{not json"
    assert not (ws / ".redline/journal-aside").exists()
    assert (ws / "a.txt").read_text() == "a\n"
    assert recover(ws) == messages  # reported every time, not once and then hidden
    # New entries never reuse its id.
    assert apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")])).entry_id == "000008"
    # Moved aside only when asked.
    assert journal.set_aside(ws, "000007") == ws.resolve() / ".redline/journal-aside/000007-foreign"
    assert not bad.exists() and recover(ws) == []


@pytest.mark.parametrize(
    "damage",
    ["missing-entry", "wrong-version", "missing-blob", "bad-kind", "not-a-dir"],
)
def test_every_kind_of_damage_is_survived(ws: Path, damage: str) -> None:
    write(ws, "a.txt", "a\n")
    folder = ws / ".redline/journal/000001"
    folder.mkdir(parents=True)
    good = {
        "version": 1,
        "id": "000001",
        "kind": "apply",
        "label": "x",
        "files": ["a.txt"],
        "ops": [{"path": "a.txt", "before": {"sha256": "0" * 64, "mode": 420}, "after": None}],
        "steps": [{"do": "delete", "path": "a.txt"}],
        "created_dirs": [],
    }
    if damage == "wrong-version":
        good["version"] = 99
    if damage == "bad-kind":
        good["kind"] = "explode"
    if damage != "missing-entry":
        (folder / "entry.json").write_text(json.dumps(good))
    if damage == "not-a-dir":
        (folder / "entry.json").unlink()
        folder.rmdir()
        folder.write_text("junk")
    messages = recover(ws)
    assert len(messages) == 1 and "000001" in messages[0]
    assert (ws / "a.txt").read_text() == "a\n"
    assert recover(ws) == messages and not (ws / ".redline/journal-aside").exists()
    journal.set_aside(ws, "000001")
    assert recover(ws) == []
    assert len(list((ws / ".redline/journal-aside").iterdir())) == 1


def test_corrupt_complete_entry_blocks_undo_with_a_clear_message(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]), label="one")
    receipt = apply_preview(ws, Preview([modify(ws, "a.txt", "c\n")]), label="two")
    (ws / ".redline/journal" / receipt.entry_id / "entry.json").write_text("garbage")
    assert [h.label for h in undo_history(ws)] == ["one"]
    # Its signature no longer matches: never acted on, and undo does not skip past it ...
    with pytest.raises(UndoError, match="newest journal entry 000002 cannot be used") as info:
        undo_last(ws)
    assert "left in place and nothing was changed" in str(info.value)
    assert "redline undo --set-aside 000002" in str(info.value)
    assert (ws / ".redline/journal" / receipt.entry_id).is_dir()
    assert (ws / "a.txt").read_text() == "c\n"
    # ... until the user sets it aside: then the older apply is refused for its own reason.
    journal.set_aside(ws, receipt.entry_id)
    assert (ws / ".redline/journal-aside/000002-foreign").is_dir()
    with pytest.raises(UndoError, match=r"a\.txt \(modified since the apply\)"):
        undo_last(ws)


def test_file_edited_after_a_crash_is_left_alone_and_reported(ws: Path) -> None:
    from redline.workspace import transaction
    from redline.workspace.transaction import SimulatedCrash

    write(ws, "a.txt", "a\n")
    write(ws, "b.txt", "b\n")
    preview = Preview([modify(ws, "a.txt", "A\n"), modify(ws, "b.txt", "B\n")])

    def crash(number: int, text: str) -> None:
        if text == "replaced b.txt":
            raise SimulatedCrash

    transaction._step_hook = crash
    with pytest.raises(SimulatedCrash):
        apply_preview(ws, preview, label="ab")
    transaction._step_hook = None
    write(ws, "a.txt", "a person's edit after the crash\n")
    messages = recover(ws)
    assert len(messages) == 1
    assert messages[0].startswith(
        'Rolled back the interrupted apply of "ab" (journal entry 000001): restored b.txt to the state before it; left alone a.txt (changed after the interrupted apply)'
    )
    assert "journal-aside/000001-conflict" in messages[0]
    assert (ws / "a.txt").read_text() == "a person's edit after the crash\n"
    assert (ws / "b.txt").read_text() == "b\n"
    # The old bytes are not lost: they stay in the entry moved aside.
    blobs = list((ws / ".redline/journal-aside/000001-conflict/blobs").iterdir())
    assert sorted(b.read_bytes() for b in blobs) == [b"a\n", b"b\n"]
    assert recover(ws) == []


def test_half_written_entry_is_removed(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    tmp = ws / ".redline/journal/.tmp-000003/blobs"
    tmp.mkdir(parents=True)
    messages = recover(ws)
    assert messages == [
        "Removed an incomplete journal entry (.tmp-000003); no file had been changed."
    ]
    assert not tmp.parent.exists()


def test_undo_that_fails_half_way_changes_nothing(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from redline.workspace.errors import WriteError

    preview, _, new = mixed_preview(ws)
    apply_preview(ws, preview, label="mixed")
    real = os.replace

    def failing(src: object, dst: object, *args: object, **kwargs: object) -> None:
        if Path(str(dst)).name == "bom.txt":
            raise OSError(errno.EIO, "Input/output error")
        real(src, dst, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(UndoError) as info:
        undo_last(ws)
    assert isinstance(info.value, WriteError)
    assert str(info.value).startswith(
        "Could not undo: replacing src/bom.txt failed: Input/output error (EIO). Restored 1 file"
    )
    monkeypatch.setattr(os, "replace", real)
    assert snapshot(ws) == new
    assert journal_is_clean(ws)
    assert [h.label for h in undo_history(ws)] == ["mixed"]
