"""Failures half-way (disk full, permission denied) leave every file with its old bytes."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from redline.workspace import fsutil
from redline.workspace.safe_apply import WriteError, apply_preview

from .helpers import journal_is_clean, mixed_preview, snapshot

# The targets of the mixed preview, in the order their steps run.
WRITE_TARGETS = ["src/a.py", "src/bom.txt", "pkg/new/mod.py"]
SWITCH_STEPS = [
    ("replace", "src/a.py", "replacing src/a.py"),
    ("replace", "src/bom.txt", "replacing src/bom.txt"),
    ("replace", "pkg/new/mod.py", "replacing pkg/new/mod.py"),
    ("unlink", "gone.txt", "deleting gone.txt"),
    ("rename", "moved/renamed.txt", "renaming old.txt to moved/renamed.txt"),
]


def _no_entries_left(root: Path) -> bool:
    journal = root / ".redline" / "journal"
    return not journal.exists() or not any(journal.iterdir())


@pytest.mark.parametrize("target", WRITE_TARGETS)
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES])
def test_temp_write_failure_at_each_file(
    ws: Path, monkeypatch: pytest.MonkeyPatch, target: str, code: int
) -> None:
    preview, old, _ = mixed_preview(ws)
    real = fsutil.write_new_file_at

    def failing(dir_fd: int, name: str, data: bytes, *args: Any, **kwargs: Any) -> None:
        if name.startswith(f".{Path(target).name}.") and name.endswith(fsutil.TEMP_SUFFIX):
            # Leave a partial file behind, as a real full disk would.
            real(dir_fd, name, data[:3])
            raise OSError(code, os.strerror(code))
        real(dir_fd, name, data, *args, **kwargs)

    monkeypatch.setattr(fsutil, "write_new_file_at", failing)
    with pytest.raises(WriteError) as info:
        apply_preview(ws, preview)
    name = errno.errorcode[code]
    assert f"writing {target} failed: {os.strerror(code)} ({name})" in str(info.value)
    assert str(info.value).endswith("Nothing was changed.")
    assert snapshot(ws) == old
    assert not (ws / "pkg").exists() and not (ws / "moved").exists()
    assert journal_is_clean(ws) and _no_entries_left(ws)


@pytest.mark.parametrize(("call", "target", "doing"), SWITCH_STEPS)
def test_switch_failure_at_each_step_rolls_back(
    ws: Path, monkeypatch: pytest.MonkeyPatch, call: str, target: str, doing: str
) -> None:
    preview, old, _ = mixed_preview(ws)
    real: Callable[..., Any] = getattr(os, call)
    failed = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        dest = Path(args[1] if call != "unlink" else args[0])
        if not failed and dest.name == Path(target).name:
            failed.append(dest)
            raise OSError(errno.EACCES, "Permission denied")
        return real(*args, **kwargs)

    monkeypatch.setattr(os, call, failing)
    with pytest.raises(WriteError) as info:
        apply_preview(ws, preview)
    assert failed, "the failure was injected"
    message = str(info.value)
    assert f"Could not apply: {doing} failed: Permission denied (EACCES)." in message
    assert info.value.files == [target]
    assert "Restored" in message or "Nothing was changed" in message
    assert snapshot(ws) == old
    assert journal_is_clean(ws) and _no_entries_left(ws)


def test_disk_full_while_writing_the_journal(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    preview, old, _ = mixed_preview(ws)
    real = fsutil.write_new_file_at

    def failing(dir_fd: int, name: str, data: bytes, *args: Any, **kwargs: Any) -> None:
        if len(name) == 64:  # a blob: named by its sha256
            raise OSError(errno.ENOSPC, "No space left on device")
        real(dir_fd, name, data, *args, **kwargs)

    monkeypatch.setattr(fsutil, "write_new_file_at", failing)
    with pytest.raises(
        WriteError,
        match=r"Could not write the journal entry .*No space left on device \(ENOSPC\)\. Nothing was written\.",
    ):
        apply_preview(ws, preview)
    assert snapshot(ws) == old
    assert journal_is_clean(ws) and _no_entries_left(ws)


def test_failed_rollback_is_finished_by_recovery(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The switch fails, and so does restoring one file: the entry stays for recovery.
    from redline.workspace import journal

    preview, old, _ = mixed_preview(ws)
    real_unlink = os.unlink
    calls = {"n": 0}

    def failing_unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).name == "gone.txt":
            raise OSError(errno.EIO, "Input/output error")
        if Path(path).name == "mod.py":
            calls["n"] += 1
            raise OSError(errno.EIO, "Input/output error")
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", failing_unlink)
    with pytest.raises(WriteError) as info:
        apply_preview(ws, preview)
    assert "Could not restore pkg/new/mod.py (Input/output error (EIO))" in str(info.value)
    assert "restores them the next time it opens this workspace" in str(info.value)
    monkeypatch.setattr(os, "unlink", real_unlink)
    messages = journal.recover(ws)
    assert len(messages) == 1 and "restored pkg/new/mod.py" in messages[0]
    assert snapshot(ws) == old
    assert journal_is_clean(ws)
