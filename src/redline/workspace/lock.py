"""One writer per workspace: an advisory ``flock`` on ``.redline/lock``.

flock belongs to the open file, so the kernel drops it when a process dies (no stale
locks after a crash), and two threads of one process exclude each other as well.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from redline.workspace.errors import LockError, WriteError
from redline.workspace.state import ensure_state_dir

LOCK_NAME = "lock"
# Long enough to ride out another process's ordinary apply, short enough to feel responsive.
DEFAULT_WAIT_SECONDS = 3.0
_POLL_SECONDS = 0.02


def _holder(fd: int) -> str:
    try:
        raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (held by process {raw})" if raw.isdigit() else ""


@contextmanager
def workspace_lock(root: Path, wait: float | None = None) -> Iterator[None]:
    """Hold the workspace's writer lock; after ``wait`` seconds raise :class:`LockError`."""
    wait = DEFAULT_WAIT_SECONDS if wait is None else wait
    try:
        folder = ensure_state_dir(root)
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise WriteError(
            f"Cannot create redline's state folder {root / '.redline'}: "
            f"{exc.strerror or exc}. Nothing was written.",
            [(".redline", exc.strerror or str(exc))],
        ) from None
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockError(
                        "Another redline process is changing files in this workspace"
                        f"{_holder(fd)}; waited {wait:g} s for its lock "
                        f"{folder / LOCK_NAME}. Nothing was written; try again when it "
                        "has finished.",
                        [(".redline/lock", "held by another redline process")],
                    ) from None
                time.sleep(_POLL_SECONDS)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        except OSError:
            pass  # the pid is only a hint for the message above
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
