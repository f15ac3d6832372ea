"""The scratch tree: a private copy of a workspace where checks run, never the workspace.

Kept under the user's cache (``<cache>/checks/<workspace hash>/slot-N/tree``), one slot per
check running at the same time, each slot guarded by a ``flock`` so two processes never
share one. Files are *copied* (never hard-linked: a check that writes in place, a ``--fix``
or a cache, would otherwise write through into the real files).

**Every run starts from exactly the workspace.** A manifest remembers, per file, the
workspace file's size, mtime and mode, the content hash, and the copy's own size, mtime,
ctime and inode. :meth:`ScratchTree.sync` (before the first run) and
:meth:`ScratchTree.restore` (between runs) walk the copy and remove everything the
manifest does not list — what a check or a proposal wrote, a planted ``conftest.py``, a
``__pycache__``, a symlink, a folder — and copy again every listed file whose copy is not
the one redline wrote (a write changes the ctime, which no process can set back; a
replacement changes the inode; a copy made in the last clock tick before a run, whose
ctime a write in that same tick would not change, has its content compared too). So the tree is the manifest, and :meth:`tree_hash` (the
base-result cache key) covers the whole tree. A sync also copies what changed in the
workspace and drops what it no longer has.

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
import shutil
import stat
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from redline.paths import user_cache_dir

MANIFEST = "manifest.json"
MANIFEST_VERSION = 2
SKIPPED_DIRS = frozenset(
    {".git", ".redline", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hg"}
)
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_POLL = 0.05
# (source size, source mtime_ns, mode, sha256, copy size, copy mtime_ns, copy ctime_ns,
#  copy inode)
Entry = tuple[int, int, int, str, int, int, int, int]
_ENTRY_TYPES = [int, int, int, str, int, int, int, int]


class ScratchError(OSError):
    """The scratch tree cannot be set up; the message names the path and the cause."""


class ScratchCancelled(Exception):
    """``cancel`` was set while waiting for a free slot."""


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


def _sources(root: Path) -> dict[str, os.stat_result]:
    """The regular files of :func:`source_files` with their ``lstat``."""
    found = {}
    prefix = str(root).rstrip("/") + "/"
    for rel in source_files(root):
        try:
            info = os.lstat(prefix + rel)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found[rel] = info
    return found


def _read_fd(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _parents(rels: Iterator[str] | list[str]) -> set[str]:
    """Every folder (``a``, ``a/b``) that holds one of ``rels``."""
    folders: set[str] = set()
    for rel in rels:
        cut = rel.rfind("/")
        while cut > 0:
            folder = rel[:cut]
            if folder in folders:
                break
            folders.add(folder)
            cut = folder.rfind("/")
    return folders


def _force_rmtree(path: str) -> None:
    """Remove a folder a check left behind, even one it made unreadable or read-only."""

    def retry(func: Callable[..., object], target: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), 0o700)
        if func in (os.unlink, os.rmdir, os.remove):
            func(target)
        else:  # a folder that cannot be opened or listed
            os.chmod(target, 0o700)
            shutil.rmtree(target, onerror=retry)

    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    shutil.rmtree(path, onerror=retry)


def hash_entries(entries: Mapping[str, tuple[str, int]]) -> str:
    """The tree hash of ``path → (sha256, mode)``: every path, its content and its mode
    bits (a check may run a file because it is executable)."""
    text = "".join(
        f"{rel}\0{entries[rel][0]}\0{entries[rel][1] & 0o777:o}\n" for rel in sorted(entries)
    )
    return hashlib.sha256(b"redline scratch tree 2\n" + os.fsencode(text)).hexdigest()


class ScratchTree:
    """One slot's tree; use :func:`acquire` to get one under its lock."""

    def __init__(self, root: Path, slot: Path) -> None:
        self.root = Path(root).resolve()
        self.slot = slot
        self.tree = slot / "tree"
        self.manifest: dict[str, Entry] = {}
        self.copied = 0
        self.removed = 0
        self._changed = True  # the manifest file differs from ``manifest`` (unknown yet)
        self.seal = 0  # the file clock just after the last copies (see _seal)
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
        seal = data.get("seal")
        if not isinstance(files, dict) or type(seal) is not int:
            return
        self.seal = seal
        for rel, entry in files.items():
            # Shapes checked cheaply: the manifest is read before every run.
            if (
                type(entry) is list
                and list(map(type, entry)) == _ENTRY_TYPES
                and type(rel) is str
                and _safe_rel(rel)
            ):
                self.manifest[rel] = tuple(entry)
        self._changed = len(self.manifest) != len(files)

    def _save(self) -> None:
        data = {
            "version": MANIFEST_VERSION,
            "seal": self.seal,
            "files": {rel: list(entry) for rel, entry in self.manifest.items()},
        }
        tmp = self.slot / f".{MANIFEST}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(json.dumps(data, separators=(",", ":")), "utf-8")
        os.replace(tmp, self.slot / MANIFEST)
        self._changed = False

    # -- copying -------------------------------------------------------------------
    def _target(self, rel: str) -> str:
        return os.path.join(self.tree, rel)

    def _write(self, rel: str, data: bytes, mode: int = 0o644) -> os.stat_result:
        target = self._target(rel)
        parent = os.path.dirname(target)
        try:
            os.makedirs(parent, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            # A file stands where a folder must be (the workspace or a proposal changed
            # shape).
            self._remove_blocking(rel)
            os.makedirs(parent, exist_ok=True)
        self._remove_path(rel)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode & 0o777)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            info = os.fstat(fd)
            if info.st_mode & 0o777 != mode & 0o777:
                os.fchmod(fd, mode & 0o777)  # as the workspace has it, whatever the umask
                info = os.fstat(fd)
            return info
        finally:
            os.close(fd)

    def _remove_blocking(self, rel: str) -> None:
        """Remove the non-folder that stands where one of ``rel``'s folders must be."""
        parts = rel.split("/")[:-1]
        for end in range(1, len(parts) + 1):
            folder = "/".join(parts[:end])
            try:
                info = os.lstat(self._target(folder))
            except FileNotFoundError:
                return
            if not stat.S_ISDIR(info.st_mode):
                self._remove_path(folder)
                return

    def _remove_path(self, rel: str) -> None:
        target = self._target(rel)
        try:
            info = os.lstat(target)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            _force_rmtree(target)
        else:
            os.unlink(target)

    def _copy(self, rel: str, source: os.stat_result | None) -> None:
        try:
            fd = os.open(os.path.join(self.root, rel), _READ)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
                self._drop(rel)
                return
            raise
        try:
            if source is None:
                source = os.fstat(fd)
            if not stat.S_ISREG(source.st_mode):
                self._drop(rel)
                return
            data = _read_fd(fd)
        finally:
            os.close(fd)
        copy = self._write(rel, data, source.st_mode)
        self.manifest[rel] = (
            source.st_size,
            source.st_mtime_ns,
            source.st_mode,
            hashlib.sha256(data).hexdigest(),
            copy.st_size,
            copy.st_mtime_ns,
            copy.st_ctime_ns,
            copy.st_ino,
        )
        self.copied += 1
        self._changed = True

    def _drop(self, rel: str) -> None:
        self._remove_path(rel)
        if self.manifest.pop(rel, None) is not None:
            self._changed = True

    def _scan(self, keep: set[str]) -> dict[str, os.stat_result]:
        """Walk the copy: remove whatever is not a regular file listed in ``keep`` (or a
        folder holding one); return the ``lstat`` of each kept file found."""
        info = None
        with contextlib.suppress(FileNotFoundError):
            info = os.lstat(self.tree)
        if info is not None and not stat.S_ISDIR(info.st_mode):
            os.unlink(self.tree)  # a check replaced the tree itself
            info = None
        if info is None:
            self.tree.mkdir(parents=True, exist_ok=True)
        elif info.st_mode & 0o700 != 0o700:
            os.chmod(self.tree, 0o755)
        folders = _parents(list(keep))
        found: dict[str, os.stat_result] = {}
        stack = [""]
        while stack:
            prefix = stack.pop()
            path = os.path.join(self.tree, prefix) if prefix else str(self.tree)
            entries = list(os.scandir(path))
            for entry in entries:
                rel = prefix + entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):  # from the listing: no stat
                        if rel not in folders:
                            _force_rmtree(entry.path)
                            self.removed += 1
                            continue
                        if entry.stat(follow_symlinks=False).st_mode & 0o700 != 0o700:
                            os.chmod(entry.path, 0o755)
                        stack.append(rel + "/")
                        continue
                    if rel in keep:
                        info = entry.stat(follow_symlinks=False)
                        if stat.S_ISREG(info.st_mode):
                            found[rel] = info
                            continue
                    os.unlink(entry.path)
                    self.removed += 1
                except FileNotFoundError:
                    continue  # gone meanwhile
        return found

    def _same_copy(self, entry: Entry, copy: os.stat_result | None) -> bool:
        return copy is not None and entry[4:] == (
            copy.st_size,
            copy.st_mtime_ns,
            copy.st_ctime_ns,
            copy.st_ino,
        )

    def _reconcile(self, sources: Mapping[str, os.stat_result] | None) -> None:
        """Make the copy exactly the manifest: ``sources`` (the workspace's files now) or,
        with None, the files the manifest lists, as they were copied."""
        self.copied = self.removed = 0
        wanted = set(self.manifest) if sources is None else set(sources)
        copies = self._scan(wanted)
        if sources is not None:
            for rel in [r for r in self.manifest if r not in sources]:
                del self.manifest[rel]
                self._changed = True
        for rel in wanted:
            entry = self.manifest.get(rel)
            source = sources.get(rel) if sources is not None else None
            if (
                entry is not None
                and (
                    source is None
                    or entry[:3] == (source.st_size, source.st_mtime_ns, source.st_mode)
                )
                and self._same_copy(entry, copies.get(rel))
                and (entry[6] < self.seal or self._same_content(rel, entry))
            ):
                continue
            self._copy(rel, source)
        if self.copied:
            self._seal()
        if self._changed:
            self._save()

    def _seal(self) -> None:
        """Note the file clock's now (a probe's ctime) once the copies are made: a file
        whose copy's ctime is not older than this may have been rewritten by the next run
        within the same clock tick (timestamps are coarse: the kernel's clock ticks every
        few milliseconds), so the next walk compares its content too."""
        probe = self.slot / "clock"
        probe.touch()
        os.utime(probe)  # sets its ctime to the file clock's now
        self.seal = os.stat(probe).st_ctime_ns
        self._changed = True

    def _same_content(self, rel: str, entry: Entry) -> bool:
        data = self.read(rel)
        return data is not None and hashlib.sha256(data).hexdigest() == entry[3]

    def sync(self) -> None:
        """Make the tree equal the workspace as listed now, and nothing else (see the
        module doc); copies only what changed."""
        try:
            self._reconcile(_sources(self.root))
        except OSError as exc:
            raise ScratchError(
                f"the scratch tree {self.tree} cannot be synced with {self.root}: "
                f"{exc.strerror or exc}"
            ) from None

    def restore(self) -> None:
        """Put the tree back to what the last :meth:`sync` made of it: everything a run
        or a proposal wrote since is removed or copied again (the workspace is not listed
        again, so two runs of one check see the same workspace)."""
        try:
            self._reconcile(None)
        except OSError as exc:
            raise ScratchError(
                f"the scratch tree {self.tree} cannot be restored from {self.root}: "
                f"{exc.strerror or exc}"
            ) from None

    # -- proposals -----------------------------------------------------------------
    def overlay(self, files: Mapping[str, bytes | None]) -> None:
        """Write (bytes) or remove (None) these tree-relative paths; the next
        :meth:`restore` or :meth:`sync` undoes them."""
        for rel in files:
            if not _safe_rel(rel):
                raise ScratchError(f"{rel!r} is not a path inside the workspace")
        try:
            for rel, data in files.items():
                if data is None:
                    self._remove_path(rel)
                else:
                    self._write(rel, data, self.mode(rel))
        except OSError as exc:
            raise ScratchError(
                f"the proposal cannot be written into the scratch tree {self.tree}: "
                f"{exc.strerror or exc}"
            ) from None

    def mode(self, rel: str) -> int:
        """The mode a proposal's text of ``rel`` is written with (the workspace file's)."""
        entry = self.manifest.get(rel)
        return entry[2] & 0o777 if entry is not None else 0o644

    def read(self, rel: str) -> bytes | None:
        try:
            fd = os.open(self._target(rel), _READ)
        except OSError:
            return None
        try:
            return _read_fd(fd)
        finally:
            os.close(fd)

    def tree_hash(self, files: Mapping[str, bytes | None]) -> str:
        """The content hash of the whole tree as synced (every file, its content and
        mode), with ``files`` overlaid."""
        entries = {rel: (entry[3], entry[2]) for rel, entry in self.manifest.items()}
        for rel, data in files.items():
            if data is None:
                entries.pop(rel, None)
            else:
                entries[rel] = (hashlib.sha256(data).hexdigest(), self.mode(rel))
        return hash_entries(entries)


