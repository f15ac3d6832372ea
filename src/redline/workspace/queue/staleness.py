"""A cheap staleness check for listings: compare base hashes with the disk.

Only hashes are compared, so no stored contents are read; the full check (confinement,
encodings, permissions) happens again when an action is applied.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from stat import S_ISREG
from typing import Any

from redline.workspace import fsutil, paths
from redline.workspace.queue.hashes import FileHashes
from redline.workspace.queue.index import identity


def _folder(root: Path, parent: str, cache: dict[str, str | None]) -> str | None:
    """``parent`` resolved inside the workspace (None when refused), once per listing."""
    key = "\0" + parent  # no path holds a NUL byte: never a file's key
    if key not in cache:
        try:
            cache[key] = str(paths.resolve_inside(root, parent))
        except paths.ConfinementError:
            cache[key] = None
    return cache[key]


#: One file a listing compares with the disk: ``(rel, parent, name, expect)``. ``parent`` and
#: ``name`` are ``rel`` split as :func:`_target` uses it (``parent`` None: a name that goes
#: through the full confinement check each time); ``expect`` is the preview's sha256 of the
#: file (:data:`NO_SHA` when the preview has none: never fresh), or None when the file
#: must not exist.
Check = tuple[str, str | None, str, str | None]
NO_SHA = "?"  # neither a sha256 nor "" (what a file that is not a regular one hashes as)


def _split(rel: str) -> tuple[str | None, str]:
    """``rel``'s folder and name as :func:`_target` looks them up (a pure function of
    ``rel``, so a listing memo may keep it); folder None: check the whole path each time."""
    try:
        normalized = paths.normalize_relative(rel)
    except paths.ConfinementError:
        return None, rel
    parent, _, name = normalized.rpartition("/")
    if (
        rel.startswith("/")
        or "\0" in rel
        or name in ("", ".", "..")
        or paths.is_ignored_dir_name(name)
    ):
        return None, rel
    return parent or ".", name


def _target(
    root: Path, rel: str, cache: dict[str, str | None], split: tuple[str | None, str] | None = None
) -> Path | str:
    """Where ``rel`` is; ConfinementError when redline may not look there.

    The folder is confined once per listing (10,000 files in one folder cost one
    confinement check, not 10,000); the name itself goes through the full check whenever it
    could be special. A name that is a symbolic link, a folder or anything else but a
    regular file is never followed or hashed by :func:`fsutil.read_current`, so it reads as
    changed exactly as a refused path does. ``split``: :func:`_split` of ``rel``, if known.
    """
    parent, name = split if split is not None else _split(rel)
    if parent is None:
        return paths.resolve_inside(root, rel)
    folder = _folder(root, parent, cache)
    if folder is None:
        raise paths.ConfinementError(f"{rel}: refused")
    return f"{folder}/{name}" if folder != "/" else f"/{name}"


def _sha(
    root: Path,
    rel: str,
    cache: dict[str, str | None],
    hashes: FileHashes | None = None,
    split: tuple[str | None, str] | None = None,
) -> str | None:
    """The file's sha256, "" for something that is not a regular file, None if missing.

    With ``hashes``, a regular file whose identity is remembered there is not read."""
    if rel in cache:
        return cache[rel]
    try:
        target = _target(root, rel, cache, split)
    except paths.ConfinementError:
        cache[rel] = ""
        return ""
    before = None
    if hashes is not None:
        try:
            before = os.stat(target, follow_symlinks=False)
        except OSError:
            before = None
        key = identity(before) if before is not None else None
        known = hashes.get(rel, key) if key is not None else None
        if known is not None:
            cache[rel] = known
            return known
    current = fsutil.read_current(target)
    if hashes is not None and before is not None and current.kind == "file" and current.sha256:
        with contextlib.suppress(OSError):
            hashes.put(rel, before, os.stat(target, follow_symlinks=False), current.sha256)
    value: str | None
    if current.kind == "missing":
        value = None
    elif current.kind == "file":
        value = current.sha256 or ""
    else:
        value = ""
    cache[rel] = value
    return value


def checks(preview: Any) -> list[Check]:
    """What :func:`run_checks` compares for ``preview`` (a Preview's dict), in order."""
    if not isinstance(preview, dict):
        return []
    found: list[Check] = []
    for change in preview.get("changes", []):
        if not isinstance(change, dict):
            continue
        kind = change.get("kind")
        if kind in ("modify", "delete", "rename"):
            rel = str(change.get("old_path" if kind == "rename" else "path", ""))
            expect = change.get("old_sha256")
            found.append((rel, *_split(rel), expect if isinstance(expect, str) else NO_SHA))
        if kind in ("create", "rename"):
            rel = str(change.get("new_path" if kind == "rename" else "path", ""))
            found.append((rel, *_split(rel), None))
    return found


def run_checks(
    root: Path,
    found: Iterable[Check],
    cache: dict[str, str | None],
    hashes: FileHashes | None = None,
) -> list[str]:
    """``"path (cause)"`` for each of :func:`checks` the disk no longer fits; [] when fresh."""
    reasons: list[str] = []
    for rel, parent, name, expect in found:
        sha = cache[rel] if rel in cache else _sha(root, rel, cache, hashes, (parent, name))
        if sha == expect:
            continue  # (expect None: the file must not exist, and it does not)
        if expect is None:
            reasons.append(f"{rel} (already exists)")
        elif sha is None:
            reasons.append(f"{rel} (deleted since the preview)")
        else:
            reasons.append(f"{rel} (modified since the preview)")
    return reasons


def run_many(root: Path, each: Iterable[Sequence[Check]], hashes: FileHashes) -> list[list[str]]:
    """:func:`run_checks` of each of many actions' checks (a listing's), with one cache.

    The usual file -- a regular file in a folder already confined, whose identity the hash
    memo holds -- is looked up here at once (10,000 actions: a call less per step counts,
    issue 44); any other goes through :func:`_sha` exactly as :func:`run_checks` does, and
    an action that is not fresh gets its reasons from :func:`run_checks`."""
    hashes.load()
    known, used = hashes.known, hashes.used
    cache: dict[str, str | None] = {}
    prefixes: dict[str, str | None] = {}  # folder -> "its resolved path/" (None: refused)
    stat, regular = os.stat, S_ISREG
    out: list[list[str]] = []
    for found in each:
        fresh = True
        for rel, parent, name, expect in found:
            if rel in cache:
                sha = cache[rel]
            else:
                sha = _UNKNOWN
                if parent is not None:
                    prefix = prefixes.get(parent, _UNKNOWN)
                    if prefix is _UNKNOWN:
                        folder = _folder(root, parent, cache)
                        prefix = prefixes[parent] = (
                            None if folder is None else folder.rstrip("/") + "/"
                        )
                    if prefix is not None:
                        try:
                            st = stat(prefix + name, follow_symlinks=False)
                        except OSError:
                            st = None
                        if st is not None and regular(st.st_mode):
                            row = known.get(rel)
                            if (
                                type(row) is tuple
                                and len(row) == 2
                                and type(row[1]) is str
                                and row[0]
                                == (
                                    st.st_dev,
                                    st.st_ino,
                                    st.st_size,
                                    st.st_mtime_ns,
                                    st.st_ctime_ns,
                                )
                            ):
                                sha = cache[rel] = row[1]
                                used[rel] = row
                if sha is _UNKNOWN:
                    sha = _sha(root, rel, cache, hashes, (parent, name))
            if sha != expect:
                fresh = False
        out.append([] if fresh else run_checks(root, found, cache, hashes))
    return out


_UNKNOWN: Any = object()


def quick_stale(
    root: Path, preview: Any, cache: dict[str, str | None], hashes: FileHashes | None = None
) -> list[str]:
    """``"path (cause)"`` for each file that changed since the preview; [] when fresh
    (``hashes``: the queue's memo of files' hashes, see :mod:`.hashes`)."""
    return run_checks(root, checks(preview), cache, hashes)
