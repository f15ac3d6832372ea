"""Small, durable file-system steps shared by apply, undo and recovery."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from redline.workspace.dirfd import DirFds, UnsafePathError
from redline.workspace.textcodec import sha256_bytes

# Bigger files are refused: apply keeps the old bytes in memory and in the journal.
MAX_FILE_BYTES = 64 * 1024 * 1024
TEMP_SUFFIX = ".redline-tmp"


@dataclass(frozen=True)
class Current:
    """What is at a path right now (``lstat``: a symlink is reported as one)."""

    kind: str  # "missing" | "file" | "dir" | "symlink" | "other" | "error"
    data: bytes | None = None
    sha256: str | None = None
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None
    signature: tuple[int, int, int] | None = None
    error: str = ""
    size: int = 0

    @property
    def exists(self) -> bool:
        return self.kind != "missing"


class NotRegularFileError(OSError):
    """The path is a named pipe, a device or a socket: reading it could block forever."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in a person's words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: Path) -> BinaryIO:
    """Open a regular file for reading; refuse FIFOs, devices and sockets without blocking.

    Checked before opening (a device is never opened) and again on the open descriptor (a
    FIFO swapped in between is opened non-blocking and refused, never waited on).
    Raises :class:`NotRegularFileError` (an ``OSError``) naming what the path is instead.
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError(errno.EINVAL, f"is {kind_of(st.st_mode)}, not a regular file")
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, f"is {kind_of(st.st_mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def read_current(path: Path | str, limit: int | None = None) -> Current:
    """Read a regular file's bytes (and hash them) or say what else is there."""
    return _read_current(path, None, limit)


def read_current_at(dirs: DirFds, rel: str, limit: int | None = None) -> Current:
    """:func:`read_current` for ``rel`` reached through folder descriptors (no symlinked folder).

    A folder on the way that is a symbolic link gives kind ``"error"`` naming it.
    """
    try:
        dir_fd, name = dirs.parent(rel)
    except (FileNotFoundError, NotADirectoryError):
        return Current("missing")
    except UnsafePathError as exc:
        if exc.why == "is not a folder":
            return Current("missing")
        return Current("error", error=str(exc))
    except OSError as exc:
        return Current("error", error=exc.strerror or str(exc))
    return _read_current(name, dir_fd, limit)


def _read_current(path: Path | str, dir_fd: int | None, limit: int | None) -> Current:
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return Current("missing")
    except NotADirectoryError:
        return Current("missing")
    except OSError as exc:
        return Current("error", error=exc.strerror or str(exc))
    if stat.S_ISLNK(st.st_mode):
        return Current("symlink", mode=stat.S_IMODE(st.st_mode))
    if stat.S_ISDIR(st.st_mode):
        return Current("dir", mode=stat.S_IMODE(st.st_mode))
    if not stat.S_ISREG(st.st_mode):
        return Current("other", mode=stat.S_IMODE(st.st_mode))
    mode = stat.S_IMODE(st.st_mode)
    if st.st_size > limit:
        return Current("file", mode=mode, size=st.st_size, signature=signature(st))
    try:
        # O_NOFOLLOW: the path was a regular file a moment ago; never follow a swapped-in link.
        # O_NONBLOCK: a FIFO swapped in since the stat is refused below, never waited on.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as exc:
        return Current("error", mode=mode, error=exc.strerror or str(exc))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Current("other", mode=mode)
        os.set_blocking(fd, True)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        st = os.fstat(fd)
    except OSError as exc:
        return Current("error", mode=mode, error=exc.strerror or str(exc))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return Current(
        "file",
        data=data,
        sha256=sha256_bytes(data),
        mode=mode,
        uid=st.st_uid,
        gid=st.st_gid,
        signature=signature(st),
        size=len(data),
    )


def _fill(fd: int, data: bytes, mode: int | None, owner: tuple[int, int] | None) -> None:
    """Write ``data`` to a new file's ``fd``, set mode and owner, fsync."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    if mode is not None:
        os.fchmod(fd, mode)
    if owner is not None:
        # Keeping the owner is best effort: only root may give files away.
        with contextlib.suppress(OSError):
            os.fchown(fd, *owner)
    os.fsync(fd)


def write_new_file(
    path: Path,
    data: bytes,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
) -> None:
    """Create ``path`` (it must not exist), write ``data``, set mode/owner, fsync."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        _fill(fd, data, mode, owner)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def write_new_file_at(
    dir_fd: int,
    name: str,
    data: bytes,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
) -> None:
    """:func:`write_new_file` for ``name`` inside the held folder ``dir_fd`` (never a symlink)."""
    fd = os.open(
        name,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o666,
        dir_fd=dir_fd,
    )
    try:
        _fill(fd, data, mode, owner)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise
    os.close(fd)


def fsync_fd(fd: int) -> None:
    """fsync a held folder descriptor (best effort on odd file systems)."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise


def current_umask() -> int:
    """This process's umask, read without changing it (Linux); 022 when unknown."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def safe_mode(recorded: int | None, current: int | None) -> int | None:
    """A mode from the journal limited to what the file could have had.

    Only permission bits survive (never setuid, setgid or sticky), and never more than the
    file has now (``current``) or, for a file being created again, what a new file may
    get under the umask.
    """
    if recorded is None:
        return None
    cap = current if current is not None else 0o777 & ~current_umask()
    return recorded & 0o777 & cap


def fsync_dir(path: Path) -> None:
    """Make renames and unlinks inside ``path`` durable (best effort on odd file systems)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def temp_path_for(target: Path, tag: str) -> Path:
    """A hidden temporary name beside ``target`` (same folder: ``os.replace`` is atomic)."""
    return target.with_name(temp_name(target.name, tag))


def temp_name(name: str, tag: str) -> str:
    """The temporary file name used beside the file ``name``."""
    return f".{name[:180]}.{tag}{TEMP_SUFFIX}"


def os_error_text(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{text} ({name})" if name else text


def human_size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n} bytes"
