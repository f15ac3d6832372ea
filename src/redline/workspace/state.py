"""The workspace's private state folder, ``.redline/``.

A repository can ship its own ``.redline/``, so no component of it is trusted because it
exists: every folder below the workspace root is opened with ``O_NOFOLLOW | O_DIRECTORY``
relative to its parent's descriptor, and a component that is a symlink, not a folder, or
owned by another user is refused with :class:`StateFolderError` naming it. Folders redline
creates are ``0700``; an existing ``.redline`` that others can read is tightened to ``0700``.

Callers that write inside the state folder should work relative to the descriptor
:func:`open_state_dir` returns (``dir_fd=``), so a folder swapped for a symlink after the
check cannot redirect the write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

STATE_DIR_NAME = ".redline"
JOURNAL_DIR_NAME = "journal"
ASIDE_DIR_NAME = "journal-aside"
GITIGNORE_TEXT = "*\n"
DIR_MODE = 0o700
FILE_MODE = 0o600

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class StateFolderError(OSError):
    """A component of ``.redline/`` is unsafe (a symlink, not a folder, another user's)."""

    def __init__(self, message: str, component: str) -> None:
        super().__init__(errno.EPERM, message)
        self.message = message
        self.component = component

    def __str__(self) -> str:
        return self.message


def state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


def journal_dir(root: Path) -> Path:
    return state_dir(root) / JOURNAL_DIR_NAME


def aside_dir(root: Path) -> Path:
    return state_dir(root) / ASIDE_DIR_NAME


def _open_child_dir(parent_fd: int, name: str, shown: str, create: bool) -> int:
    """Open folder ``name`` below ``parent_fd`` without following a symlink; maybe create it."""
    for _attempt in range(2):
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, DIR_MODE, dir_fd=parent_fd)
            continue
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                kind = "a symlink" if _is_link(parent_fd, name) else "not a folder"
                raise StateFolderError(
                    f"{shown} is {kind}; redline refuses to use it (it could redirect "
                    f"redline's writes outside the workspace). Remove it and try again.",
                    shown,
                ) from None
            raise
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            os.close(fd)
            raise StateFolderError(
                f"{shown} belongs to another user (uid {info.st_uid}); redline refuses "
                "to use it. Remove it and try again.",
                shown,
            )
        if stat.S_IMODE(info.st_mode) & 0o077:
            with contextlib.suppress(OSError):
                os.fchmod(fd, DIR_MODE)
        return fd
    raise FileNotFoundError(errno.ENOENT, f"{shown} could not be created", shown)


def _is_link(parent_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_state_dir(root: Path, *parts: str, create: bool = True) -> int:
    """A descriptor for ``.redline/<parts...>``, every component checked (see module doc).

    The caller closes it. Raises :class:`StateFolderError` for an unsafe component,
    ``FileNotFoundError`` when ``create`` is false and a component is missing, and other
    ``OSError`` as the file system reports them.
    """
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = _open_child_dir(root_fd, STATE_DIR_NAME, STATE_DIR_NAME, create)
    finally:
        os.close(root_fd)
    if create:
        _ensure_gitignore(fd)
    shown = STATE_DIR_NAME
    for part in parts:
        if not part or "/" in part or part in (".", ".."):
            os.close(fd)
            raise ValueError(f"not a state folder name: {part!r}")
        shown = f"{shown}/{part}"
        try:
            child = _open_child_dir(fd, part, shown, create)
        finally:
            os.close(fd)
        fd = child
    return fd


@contextlib.contextmanager
def state_dir_fd(root: Path, *parts: str, create: bool = True) -> Iterator[int]:
    """:func:`open_state_dir` as a context manager."""
    fd = open_state_dir(root, *parts, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def _ensure_gitignore(dir_fd: int) -> None:
    """``.redline/.gitignore`` of ``*`` so the folder never lands in commits."""
    try:
        os.stat(".gitignore", dir_fd=dir_fd, follow_symlinks=False)
        return
    except FileNotFoundError:
        pass
    # One temporary name per thread: two threads of one process (a follower and the agent
    # it follows) opening a new workspace at once wrote and moved the same file, and the
    # second move failed as "cannot be opened: No such file or directory".
    tmp = f".gitignore.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
        FILE_MODE,
        dir_fd=dir_fd,
    )
    try:
        os.write(fd, GITIGNORE_TEXT.encode("ascii"))
    finally:
        os.close(fd)
    # Written beside then moved, so a crash never leaves an empty .gitignore behind.
    os.replace(tmp, ".gitignore", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def ensure_state_dir(root: Path) -> Path:
    """Create (or check) ``.redline/`` and return its path; unsafe components raise."""
    os.close(open_state_dir(root))
    return state_dir(root)


def read_state_file(
    root: Path, name: str, *parts: str, limit: int = 16 * 1024 * 1024
) -> bytes | None:
    """The bytes of ``.redline/<parts...>/<name>``, or None when it (or a folder) is missing.

    Every folder is checked as in :func:`open_state_dir` and the file is opened with
    ``O_NOFOLLOW``: a symlink, a non-regular file or another user's file raises
    :class:`StateFolderError` naming it. More than ``limit`` bytes raise it too.
    """
    _check_name(name)
    shown = "/".join((STATE_DIR_NAME, *parts, name))
    try:
        dir_fd = open_state_dir(root, *parts, create=False)
    except FileNotFoundError:
        return None
    try:
        try:
            fd = os.open(
                name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
            )
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StateFolderError(
                    f"{shown} is a symlink; redline refuses to read it. Remove it and try again.",
                    shown,
                ) from None
            raise
    finally:
        os.close(dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise StateFolderError(
                f"{shown} is not a regular file of yours; redline refuses to read it.", shown
            )
        if info.st_size > limit:
            raise StateFolderError(f"{shown} is too large ({info.st_size} bytes)", shown)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_state_file(root: Path, name: str, data: bytes, *parts: str) -> None:
    """Atomically replace ``.redline/<parts...>/<name>`` with ``data`` (``0600``, fsynced).

    Written to a temporary name inside the held folder and renamed over the target there,
    so neither a symlinked folder nor a symlink at ``name`` can redirect the write.
    """
    _check_name(name)
    with state_dir_fd(root, *parts) as dir_fd:
        tmp = f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            FILE_MODE,
            dir_fd=dir_fd,
        )
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)


def _check_name(name: str) -> None:
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise ValueError(f"not a state file name: {name!r}")
