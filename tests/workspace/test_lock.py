"""One writer per workspace: a second writer waits briefly, then fails clearly."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from redline.workspace import journal, lock
from redline.workspace.lock import workspace_lock
from redline.workspace.preview import Preview
from redline.workspace.safe_apply import ApplyError, LockError, apply_preview

from .helpers import create, modify, snapshot, write

HOLDER = """
import sys
from pathlib import Path
from redline.workspace.lock import workspace_lock
with workspace_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_second_process_gets_a_clear_lock_error(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lock, "DEFAULT_WAIT_SECONDS", 0.2)
    write(ws, "a.txt", "a\n")
    preview = Preview([modify(ws, "a.txt", "b\n")])
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        with pytest.raises(LockError) as info:
            apply_preview(ws, preview)
        message = str(info.value)
        assert message.startswith(
            f"Another redline process is changing files in this workspace (held by process {child.pid}); waited 0.2 s"
        )
        assert message.endswith("Nothing was written; try again when it has finished.")
        assert isinstance(info.value, ApplyError)
        assert (ws / "a.txt").read_text() == "a\n"
        with pytest.raises(LockError) as undo_info:
            journal.undo_last(ws)
        assert isinstance(undo_info.value, journal.UndoError)
    finally:
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.close()
        child.wait(10)
    apply_preview(ws, preview)
    assert (ws / "a.txt").read_text() == "b\n"


def test_a_killed_holder_leaves_no_stale_lock(ws: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline() == "locked\n"
    child.kill()
    child.wait(10)
    apply_preview(ws, Preview([create("a.txt", "a\n")]))
    assert (ws / "a.txt").exists()


def test_writer_waits_for_the_lock_then_proceeds(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    preview = Preview([modify(ws, "a.txt", "b\n")])
    errors: list[BaseException] = []
    holding = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with workspace_lock(ws):
            holding.set()
            release.wait(10)

    def write_it() -> None:
        try:
            apply_preview(ws, preview)
        except BaseException as exc:
            errors.append(exc)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    writer = threading.Thread(target=write_it)
    writer.start()
    writer.join(0.1)
    assert writer.is_alive(), "the writer waits while the lock is held"
    assert (ws / "a.txt").read_text() == "a\n"
    release.set()
    writer.join(10)
    holder.join(10)
    assert errors == []
    assert (ws / "a.txt").read_text() == "b\n"


def test_recover_skips_a_live_writers_entry(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An unfinished entry while the lock is held belongs to a running apply: hands off.
    monkeypatch.setattr(journal, "RECOVERY_LOCK_WAIT_SECONDS", 0.05)
    write(ws, "a.txt", "a\n")
    (ws / ".redline/journal/.tmp-000001").mkdir(parents=True)
    before = snapshot(ws)
    with workspace_lock(ws):
        messages = journal.recover(ws)
    assert messages == [
        "Recovery postponed: another redline process is changing files in this workspace; "
        "its unfinished journal entry is not a crash leftover."
    ]
    assert (ws / ".redline/journal/.tmp-000001").exists()
    assert snapshot(ws) == before
