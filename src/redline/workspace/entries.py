"""Journal entries: what one apply (or undo) is about to do, stored before it does it.

Layout of ``.redline/journal/<id>/``::

    entry.json      metadata, the before/after state of every path, the steps, temp names
    blobs/<sha256>  the old bytes of every file the transaction changes (for rollback/undo)
    done            the commit marker; an entry without it is unfinished

An entry is first built in ``.tmp-<id>/`` and renamed into place, so a half-written
entry is never mistaken for one that may have touched files.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from redline.workspace import auth, fsutil, paths
from redline.workspace.dirfd import DirFds, split_rel
from redline.workspace.preview import sha256_bytes
from redline.workspace.state import (
    ASIDE_DIR_NAME,
    JOURNAL_DIR_NAME,
    aside_dir,
    journal_dir,
    state_dir_fd,
)

FORMAT_VERSION = 1
ENTRY_FILE = "entry.json"
TAG_FILE = "entry.hmac"
BLOBS_DIR = "blobs"
DONE_FILE = "done"
TMP_PREFIX = ".tmp-"
FOREIGN = "foreign"
ID_RE = re.compile(r"^[0-9]{6,12}$")
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class CorruptEntry(Exception):
    """A journal entry cannot be read; the message says why."""


class ForeignEntry(CorruptEntry):
    """An entry no key of this user verifies for this workspace (no valid tag).

    It is never acted on and stays where it is (the key that signed it may come back):
    recovery reports it, ``redline undo --list`` shows it, ``--set-aside`` moves it to
    ``.redline/journal-aside/<id>-foreign`` and ``--remove`` deletes it.
    """


@dataclass(frozen=True)
class FileState:
    """A file's content hash and permission bits (None: default for a new file)."""

    sha256: str
    mode: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "mode": self.mode}

    @classmethod
    def from_dict(cls, data: Any) -> FileState | None:
        if data is None:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("sha256"), str):
            raise CorruptEntry("a file state lacks its sha256")
        mode = data.get("mode")
        if mode is not None and (not isinstance(mode, int) or isinstance(mode, bool)):
            raise CorruptEntry("a file state has a non-numeric mode")
        if not _SHA_RE.match(data["sha256"]):
            raise CorruptEntry("a file state has a malformed sha256")
        # Only permission bits are ever taken from an entry (no setuid/setgid/sticky).
        return cls(data["sha256"], None if mode is None else mode & 0o777)


@dataclass(frozen=True)
class PathOp:
    """One path's state before and after the transaction (None: no file there)."""

    path: str
    before: FileState | None
    after: FileState | None


@dataclass(frozen=True)
class Step:
    """One move of the transaction: ``write`` (temp then replace), ``delete`` or ``rename``."""

    do: str
    path: str
    source: str = ""
    temp: str = ""


@dataclass
class Entry:
    id: str
    kind: str  # "apply" | "undo"
    label: str
    files: list[str]
    ops: list[PathOp]
    steps: list[Step]
    created_dirs: list[str] = field(default_factory=list)
    source_tool_name: str = ""
    action_id: str | None = None
    undoes: str | None = None
    time: str = ""
    folder: Path | None = None
    complete: bool = False
    root: Path | None = None
    # Real path -> the path it was asked for, where they differ (a symlinked folder).
    via: dict[str, str] = field(default_factory=dict)

    @property
    def when(self) -> datetime:
        try:
            return datetime.fromisoformat(self.time)
        except ValueError:
            return datetime.fromtimestamp(0, UTC)

    def blob_path(self, sha256: str) -> Path:
        """Where a blob is shown to a person (reading goes through :func:`read_blob`)."""
        assert self.folder is not None
        return self.folder / BLOBS_DIR / sha256

    def to_dict(self) -> dict[str, Any]:
        data = self._fields()
        if self.via:  # only then: entries written before `via` existed read back the same
            data["via"] = dict(self.via)
        return data

    def _fields(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "files": self.files,
            "source_tool_name": self.source_tool_name,
            "action_id": self.action_id,
            "undoes": self.undoes,
            "time": self.time,
            "created_dirs": self.created_dirs,
            "ops": [
                {
                    "path": op.path,
                    "before": None if op.before is None else op.before.to_dict(),
                    "after": None if op.after is None else op.after.to_dict(),
                }
                for op in self.ops
            ],
            "steps": [
                {"do": s.do, "path": s.path, "source": s.source, "temp": s.temp} for s in self.steps
            ],
        }


