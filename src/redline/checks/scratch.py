"""The scratch tree: a private copy of a workspace where checks run, never the workspace.

Kept under the user's cache (``<cache>/checks/<workspace hash>/slot-N/tree``), one slot per
concurrently checked action, each slot guarded by a ``flock`` so two processes never share
one. Files are *copied* (never hard-linked: a check that writes in place, a ``--fix`` or a
cache, would otherwise write through into the real files).

Syncing is incremental: a manifest remembers, per file, the workspace file's size, mtime and
mode and the copy's own, plus the content hash; a sync copies only what changed on either
side and removes what the workspace no longer has. What a proposal wrote (:meth:`overlay`)
is marked dirty, so the next sync puts the workspace's version back.

Which files: in a git working tree, what ``git ls-files`` lists (tracked, plus untracked
files ``.gitignore`` does not exclude); elsewhere every regular file except ``.git``,
``.redline`` and tool caches. Symlinks and special files are left out.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from redline.paths import user_cache_dir

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
SKIPPED_DIRS = frozenset(
    {".git", ".redline", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hg"}
)
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
# (source size, source mtime_ns, mode, sha256, copy size, copy mtime_ns)
Entry = tuple[int, int, int, str, int, int]


class ScratchError(OSError):
    """The scratch tree cannot be set up; the message names the path and the cause."""


def workspace_cache_dir(root: Path) -> Path:
    """``<user cache>/checks/<hash of the workspace's resolved path>``."""
    key = hashlib.sha256(os.fsencode(str(Path(root).resolve()))).hexdigest()[:24]
    return user_cache_dir() / "checks" / key


def _safe_rel(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts and "" not in parts


def walk_files(root: Path) -> Iterator[str]:
    """Every regular file below ``root`` (relative, ``/``), not descending into symlinks
    or :data:`SKIPPED_DIRS`."""
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, prefix) if prefix else root))
        except OSError:
            continue
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_DIRS:
                        stack.append(rel + "/")
                elif entry.is_file(follow_symlinks=False):
                    yield rel
            except OSError:
                continue


def source_files(root: Path) -> list[str]:
    """The files a scratch copy of ``root`` holds (see the module doc)."""
    from redline.workspace import git

    if git.is_work_tree(root):
        names = git.list_files(root)
        return [n for n in names if _safe_rel(n) and n.split("/", 1)[0] not in (".redline", ".git")]
    return list(walk_files(root))


