"""Issue 10: a repository that ships its own ``.redline/`` cannot turn it against the user.

Each test first sets the attack up as a hostile repository (or a faulty plugin) would,
then shows the attack no longer works: files outside the workspace stay unchanged and the
person is told clearly what was refused.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from redline.workspace import auth, entries, journal
from redline.workspace.errors import StaleError, UndoError, WriteError
from redline.workspace.lock import workspace_lock
from redline.workspace.preview import FileCreate, FileModify, Preview, sha256_bytes
from redline.workspace.safe_apply import apply_preview
from redline.workspace.state import StateFolderError

from .helpers import create, modify, write


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the workspace holding a file the attacker wants destroyed."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.txt").write_text("the user's data\n")
    return folder


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry below ``folder`` with its bytes (files) or kind, to compare before/after."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            out[rel] = f"link:{os.readlink(path)}"
        elif path.is_file():
            out[rel] = path.read_bytes() + f" mode={stat.S_IMODE(path.stat().st_mode):o}".encode()
        else:
            out[rel] = "dir"
    return out


def forge_entry(
    ws: Path,
    entry_id: str,
    data: dict[str, object],
    blobs: dict[str, bytes] | None = None,
    *,
    sign: bool = False,
    done: bool = False,
) -> Path:
    """Write a journal entry by hand, as a hostile repository would (optionally signed,
    as if redline itself had a bug that wrote it: the independent checks must still hold)."""
    folder = ws / ".redline" / "journal" / entry_id
    (folder / "blobs").mkdir(parents=True)
    for sha, blob in (blobs or {}).items():
        (folder / "blobs" / sha).write_bytes(blob)
    raw = json.dumps({"version": 1, "id": entry_id, **data}).encode()
    (folder / "entry.json").write_bytes(raw)
    if sign:
        tag = auth.sign(ws.resolve(), entries._signed(entry_id, raw), purpose="journal")
        (folder / "entry.hmac").write_text(tag)
    if done:
        (folder / "done").write_text("x")
    return folder


# -- defect 1: nothing under .redline/ is followed through a symlink ----------------


def test_symlinked_lock_never_touches_the_outside_file(ws: Path, outside: Path) -> None:
    (ws / ".redline").mkdir()
    os.symlink(outside / "precious.txt", ws / ".redline" / "lock")
    before = tree(outside)
    write(ws, "a.txt", "a\n")
    with pytest.raises(WriteError, match=r"\.redline/lock is a symbolic link; redline refuses"):
        apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]))
    assert tree(outside) == before
    assert (ws / "a.txt").read_text() == "a\n"


def test_hard_linked_or_foreign_lock_is_refused(ws: Path, outside: Path) -> None:
    (ws / ".redline").mkdir()
    os.link(outside / "precious.txt", ws / ".redline" / "lock")
    with pytest.raises(WriteError, match="other hard links"), workspace_lock(ws):
        pass
    assert (outside / "precious.txt").read_text() == "the user's data\n"


@pytest.mark.parametrize("component", [".redline", ".redline/journal", ".redline/journal-aside"])
def test_symlinked_state_folders_are_refused(ws: Path, outside: Path, component: str) -> None:
    target = outside / "state"
    target.mkdir()
    if component != ".redline":
        (ws / ".redline").mkdir()
    os.symlink(target, ws / component)
    write(ws, "a.txt", "a\n")
    before = tree(outside)
    apply_error: Exception | None = None
    try:
        apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]))
        # Applying needs no aside folder; a later move aside must refuse it all the same.
        entries.move_aside(ws.resolve(), "000001", "corrupt")
    except (WriteError, StateFolderError) as exc:
        apply_error = exc
    assert apply_error is not None
    assert f"{component} is a symlink" in str(apply_error)
    assert tree(outside) == before
    assert not any(target.iterdir())


def test_symlinked_sessions_folder_is_refused(ws: Path, outside: Path) -> None:
    from redline.review.session_log import SessionLog

    (ws / ".redline").mkdir()
    os.symlink(outside, ws / ".redline" / "sessions")
    before = tree(outside)
    with pytest.raises(StateFolderError, match=r"\.redline/sessions is a symlink"):
        SessionLog(ws / ".redline" / "sessions" / "s.jsonl", {"session_id": "s"})
    os.unlink(ws / ".redline" / "sessions")
    os.symlink(outside / "precious.txt", ws / ".redline" / "sessions")
    with pytest.raises(StateFolderError):
        SessionLog(ws / ".redline" / "sessions" / "s.jsonl", {"session_id": "s"})
    assert tree(outside) == before


def test_symlinked_session_log_file_is_refused(ws: Path, outside: Path) -> None:
    from redline.review.session_log import SessionLog

    (ws / ".redline" / "sessions").mkdir(parents=True)
    os.symlink(outside / "precious.txt", ws / ".redline" / "sessions" / "s.jsonl")
    with pytest.raises(OSError):
        SessionLog(ws / ".redline" / "sessions" / "s.jsonl", {"session_id": "s"})
    assert (outside / "precious.txt").read_text() == "the user's data\n"


# -- defect 4 (modes): .redline 0700, session logs and journal blobs 0600 -----------


def test_state_modes(ws: Path) -> None:
    from redline.review.session_log import SessionLog

    write(ws, "a.txt", "secret\n")
    receipt = apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]))
    log = SessionLog(ws / ".redline" / "sessions" / "s.jsonl", {"session_id": "s"})
    log.close()

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    assert mode(ws / ".redline") == 0o700
    assert mode(ws / ".redline" / "sessions") == 0o700
    assert mode(ws / ".redline" / "sessions" / "s.jsonl") == 0o600
    entry = ws / ".redline" / "journal" / receipt.entry_id
    assert mode(entry) == 0o700
    assert {mode(p) for p in (entry / "blobs").iterdir()} == {0o600}
    assert mode(entry / "entry.json") == 0o600
    assert mode(ws / ".redline" / "lock") == 0o600


# -- defect 2: journal entries are authenticated, paths confined, modes limited -----


def test_forged_entry_deleting_outside_files_is_never_executed(ws: Path, outside: Path) -> None:
    """Unfinished entry whose rollback would delete an outside file and remove an outside
    folder (the temp and created-folder paths), and 'restore' a workspace file."""
    write(ws, "a.txt", "a\n")
    (outside / "empty").mkdir()
    before = tree(outside)
    rel_out = os.path.relpath(outside, ws)
    forge_entry(
        ws,
        "000001",
        {
            "kind": "apply",
            "label": "innocent",
            "files": ["a.txt"],
            "ops": [{"path": "a.txt", "before": None, "after": {"sha256": sha256_bytes(b"a\n")}}],
            "steps": [{"do": "write", "path": "a.txt", "temp": f"{rel_out}/precious.txt"}],
            "created_dirs": [f"{rel_out}/empty"],
        },
    )
    messages = journal.recover(ws)
    assert messages == [journal.foreign_message(["000001"])]
    assert tree(outside) == before
    assert (ws / "a.txt").read_text() == "a\n"
    # Left in place (it could be the user's own, signed with another key) and never run.
    assert journal.recover(ws) == messages
    assert tree(outside) == before
    listed = journal.undo_list(ws)
    assert [(i.entry_id, i.status) for i in listed] == [("000001", "foreign")]
    journal.remove_foreign(ws, "000001")
    assert journal.undo_list(ws) == [] and journal.recover(ws) == []


def test_forged_undo_moving_a_file_outside_is_never_executed(ws: Path, outside: Path) -> None:
    write(ws, "a.txt", "a\n")
    sha = sha256_bytes(b"a\n")
    rel_out = os.path.relpath(outside / "stolen.txt", ws)
    forge_entry(
        ws,
        "000001",
        {
            "kind": "apply",
            "label": "rename",
            "files": ["a.txt"],
            "ops": [
                {"path": rel_out, "before": {"sha256": sha}, "after": None},
                {"path": "a.txt", "before": None, "after": {"sha256": sha}},
            ],
            "steps": [{"do": "rename", "path": "a.txt", "source": rel_out}],
            "created_dirs": [],
        },
        {sha: b"a\n"},
        done=True,
    )
    with pytest.raises(UndoError, match="newest journal entry 000001 cannot be used"):
        journal.undo_last(ws)
    with pytest.raises(UndoError, match="cannot be verified with your key"):
        journal.undo_entry(ws, "000001")
    assert not (outside / "stolen.txt").exists()
    assert (ws / "a.txt").read_text() == "a\n"


def test_signed_entry_with_outside_paths_is_still_refused(ws: Path, outside: Path) -> None:
    """Independently of signatures: paths in an entry are confined (a redline bug or a
    stolen key must not turn the journal into a way out of the workspace)."""
    write(ws, "a.txt", "a\n")
    before = tree(outside)
    rel_out = os.path.relpath(outside / "precious.txt", ws)
    sha = sha256_bytes(b"a\n")
    for n, data in enumerate(
        [
            {"ops": [{"path": rel_out, "before": None, "after": {"sha256": sha}}]},
            {"ops": [{"path": "/etc/passwd", "before": None, "after": {"sha256": sha}}]},
            {
                "ops": [{"path": "a.txt", "before": None, "after": {"sha256": sha}}],
                "created_dirs": [os.path.relpath(outside, ws)],
            },
            {
                "ops": [{"path": "a.txt", "before": None, "after": {"sha256": sha}}],
                "steps": [{"do": "rename", "path": "a.txt", "source": rel_out}],
            },
        ],
        start=1,
    ):
        body: dict[str, object] = {
            "kind": "apply",
            "label": "x",
            "files": [],
            "steps": [],
            "created_dirs": [],
            **data,
        }
        forge_entry(ws, f"{n:06d}", body, sign=True)
        messages = journal.recover(ws)
        assert len(messages) == 1 and "is damaged" in messages[0], messages
    assert tree(outside) == before
    assert (ws / "a.txt").read_text() == "a\n"


def test_entry_mode_never_grants_setuid_or_world_write(ws: Path) -> None:
    """A (signed) unfinished entry asks to restore a file with mode 0o6777."""
    write(ws, "run.sh", "new\n", mode=0o644)
    old = b"#!/bin/sh\nattacker\n"
    forge_entry(
        ws,
        "000001",
        {
            "kind": "apply",
            "label": "x",
            "files": ["run.sh"],
            "ops": [
                {
                    "path": "run.sh",
                    "before": {"sha256": sha256_bytes(old), "mode": 0o6777},
                    "after": {"sha256": sha256_bytes(b"new\n"), "mode": 0o644},
                }
            ],
            "steps": [{"do": "write", "path": "run.sh"}],
            "created_dirs": [],
        },
        {sha256_bytes(old): old},
        sign=True,
    )
    journal.recover(ws)
    assert (ws / "run.sh").read_bytes() == old
    assert stat.S_IMODE((ws / "run.sh").stat().st_mode) == 0o644


def test_undo_mode_is_capped(ws: Path) -> None:
    write(ws, "gone.txt", "bye\n", mode=0o755)
    from .helpers import delete

    apply_preview(ws, Preview([delete(ws, "gone.txt")]))
    old_umask = os.umask(0o077)
    try:
        journal.undo_last(ws)
    finally:
        os.umask(old_umask)
    # Recreated under umask 077: never more than a new file may get.
    assert stat.S_IMODE((ws / "gone.txt").stat().st_mode) == 0o700


def test_undo_list_and_undo_by_id(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    write(ws, "b.txt", "b\n")
    one = apply_preview(ws, Preview([modify(ws, "a.txt", "A\n")]), label="one")
    two = apply_preview(ws, Preview([modify(ws, "b.txt", "B\n")]), label="two")
    three = apply_preview(ws, Preview([modify(ws, "b.txt", "BB\n")]), label="three")
    listed = journal.undo_list(ws)
    assert [(i.entry_id, i.status) for i in listed] == [
        (three.entry_id, "undoable"),
        (two.entry_id, "blocked"),
        (one.entry_id, "undoable"),
    ]
    assert "b.txt (modified since the apply)" in listed[1].why_not
    with pytest.raises(UndoError, match=r"b\.txt \(modified since the apply\)"):
        journal.undo_entry(ws, two.entry_id)
    receipt = journal.undo_entry(ws, one.entry_id)
    assert receipt.label == "one"
    assert (ws / "a.txt").read_text() == "a\n"
    assert (ws / "b.txt").read_text() == "BB\n"
    # The newest is still undone by a plain undo (the dashboard's u).
    assert journal.undo_last(ws).label == "three"
    with pytest.raises(UndoError, match="already undone"):
        journal.undo_entry(ws, one.entry_id)


def test_undo_cli_list_remove(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from redline.cli import main

    write(ws, "a.txt", "a\n")
    first = apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]), label="Edit a")
    forge_entry(ws, "000009", {"kind": "apply", "label": "x", "files": [], "ops": [], "steps": []})
    assert main(["undo", "-C", str(ws), "--list"]) == 0
    out, _ = capsys.readouterr()
    assert "1 entry signed with another key" in out and "000009" in out
    assert f"{first.entry_id}  undoable" in out and "Edit a  (a.txt)" in out
    assert "000009  foreign" in out
    assert main(["undo", "-C", str(ws), "--set-aside", first.entry_id]) == 1
    _, err = capsys.readouterr()
    assert f"No journal entry {first.entry_id} signed with another key" in err
    assert main(["undo", "-C", str(ws), "--set-aside", "000009"]) == 0
    out, _ = capsys.readouterr()
    assert "Moved the journal entry 000009 to " in out and "000009-foreign" in out
    assert main(["undo", "-C", str(ws), "--list"]) == 0
    out, _ = capsys.readouterr()
    assert "000009-foreign  foreign" in out and "signed with another key" not in out
    assert main(["undo", "-C", str(ws), "--remove", "000009"]) == 0
    assert main(["undo", "-C", str(ws), "--remove", first.entry_id]) == 1
    _, err = capsys.readouterr()
    assert f"No foreign or damaged journal entry {first.entry_id}" in err
    assert main(["undo", "-C", str(ws), first.entry_id]) == 0
    assert (ws / "a.txt").read_text() == "a\n"


# -- defect 10: file names that are not UTF-8 --------------------------------------


def test_non_utf8_names_round_trip(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from redline.cli import main
    from redline.workspace.names import json_dumps

    name = os.fsdecode(b"caf\xe9.py")
    folder = os.fsdecode(b"d\xff")
    (ws / name).write_bytes(b"x = 1\n")
    preview = Preview([modify(ws, name, "x = 2\n"), FileCreate(f"{folder}/n\xe9.txt", "hi\n")])
    assert "caf\\udce9.py" in json_dumps(preview.summary())
    assert json.loads(json_dumps(preview.to_dict())) == preview.to_dict()
    receipt = apply_preview(ws, preview)
    assert (ws / name).read_bytes() == b"x = 2\n"
    raw = (ws / ".redline/journal" / receipt.entry_id / "entry.json").read_bytes()
    assert b"caf\\udce9.py" in raw
    assert [i.files for i in journal.undo_list(ws)] == [[name, f"{folder}/n\xe9.txt"]]
    assert main(["undo", "-C", str(ws)]) == 0
    out, _ = capsys.readouterr()
    assert "caf\\udce9.py" in out
    assert (ws / name).read_bytes() == b"x = 1\n"
    assert not (ws / folder).exists()
    assert not any(n.endswith(".redline-tmp") for n in os.listdir(ws))
    assert not [n for n in os.listdir(ws / ".redline/journal") if n.startswith(".tmp-")]


# -- defect 12: receipts and old_text ------------------------------------------------


def test_crlf_preview_from_read_text_is_refused(ws: Path) -> None:
    write(ws, "a.txt", b"one\r\ntwo\r\n")
    data = (ws / "a.txt").read_bytes()
    text = (ws / "a.txt").read_text()  # universal newlines: the CRs are gone
    change = FileModify("a.txt", sha256_bytes(data), text, text.replace("two", "2"))
    assert Preview([change]).stats().removed == 1  # looks like a one-line change
    with pytest.raises(StaleError, match=r"a\.txt \(the preview's old text differs"):
        apply_preview(ws, Preview([change]))
    assert (ws / "a.txt").read_bytes() == b"one\r\ntwo\r\n"
    exact = modify(ws, "a.txt", "one\r\n2\r\n")
    apply_preview(ws, Preview([exact]))
    assert (ws / "a.txt").read_bytes() == b"one\r\n2\r\n"


async def test_apply_preview_receipt_counts_as_success(ws: Path) -> None:
    from redline.extensibility.custom_tools import CustomToolAPI
    from redline.review.resolve import resolve_pending
    from redline.review.store import PendingActionStore

    store = PendingActionStore()
    api = CustomToolAPI(ws, store)
    preview = Preview([create("made.txt", "made\n")])
    api.push_pending_action(
        label="Create made.txt", apply=lambda reason: api.apply_preview(preview), preview=preview
    )
    result = await resolve_pending(store, "apply", "yes")
    assert not result.is_error, result.text
    assert "made.txt" in result.text
    assert (ws / "made.txt").read_text() == "made\n"
    assert not store.has_pending


def test_non_utf8_names_in_json_output_and_session_logs(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from redline.cli import main
    from redline.review.session_log import SessionLog, read_log

    name = os.fsdecode(b"caf\xe9.py")
    (ws / name).write_bytes(b"x = 1\n")
    assert main(["ast-edit", "-C", str(ws), "--json", "--pattern", "x = $A", "."]) == 0
    out = capsys.readouterr().out
    assert '"path": "caf\\udce9.py"' in out
    assert os.fsencode(json.loads(out)["files"][0]["path"]) == b"caf\xe9.py"
    log = SessionLog(ws / ".redline" / "sessions" / "s.jsonl", {"session_id": "s", "cwd": name})
    log.close()
    raw = (ws / ".redline" / "sessions" / "s.jsonl").read_bytes()
    assert b"caf\\udce9.py" in raw
    header, _ = read_log(ws / ".redline" / "sessions" / "s.jsonl")
    assert os.fsencode(header["cwd"]) == b"caf\xe9.py"


def test_state_files_are_read_and_written_without_following_symlinks(
    ws: Path, outside: Path
) -> None:
    from redline.workspace.state import read_state_file, write_state_file

    assert read_state_file(ws, "config.toml") is None
    write_state_file(ws, "record.json", b"{}", "queue")
    assert read_state_file(ws, "record.json", "queue") == b"{}"
    assert stat.S_IMODE((ws / ".redline/queue/record.json").stat().st_mode) == 0o600
    os.symlink(outside / "precious.txt", ws / ".redline" / "config.toml")
    with pytest.raises(StateFolderError, match=r"\.redline/config\.toml is a symlink"):
        read_state_file(ws, "config.toml")
    # A symlink at the name is replaced, never written through.
    write_state_file(ws, "config.toml", b"model = 'x'\n")
    assert (outside / "precious.txt").read_text() == "the user's data\n"
    assert not (ws / ".redline" / "config.toml").is_symlink()
    os.symlink(outside, ws / ".redline" / "queue2")
    with pytest.raises(StateFolderError):
        write_state_file(ws, "r", b"x", "queue2")
    assert tree(outside) == {"precious.txt": b"the user's data\n mode=644"}