def current_tree_hash(root: Path, files: Mapping[str, bytes | None]) -> str:
    """What :meth:`ScratchTree.tree_hash` would say after a sync now, without a slot:
    the workspace's files hashed (a slot's manifest is used as a cache of hashes for
    files whose size, time and mode it knows)."""
    known: dict[str, Entry] = {}
    base = workspace_cache_dir(root)
    with contextlib.suppress(OSError):
        for slot in sorted(base.glob("slot-*")):
            known.update(ScratchTree(root, slot).manifest)
    root = Path(root).resolve()
    entries: dict[str, tuple[str, int]] = {}
    for rel, source in _sources(root).items():
        entry = known.get(rel)
        if entry is not None and entry[:3] == (source.st_size, source.st_mtime_ns, source.st_mode):
            entries[rel] = (entry[3], source.st_mode)
            continue
        try:
            fd = os.open(os.path.join(root, rel), _READ)
        except OSError:
            continue
        try:
            entries[rel] = (hashlib.sha256(_read_fd(fd)).hexdigest(), source.st_mode)
        finally:
            os.close(fd)
    for rel, data in files.items():
        if data is None:
            entries.pop(rel, None)
        else:
            mode = entries[rel][1] if rel in entries else 0o644
            entries[rel] = (hashlib.sha256(data).hexdigest(), mode)
    return hash_entries(entries)


