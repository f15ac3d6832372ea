"""Small, durable file-system steps shared by apply, undo and recovery."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from redline.workspace.preview import sha256_bytes

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


def signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def read_current(path: Path, limit: int | None = None) -> Current:
    """Read a regular file's bytes (and hash them) or say what else is there."""
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        st = os.lstat(path)
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
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return Current("error", mode=mode, error=exc.strerror or str(exc))
    try:
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


def write_new_file(
    path: Path,
    data: bytes,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
) -> None:
    """Create ``path`` (it must not exist), write ``data``, set mode/owner, fsync."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
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
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


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
    return target.with_name(f".{target.name[:180]}.{tag}{TEMP_SUFFIX}")


def os_error_text(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{text} ({name})" if name else text


def human_size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n} bytes"