def _str_list(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CorruptEntry(f"'{key}' is not a list of paths")
    return value


def _check_rel(rel: str, what: str) -> None:
    """Every path in an entry is a plain relative path inside the workspace (no ``..``)."""
    try:
        parts = split_rel(rel)
    except paths.ConfinementError:
        raise CorruptEntry(f"{what} {rel!r} leads outside the workspace") from None
    if "/".join(parts) != rel:
        raise CorruptEntry(f"{what} {rel!r} is not a plain relative path")
    if any(paths.protected_name(part) for part in parts):
        raise CorruptEntry(f"{what} {rel!r} lies inside a folder redline never touches")


def entry_from_dict(data: Any, folder: Path) -> Entry:
    if not isinstance(data, dict):
        raise CorruptEntry("entry.json is not a JSON object")
    if data.get("version") != FORMAT_VERSION:
        raise CorruptEntry(f"unknown journal format version {data.get('version')!r}")
    try:
        ops = [
            PathOp(
                str(op["path"]),
                FileState.from_dict(op.get("before")),
                FileState.from_dict(op.get("after")),
            )
            for op in data["ops"]
        ]
        steps = [
            Step(str(s["do"]), str(s["path"]), str(s.get("source", "")), str(s.get("temp", "")))
            for s in data["steps"]
        ]
        kind = str(data["kind"])
        entry_id = str(data["id"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise CorruptEntry(f"entry.json lacks a required field ({exc})") from None
    if kind not in ("apply", "undo", "external"):
        raise CorruptEntry(f"unknown entry kind {kind!r}")
    if not ID_RE.match(entry_id) or entry_id != folder.name:
        raise CorruptEntry(f"entry id {entry_id!r} does not match its folder {folder.name}")
    op_paths = set()
    for op in ops:
        _check_rel(op.path, "the path")
        op_paths.add(op.path)
    for step in steps:
        if step.do not in ("write", "delete", "rename"):
            raise CorruptEntry(f"unknown step {step.do!r}")
        if step.path not in op_paths or (step.do == "rename" and step.source not in op_paths):
            raise CorruptEntry(f"a {step.do} step names a path the entry does not record")
    created_dirs = _str_list(data, "created_dirs")
    for rel in created_dirs:
        _check_rel(rel, "the created folder")
    action_id = data.get("action_id")
    undoes = data.get("undoes")
    via = data.get("via", {})
    if not isinstance(via, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in via.items()
    ):
        raise CorruptEntry("'via' is not a map of paths")
    return Entry(
        id=entry_id,
        kind=kind,
        label=str(data.get("label", "")),
        files=_str_list(data, "files"),
        ops=ops,
        steps=steps,
        created_dirs=created_dirs,
        source_tool_name=str(data.get("source_tool_name", "")),
        action_id=None if action_id is None else str(action_id),
        undoes=None if undoes is None else str(undoes),
        time=str(data.get("time", "")),
        folder=folder,
        via=dict(via),
    )


def _signed(name: str, raw: bytes) -> bytes:
    return b"redline-journal-entry\0" + name.encode("utf-8", "surrogateescape") + b"\0" + raw


def _read_at(dir_fd: int, name: str, limit: int) -> bytes | None:
    """A small regular file inside a held folder (None if missing; never a symlink)."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _is_file_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_entry(jfd: int, name: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=jfd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ForeignEntry("it is not a folder redline wrote (a symlink or a file)") from None
        raise


def _load_at(root: Path, jfd: int, name: str) -> Entry:
    efd = _open_entry(jfd, name)
    try:
        raw = _read_at(efd, ENTRY_FILE, fsutil.MAX_FILE_BYTES)
        tag = _read_at(efd, TAG_FILE, 256)
        if (
            raw is None
            or tag is None
            or not auth.verify(
                root, _signed(name, raw), tag.decode("ascii", "replace").strip(), purpose="journal"
            )
        ):
            raise ForeignEntry(
                "it carries no valid signature from your redline for this workspace "
                "(signed with another key, written by someone else, edited, or from an "
                "older redline)"
            )
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise CorruptEntry(f"entry.json is not valid JSON ({exc})") from None
        entry = entry_from_dict(data, journal_dir(root) / name)
        entry.root = root
        entry.complete = _is_file_at(efd, DONE_FILE)
        wanted = [op for op in entry.ops if op.before is not None]
        if wanted:
            try:
                bfd = os.open(BLOBS_DIR, _DIR_FLAGS, dir_fd=efd)
            except OSError:
                raise CorruptEntry("its folder of saved old contents is missing") from None
            try:
                for op in wanted:
                    assert op.before is not None
                    if not _is_file_at(bfd, op.before.sha256):
                        raise CorruptEntry(f"the saved old contents of {op.path} are missing")
            finally:
                os.close(bfd)
        return entry
    finally:
        os.close(efd)


def load_entry(root: Path, name: str) -> Entry:
    """Read, authenticate and check one entry; raise :class:`ForeignEntry`/:class:`CorruptEntry`."""
    with state_dir_fd(root, JOURNAL_DIR_NAME, create=False) as jfd:
        return _load_at(root, jfd, name)


def is_done(root: Path, name: str) -> bool:
    """Whether the entry folder ``name`` carries its commit marker (never following links)."""
    with state_dir_fd(root, JOURNAL_DIR_NAME, create=False) as jfd:
        try:
            efd = os.open(name, _DIR_FLAGS, dir_fd=jfd)
        except OSError:
            return False
        try:
            return _is_file_at(efd, DONE_FILE)
        finally:
            os.close(efd)


def done_names(root: Path, names: list[str]) -> set[str]:
    """Which of the entry folders ``names`` carry their commit marker (one folder open)."""
    out: set[str] = set()
    if not names:
        return out
    with state_dir_fd(root, JOURNAL_DIR_NAME, create=False) as jfd:
        for name in names:
            if not ID_RE.match(name):
                continue
            try:
                efd = os.open(name, _DIR_FLAGS, dir_fd=jfd)
            except OSError:
                continue
            try:
                if _is_file_at(efd, DONE_FILE):
                    out.add(name)
            finally:
                os.close(efd)
    return out


def journal_names(root: Path) -> list[str]:
    """Every name in ``.redline/journal/``, sorted ([] when there is no journal yet)."""
    try:
        with state_dir_fd(root, JOURNAL_DIR_NAME, create=False) as jfd:
            return sorted(os.listdir(jfd))
    except FileNotFoundError:
        return []


def entry_folders(root: Path) -> list[Path]:
    """Entry folders (not temporaries), oldest first."""
    folder = journal_dir(root)
    return [folder / n for n in journal_names(root) if ID_RE.match(n)]


def read_blob(entry: Entry, sha256: str) -> bytes:
    """The saved old bytes ``sha256`` of ``entry``, read through held folder descriptors."""
    assert entry.root is not None and entry.folder is not None
    if not _SHA_RE.match(sha256):
        raise CorruptEntry("a saved old contents name is malformed")
    with state_dir_fd(entry.root, JOURNAL_DIR_NAME, create=False) as jfd:
        efd = _open_entry(jfd, entry.folder.name)
        try:
            bfd = os.open(BLOBS_DIR, _DIR_FLAGS, dir_fd=efd)
            try:
                data = _read_at(bfd, sha256, fsutil.MAX_FILE_BYTES)
            finally:
                os.close(bfd)
        finally:
            os.close(efd)
    if data is None:
        raise FileNotFoundError(errno.ENOENT, "saved old contents missing", sha256)
    return data


def next_entry_id(root: Path) -> str:
    highest = 0
    for part in (JOURNAL_DIR_NAME, ASIDE_DIR_NAME):
        try:
            with state_dir_fd(root, part, create=False) as fd:
                names = os.listdir(fd)
        except OSError:
            continue
        for name in names:
            digits = name.removeprefix(TMP_PREFIX)[:6]
            if digits.isdigit():
                highest = max(highest, int(digits))
    return f"{highest + 1:06d}"


def write_entry(root: Path, entry: Entry, blobs: dict[str, bytes], step: Any) -> None:
    """Durably store ``entry`` (signed) and its blobs, then rename it into the journal.

    Everything is created relative to held descriptors of ``.redline/journal`` and the
    entry folder; files are ``0600``, folders ``0700``. The JSON is ASCII: a file name
    that is not UTF-8 is kept as ``\\udcXX`` escapes (see docs/safety.md).
    """
    payload = json.dumps(entry.to_dict(), indent=1, ensure_ascii=True).encode("ascii")
    tag = auth.sign(root, _signed(entry.id, payload), purpose="journal").encode("ascii")
    tmp = f"{TMP_PREFIX}{entry.id}"
    with state_dir_fd(root, JOURNAL_DIR_NAME) as jfd:
        os.mkdir(tmp, 0o700, dir_fd=jfd)
        try:
            tfd = os.open(tmp, _DIR_FLAGS, dir_fd=jfd)
            try:
                os.mkdir(BLOBS_DIR, 0o700, dir_fd=tfd)
                bfd = os.open(BLOBS_DIR, _DIR_FLAGS, dir_fd=tfd)
                try:
                    for sha, data in blobs.items():
                        fsutil.write_new_file_at(bfd, sha, data, 0o600)
                        step(f"journal: saved old contents {sha[:12]}")
                    fsutil.write_new_file_at(tfd, ENTRY_FILE, payload, 0o600)
                    fsutil.write_new_file_at(tfd, TAG_FILE, tag, 0o600)
                    fsutil.fsync_fd(bfd)
                    fsutil.fsync_fd(tfd)
                finally:
                    os.close(bfd)
            finally:
                os.close(tfd)
            step("journal: entry written")
            os.rename(tmp, entry.id, src_dir_fd=jfd, dst_dir_fd=jfd)
        except Exception:
            # Never leave a half-written entry behind (a simulated crash is no Exception).
            with contextlib.suppress(OSError):
                shutil.rmtree(tmp, dir_fd=jfd)
            raise
        fsutil.fsync_fd(jfd)
    entry.folder = journal_dir(root) / entry.id
    entry.root = root
    step("journal: entry in place")


def mark_done(entry: Entry) -> None:
    """The commit point: from here on the transaction counts as applied."""
    assert entry.folder is not None and entry.root is not None
    stamp = datetime.now(UTC).isoformat().encode("ascii")
    with state_dir_fd(entry.root, JOURNAL_DIR_NAME, create=False) as jfd:
        efd = _open_entry(jfd, entry.folder.name)
        try:
            fsutil.write_new_file_at(efd, DONE_FILE, stamp, 0o600)
            fsutil.fsync_fd(efd)
        finally:
            os.close(efd)
    entry.complete = True


def remove_entry(root: Path, name: str) -> None:
    """Delete the journal item ``name`` (never following a symlink out of the journal)."""
    with state_dir_fd(root, JOURNAL_DIR_NAME, create=False) as jfd:
        try:
            st = os.stat(name, dir_fd=jfd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, dir_fd=jfd, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=jfd)
        fsutil.fsync_fd(jfd)


def move_aside(root: Path, folder: Path | str, why: str) -> Path:
    """Keep a damaged, conflicting or foreign entry out of the journal without deleting it."""
    name = folder.name if isinstance(folder, Path) else folder
    base = f"{name.removeprefix(TMP_PREFIX)}-{why}"
    with (
        state_dir_fd(root, JOURNAL_DIR_NAME, create=False) as jfd,
        state_dir_fd(root, ASIDE_DIR_NAME) as afd,
    ):
        target = base
        n = 1
        while True:
            try:
                os.stat(target, dir_fd=afd, follow_symlinks=False)
            except FileNotFoundError:
                break
            n += 1
            target = f"{base}-{n}"
        os.rename(name, target, src_dir_fd=jfd, dst_dir_fd=afd)
        fsutil.fsync_fd(jfd)
        fsutil.fsync_fd(afd)
    return aside_dir(root) / target


def aside_names(root: Path) -> list[str]:
    """Every name in ``.redline/journal-aside/``, sorted."""
    try:
        with state_dir_fd(root, ASIDE_DIR_NAME, create=False) as fd:
            return sorted(os.listdir(fd))
    except FileNotFoundError:
        return []


def remove_aside(root: Path, name: str) -> None:
    """Delete ``.redline/journal-aside/<name>`` (never following a symlink)."""
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"not an entry name: {name!r}")
    with state_dir_fd(root, ASIDE_DIR_NAME, create=False) as fd:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, dir_fd=fd)
        else:
            os.unlink(name, dir_fd=fd)
        fsutil.fsync_fd(fd)


def matches(current: fsutil.Current, state: FileState | None) -> bool:
    if state is None:
        return not current.exists
    return current.kind == "file" and current.sha256 == state.sha256


@dataclass
class RollbackResult:
    restored: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)


def _restore(dirs: DirFds, entry: Entry, op: PathOp, current: fsutil.Current) -> None:
    if op.before is None:
        dir_fd, name = dirs.parent(op.path)
        os.unlink(name, dir_fd=dir_fd)
        fsutil.fsync_fd(dir_fd)
        return
    data = read_blob(entry, op.before.sha256)
    if sha256_bytes(data) != op.before.sha256:
        raise CorruptEntry("its saved old contents are damaged")
    dir_fd, name = dirs.parent(op.path, create=True)
    temp = fsutil.temp_name(name, f"{entry.id}-restore")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp, dir_fd=dir_fd)
    mode = fsutil.safe_mode(op.before.mode, current.mode if current.kind == "file" else None)
    fsutil.write_new_file_at(dir_fd, temp, data, mode)
    os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    fsutil.fsync_fd(dir_fd)


def roll_back(root: Path, entry: Entry) -> RollbackResult:
    """Bring every path of an unfinished entry back to its old state.

    A path that already has its old state is left as it is; a path that matches neither
    its old nor its new state was changed by someone else and is left alone (reported).
    Safe to run again after an interruption: it only compares and restores whole files.
    Every path is confined to the workspace and reached through folder descriptors.
    """
    result = RollbackResult()
    with DirFds(root) as dirs:
        for op in entry.ops:
            try:
                paths.resolve_inside(root, op.path)
            except paths.ConfinementError as exc:
                result.conflicts.append((op.path, f"not restored: {exc}"))
                continue
            current = fsutil.read_current_at(dirs, op.path)
            if matches(current, op.before):
                continue
            if not matches(current, op.after):
                result.conflicts.append((op.path, f"changed after the interrupted {entry.kind}"))
                continue
            try:
                _restore(dirs, entry, op, current)
            except OSError as exc:
                result.failures.append((op.path, fsutil.os_error_text(exc)))
                continue
            except (CorruptEntry, paths.ConfinementError) as exc:
                result.failures.append((op.path, str(exc)))
                continue
            result.restored.append(op.path)
        for step in entry.steps:
            if step.do == "write":
                _remove_temp(root, dirs, step.path, entry.id)
        remove_created_dirs(root, dirs, entry.created_dirs)
    return result


def remove_created_dirs(root: Path, dirs: DirFds, created: list[str]) -> None:
    """Remove folders a transaction created, innermost first, if they are empty."""
    for rel in reversed(created):
        # Not empty (someone put a file there), already gone, or unsafe: keep it.
        try:
            paths.resolve_inside(root, rel)
            dir_fd, name = dirs.parent(rel)
            os.rmdir(name, dir_fd=dir_fd)
        except (OSError, paths.ConfinementError):
            continue
        dirs.forget(rel)


def _remove_temp(root: Path, dirs: DirFds, rel: str, entry_id: str) -> None:
    """Remove the temp file of a write step: only the name redline gives it, only a file."""
    try:
        paths.resolve_inside(root, rel)
        dir_fd, name = dirs.parent(rel)
        temp = fsutil.temp_name(name, entry_id)
        if stat.S_ISREG(os.stat(temp, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            os.unlink(temp, dir_fd=dir_fd)
    except (OSError, paths.ConfinementError):
        pass


def iter_entries(root: Path) -> Iterator[tuple[Path, Entry | CorruptEntry]]:
    """Every entry folder with its loaded entry, or the reason it cannot be used."""
    folder = journal_dir(root)
    names = [n for n in journal_names(root) if not n.startswith(TMP_PREFIX)]
    if not names:
        return
    with state_dir_fd(root, JOURNAL_DIR_NAME, create=False) as jfd:
        for name in names:
            try:
                yield folder / name, _load_at(root, jfd, name)
            except CorruptEntry as exc:
                yield folder / name, exc
