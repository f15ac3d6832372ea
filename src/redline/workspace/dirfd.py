"""Race-free access to workspace paths through folder descriptors.

A path such as ``src/pkg/new.py`` is never handed to the kernel as a whole: the folder
that holds it is reached by opening ``src`` and then ``pkg`` relative to the descriptor
before, each with ``O_NOFOLLOW | O_DIRECTORY``, starting at the workspace root. A folder
that is (or becomes, while redline works) a symbolic link is refused with
:class:`UnsafePathError` instead of being followed, and once a folder is open every
create, rename and delete inside it happens relative to that descriptor, so swapping the
folder for a symlink afterwards cannot redirect the write outside the workspace.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path, PurePosixPath

from redline.workspace import paths

__all__ = ["DirFds", "UnsafePathError", "open_dir_at", "split_rel"]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePathError(OSError):
    """A folder on the way to a path is a symbolic link or not a folder."""

    def __init__(self, shown: str, why: str) -> None:
        super().__init__(errno.ELOOP, f"{shown} {why}")
        self.shown = shown
        self.why = why

    def __str__(self) -> str:
        return f"{self.shown} {self.why}"


def split_rel(rel: str) -> tuple[str, ...]:
    """The components of a confined relative path; anything else raises ``ConfinementError``."""
    normalized = paths.normalize_relative(rel)
    if normalized == "." or normalized.startswith("/") or "\0" in normalized:
        raise paths.ConfinementError(f"{rel}: not a path inside the workspace")
    return PurePosixPath(normalized).parts


def _is_link(parent_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_dir_at(parent_fd: int, name: str, shown: str, *, create: bool = False) -> int:
    """Open folder ``name`` below ``parent_fd`` without following a symlink (maybe create it)."""
    for _attempt in range(3):
        try:
            return os.open(name, DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                if _is_link(parent_fd, name):
                    raise UnsafePathError(
                        shown, "is a symbolic link; redline does not follow it"
                    ) from None
                raise UnsafePathError(shown, "is not a folder") from None
            raise
    raise FileNotFoundError(errno.ENOENT, f"{shown} could not be created", shown)


class DirFds:
    """Folder descriptors below one workspace root, opened on demand and kept until closed.

    ``get("a/b")`` opens ``a`` then ``b`` relative to the root descriptor (see module doc);
    the same folder is opened once, so a temp file written into it and the rename that
    puts the temp in place use the very same folder even if the path is swapped meanwhile.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._fds: dict[str, int] = {}
        self._fds["."] = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def __enter__(self) -> DirFds:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)

    def get(self, rel_dir: str, *, create: bool = False) -> int:
        """The descriptor of folder ``rel_dir`` (``"."`` is the root)."""
        if rel_dir in ("", "."):
            return self._fds["."]
        parts = split_rel(rel_dir)
        key = "/".join(parts)
        cached = self._fds.get(key)
        if cached is not None:
            return cached
        parent = self.get("/".join(parts[:-1]) or ".", create=create)
        fd = open_dir_at(parent, parts[-1], key, create=create)
        self._fds[key] = fd
        return fd

    def parent(self, rel: str, *, create: bool = False) -> tuple[int, str]:
        """``(descriptor of the folder holding rel, rel's last component)``."""
        parts = split_rel(rel)
        return self.get("/".join(parts[:-1]) or ".", create=create), parts[-1]

    def forget(self, rel_dir: str) -> None:
        """Close a cached folder descriptor (after the folder was removed)."""
        key = "/".join(split_rel(rel_dir))
        fd = self._fds.pop(key, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def held(self) -> list[int]:
        return list(self._fds.values())