class ScratchTree:
    """One slot's tree; use :func:`acquire` to get one under its lock."""

    def __init__(self, root: Path, slot: Path) -> None:
        self.root = Path(root).resolve()
        self.slot = slot
        self.tree = slot / "tree"
        self.manifest: dict[str, Entry] = {}
        self.dirty: set[str] = set()
        self.copied = 0
        self._load()

    # -- manifest ------------------------------------------------------------------
    def _load(self) -> None:
        try:
            data = json.loads((self.slot / MANIFEST).read_text("utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
            return
        files = data.get("files")
        dirty = data.get("dirty")
        if not isinstance(files, dict) or not isinstance(dirty, list):
            return
        for rel, entry in files.items():
            if (
                isinstance(rel, str)
                and _safe_rel(rel)
                and isinstance(entry, list)
                and len(entry) == 6
                and isinstance(entry[3], str)
                and all(isinstance(v, int) for i, v in enumerate(entry) if i != 3)
            ):
                self.manifest[rel] = tuple(entry)
        self.dirty = {d for d in dirty if isinstance(d, str) and _safe_rel(d)}

    def _save(self) -> None:
        data = {
            "version": MANIFEST_VERSION,
            "files": {rel: list(entry) for rel, entry in self.manifest.items()},
            "dirty": sorted(self.dirty),
        }
        tmp = self.slot / f".{MANIFEST}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(json.dumps(data, separators=(",", ":")), "utf-8")
        os.replace(tmp, self.slot / MANIFEST)

    # -- copying -------------------------------------------------------------------
    def _target(self, rel: str) -> str:
        return os.path.join(self.tree, rel)

    def _write(self, rel: str, data: bytes, mode: int = 0o644) -> os.stat_result:
        target = self._target(rel)
        parent = os.path.dirname(target)
        try:
            os.makedirs(parent, exist_ok=True)
        except FileExistsError:
            # A file stands where a folder must be (the workspace changed shape).
            self._remove_path(os.path.relpath(parent, self.tree))
            os.makedirs(parent, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            info = os.lstat(target)
            if stat.S_ISDIR(info.st_mode):
                import shutil

                shutil.rmtree(target)
            else:
                os.unlink(target)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode & 0o777)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            return os.fstat(fd)
        finally:
            os.close(fd)

    def _remove_path(self, rel: str) -> None:
        target = self._target(rel)
        try:
            info = os.lstat(target)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            import shutil

            shutil.rmtree(target, ignore_errors=True)
        else:
            os.unlink(target)

    def _copy(self, rel: str, source: os.stat_result) -> None:
        try:
            fd = os.open(os.path.join(self.root, rel), _READ)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
                self._drop(rel)
                return
            raise
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        copy = self._write(rel, data, source.st_mode)
        self.manifest[rel] = (
            source.st_size,
            source.st_mtime_ns,
            source.st_mode,
            hashlib.sha256(data).hexdigest(),
            copy.st_size,
            copy.st_mtime_ns,
        )
        self.copied += 1

    def _copy_unchanged(self, rel: str, entry: Entry) -> bool:
        try:
            copy = os.lstat(self._target(rel))
        except OSError:
            return False
        return (copy.st_size, copy.st_mtime_ns) == entry[4:]

    def _drop(self, rel: str) -> None:
        self._remove_path(rel)
        self.manifest.pop(rel, None)

    def sync(self) -> None:
        """Make the tree equal the workspace (as listed now); copies only what changed."""
        try:
            self.tree.mkdir(parents=True, exist_ok=True)
            self.copied = 0
            wanted = source_files(self.root)
            seen = set()
            for rel in wanted:
                try:
                    source = os.lstat(os.path.join(self.root, rel))
                except OSError:
                    continue
                if not stat.S_ISREG(source.st_mode):
                    continue
                seen.add(rel)
                entry = self.manifest.get(rel)
                if (
                    entry is not None
                    and rel not in self.dirty
                    and entry[:3] == (source.st_size, source.st_mtime_ns, source.st_mode)
                    and self._copy_unchanged(rel, entry)
                ):
                    continue
                self._copy(rel, source)
            for rel in [r for r in self.manifest if r not in seen]:
                self._drop(rel)
            for rel in self.dirty:
                if rel not in seen:
                    self._remove_path(rel)
            self.dirty = set()
            self._save()
        except OSError as exc:
            raise ScratchError(
                f"the scratch tree {self.tree} cannot be synced with {self.root}: "
                f"{exc.strerror or exc}"
            ) from None

    # -- proposals -----------------------------------------------------------------
    def overlay(self, files: Mapping[str, bytes | None]) -> None:
        """Write (bytes) or remove (None) these tree-relative paths; marked dirty."""
        for rel, data in files.items():
            if not _safe_rel(rel):
                raise ScratchError(f"{rel!r} is not a path inside the workspace")
            self.dirty.add(rel)
            self._save()
            if data is None:
                self._remove_path(rel)
            else:
                mode = self.manifest[rel][2] if rel in self.manifest else 0o644
                self._write(rel, data, mode)

    def read(self, rel: str) -> bytes | None:
        try:
            fd = os.open(self._target(rel), _READ)
        except OSError:
            return None
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def tree_hash(self, files: Mapping[str, bytes | None]) -> str:
        """The content hash of the tree as synced, with ``files`` overlaid."""
        hashes = {rel: entry[3] for rel, entry in self.manifest.items()}
        for rel, data in files.items():
            if data is None:
                hashes.pop(rel, None)
            else:
                hashes[rel] = hashlib.sha256(data).hexdigest()
        digest = hashlib.sha256()
        for rel in sorted(hashes):
            digest.update(os.fsencode(rel) + b"\0" + hashes[rel].encode("ascii") + b"\n")
        return digest.hexdigest()


@contextlib.contextmanager
def acquire(root: Path, slots: int) -> Iterator[ScratchTree]:
    """A free slot's tree, held under its ``flock`` until the ``with`` ends (waits for the
    first slot when all ``slots`` are busy)."""
    base = workspace_cache_dir(root)
    try:
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ScratchError(f"cannot create the check cache {base}: {exc.strerror or exc}") from None
    fd = -1
    chosen = base / "slot-0"
    for index in range(max(1, slots)):
        slot = base / f"slot-{index}"
        slot.mkdir(exist_ok=True, mode=0o700)
        candidate = os.open(slot / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(candidate, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(candidate)
            continue
        fd, chosen = candidate, slot
        break
    if fd < 0:
        chosen = base / "slot-0"
        fd = os.open(chosen / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield ScratchTree(root, chosen)
    finally:
        os.close(fd)
