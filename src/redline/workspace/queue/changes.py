"""QueueChanges: which record files changed since a listing, without reading them (issue 44).

A dashboard lists a queue of 10,000 and then, after each decision or each report of the
queue's watcher, needs only what changed: the records that arrived, left or were rewritten.
Every change to a record file -- a push, a rewrite (always a new file renamed into place), a
removal -- gives the name another file identity or none (see :mod:`.index` for why the
identity is the file's ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``), so the
folder's names and their ``stat`` say which records to read again; nothing is read or
verified for the others. A record read here is verified exactly as :meth:`get` does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from redline.workspace.queue.base import ACTIONS, QueueBase, check_id, record_name
from redline.workspace.queue.index import Identity, identity
from redline.workspace.queue.records import QueueRecord, id_number


class QueueChanges(QueueBase):
    """:meth:`identities`, :meth:`identities_of` and :meth:`read_identified`."""

    def identities(self) -> dict[str, Identity]:
        """Every record file's action id and the file's identity now, none of them read
        (a file that is not a regular file, or vanished meanwhile, is left out)."""
        found: dict[str, Identity] = {}
        with os.scandir(self._fd(ACTIONS)) as entries:
            for item in entries:
                name = item.name
                if name.startswith(".") or not name.endswith(".json"):
                    continue
                action_id = name[:-5]
                if id_number(action_id) is None:
                    continue
                try:
                    key = identity(item.stat(follow_symlinks=False))
                except OSError:
                    continue
                if key is not None:
                    found[action_id] = key
        return found

    def identities_of(self, records: Iterable[QueueRecord]) -> dict[str, Identity]:
        """The identity of the file each of ``records`` (as :meth:`list` returned them)
        was read from; a record the listing index does not hold as that very object is
        left out (read it again with :meth:`read_identified` to know it)."""
        found: dict[str, Identity] = {}
        with self._index_lock:
            index = self._index
            if index is None:
                return found
            entries = index.entries
            for record in records:
                entry = entries.get(record_name(record.id))
                if entry is not None and entry.record is record:
                    found[record.id] = entry.key
        return found

    def read_identified(self, action_id: str) -> tuple[QueueRecord | None, Identity | None]:
        """The pending action ``action_id`` as :meth:`get` reads it, and the identity of the
        file it was read from ((None, None): there is none). QueueRecordError if unusable."""
        record, st = self._read_entry(check_id(action_id))
        if record is None or st is None:
            return None, None
        return record, identity(st)
