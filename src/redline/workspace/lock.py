"""One writer per workspace: an advisory ``flock`` on ``.redline/lock``.

flock belongs to the open file, so the kernel drops it when a process dies (no stale
locks after a crash), and two threads of one process exclude each other as well.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from redline.workspace.errors import LockError, WriteError
from redline.workspace.state import StateFolderError, open_state_dir, state_dir

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


def _open_lock(root: Path) -> int:
    """Open ``.redline/lock`` relative to the checked state folder, never through a symlink.

    A lock that is a symlink, not a regular file, another user's, or hard-linked elsewhere
    is refused (it could be someone else's file); its contents are never truncated then.
    """
    try:
        dir_fd = open_state_dir(root)
    except StateFolderError as exc:
        raise WriteError(f"{exc} Nothing was written.", [(exc.component, "unsafe")]) from None
    except OSError as exc:
        raise WriteError(
            f"Cannot create redline's state folder {state_dir(root)}: "
            f"{exc.strerror or exc}. Nothing was written.",
            [(".redline", exc.strerror or str(exc))],
        ) from None
    try:
        try:
            fd = os.open(
                LOCK_NAME,
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                0o600,
                dir_fd=dir_fd,
            )
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                cause = "is a symbolic link"
            else:
                cause = f"cannot be opened: {exc.strerror or exc}"
            raise WriteError(
                f"{state_dir(root) / LOCK_NAME} {cause}; redline refuses to use it. Remove it "
                "and try again. Nothing was written.",
                [(".redline/lock", cause)],
            ) from None
    finally:
        os.close(dir_fd)
    info = os.fstat(fd)
    cause = ""
    if not stat.S_ISREG(info.st_mode):
        cause = "is not a regular file"
    elif info.st_uid != os.geteuid():
        cause = f"belongs to another user (uid {info.st_uid})"
    elif info.st_nlink != 1:
        cause = "has other hard links (it could be another file)"
    if cause:
        os.close(fd)
        raise WriteError(
            f"{state_dir(root) / LOCK_NAME} {cause}; redline refuses to use it. Remove it "
            "and try again. Nothing was written.",
            [(".redline/lock", cause)],
        )
    return fd


@contextmanager
def workspace_lock(root: Path, wait: float | None = None) -> Iterator[None]:
    """Hold the workspace's writer lock; after ``wait`` seconds raise :class:`LockError`."""
    wait = DEFAULT_WAIT_SECONDS if wait is None else wait
    folder = state_dir(root)
    fd = _open_lock(root)
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