@contextlib.contextmanager
def acquire(root: Path, slots: int, cancel: threading.Event | None = None) -> Iterator[ScratchTree]:
    """A free slot's tree, held under its ``flock`` until the ``with`` ends. When all
    ``slots`` are busy it waits for the first to come free (or until ``cancel`` is set:
    :class:`ScratchCancelled`)."""
    base = workspace_cache_dir(root)
    try:
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ScratchError(f"cannot create the check cache {base}: {exc.strerror or exc}") from None
    fds: dict[Path, int] = {}
    chosen: Path | None = None
    waiter = cancel if cancel is not None else threading.Event()
    try:
        while chosen is None:
            for index in range(max(1, slots)):
                slot = base / f"slot-{index}"
                if slot not in fds:
                    try:
                        slot.mkdir(exist_ok=True, mode=0o700)
                        fds[slot] = os.open(
                            slot / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
                        )
                    except OSError as exc:
                        raise ScratchError(
                            f"cannot open the check slot {slot}: {exc.strerror or exc}"
                        ) from None
                try:
                    fcntl.flock(fds[slot], fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                chosen = slot
                break
            else:
                if waiter.wait(_POLL) and cancel is not None:
                    raise ScratchCancelled()
    finally:
        for slot, fd in fds.items():
            if slot != chosen:
                os.close(fd)
    assert chosen is not None
    try:
        yield ScratchTree(root, chosen)
    finally:
        os.close(fds[chosen])
