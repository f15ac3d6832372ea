"""Workspace files' hashes for the listing's staleness check, kept by the file's identity.

``redline pending list`` says which actions are stale by hashing every file the queue
touches and comparing with each Preview's base hash; with 10,000 actions on 10,000 files
that read and hash was a third of the listing. This memo remembers, per workspace path,
the file's identity (``st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns``, the same as
the listing index's, see :mod:`.index`) and its sha256: a file whose identity is unchanged
is not read again. A hash is remembered only when the file's identity was the same before
and after the read and the file was already :data:`~.index.SETTLE_NS` old (a later write
in the same clock tick would otherwise keep its identity); a write changes the change
time, which nobody can set. It is a cache for a listing only: applying an action hashes
the file again under its claim.

On disk it is ``.redline/queue/hashes``, signed with the workspace key (purpose
``queue-file-hashes``) like the index; one that does not verify or is damaged is ignored.
Each listing keeps only the paths it looked up. Format 2 (issue 44): a JSON header line,
then the memo as :mod:`marshal` data (a tenth of the JSON's decoding time), given to
:func:`marshal.loads` only once its tag verified and only when the header names this
Python's marshal (:data:`.index.CODEC`); each row is checked when it is looked up.
"""

from __future__ import annotations

import os
import time
from typing import Any

from redline.workspace.queue import memo
from redline.workspace.queue.index import PERSIST_AFTER, Identity, identity, settled

HASHES = "hashes"
HASHES_FORMAT = 2  # 1: JSON
PURPOSE = "queue-file-hashes"
MAX_HASHES_BYTES = 64 * 1024 * 1024


class FileHashes:
    """The memo of one queue (see the module doc). The queue holds a lock around each use."""

    def __init__(self, root_fd: int, key: bytes, keys: tuple[bytes, ...]) -> None:
        self.root_fd = root_fd
        self.key = key
        self.keys = keys
        self.known: dict[str, Any] = {}  # rel -> (identity, sha), or a row not yet checked
        self.used: dict[str, tuple[Identity, str]] = {}  # looked up since the last save
        self.loaded = False
        self.unsaved = 0

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        data = memo.read(self.root_fd, HASHES, HASHES_FORMAT, PURPOSE, self.keys, MAX_HASHES_BYTES)
        if data is not None:
            self.known = data

    def get(self, rel: str, key: Identity) -> str | None:
        """The remembered sha256 of ``rel`` if the file still has identity ``key``."""
        self.load()
        row = self.known.get(rel)
        if row is None:
            return None
        # (identity, sha): put() here or read (then checked now); else of another shape
        if type(row) is not tuple or len(row) != 2 or row[0] != key or type(row[1]) is not str:
            return None
        found: tuple[Identity, str] = row
        self.used[rel] = found
        return found[1]

    def put(self, rel: str, before: os.stat_result, after: os.stat_result, sha: str) -> None:
        """Remember ``sha`` for ``rel`` when the file did not change while it was read."""
        key = identity(before)
        if key is None or key != identity(after) or not settled(key, time.time_ns()):
            return
        self.known[rel] = self.used[rel] = (key, sha)
        self.unsaved += 1

    def save(self) -> None:
        """Write the paths looked up since the last save, if enough were hashed; never raises."""
        used, self.used = self.used, {}
        if self.unsaved < PERSIST_AFTER:
            return
        # rel -> (identity, sha)
        if memo.write(
            self.root_fd, HASHES, HASHES_FORMAT, PURPOSE, self.key, MAX_HASHES_BYTES, used
        ):
            self.unsaved = 0
