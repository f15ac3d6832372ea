"""The listing memo: each record's row of ``redline pending list``, kept by the file's identity.

With the listing index (:mod:`.index`) a record file that did not change is not read again,
but a text listing still rebuilt every record from the index's full records -- parsing
everything a record holds (its whole Preview) to print five cells (issue 44). This memo
keeps, for each record file, exactly what the table prints of it and what the staleness
check compares (:func:`.staleness.checks`), keyed by the record file's identity like the
index: a listing of unchanged records reads one small file, and builds a row from the
record only for a file that changed.

* **What a row holds** is a pure function of the record (:func:`row_of`); what can change
  without the record changing is worked out at every listing: whether the files still fit
  the preview (their hashes, :mod:`.hashes`; the folders' confinement once per listing)
  and whether an owner action's process still runs.
* **Trust**: ``.redline/queue/listing`` is signed with the workspace key (purpose
  ``queue-listing``); one that does not verify, is damaged, of another format or written by
  another Python (the header names its marshal, :data:`.index.CODEC`) is ignored -- the
  listing then builds every row from the records as before -- and replaced. Only bytes whose
  tag verified are given to :func:`marshal.loads`; a row of the wrong shape is not used.
* A row is remembered only once its record file is :data:`.index.SETTLE_NS` old (the
  identity rule of :mod:`.index`); the file is rewritten when a listing had to build at least
  :data:`.index.PERSIST_AFTER` rows, holding the rows that listing used.
"""

from __future__ import annotations

import hmac
import json
import marshal
import time
from typing import Any, NamedTuple

from redline.workspace.queue import index, storage
from redline.workspace.queue.index import CODEC, Identity, settled
from redline.workspace.queue.records import QueueRecord
from redline.workspace.queue.staleness import Check, checks

LISTING = "listing"
LISTING_FORMAT = 1
PURPOSE = "queue-listing"
MAX_LISTING_BYTES = 128 * 1024 * 1024
# The memo is rewritten after a listing that had to build this many rows.
PERSIST_AFTER = index.PERSIST_AFTER


class Row(NamedTuple):
    """What ``redline pending list`` prints of one record (cells already one line each)."""

    id: str
    source: str
    counts: str  # "+A -R"
    label: str
    stale: bool  # the record's own stale flag (its pusher saw the files change)
    stale_reason: str
    notes: tuple[str, ...]  # the notes after the staleness and orphan notes
    checks: tuple[Check, ...]
    owner: tuple[int, int | None] | None  # an owner action's process: (pid, start time)


class Listed(NamedTuple):
    """One row of a listing with what was found now: the staleness and the orphan state."""

    row: Row
    stale_reasons: list[str]
    orphaned: bool


def row_of(record: QueueRecord) -> Row:
    """The row of ``record`` (see :class:`Row`)."""
    from redline.termtext import one_line
    from redline.workspace.preview import via_lines

    notes: list[str] = []
    details = record.details
    ended = details.get("agent_ended") if isinstance(details, dict) else None
    if isinstance(ended, str) and ended:
        notes.append(f"its agent {ended}")
    notes.extend(line[0].lower() + line[1:] for line in via_lines(record.via))
    source = record.source
    return Row(
        one_line(record.id),
        one_line(source.canonical),  # one spelling everywhere: mcp:cursor, hook:claude
        f"+{record.added} -{record.removed}",
        one_line(record.label),
        bool(record.stale),
        record.stale_reason,
        tuple(notes),
        tuple(checks(record.preview)),
        (source.pid, source.pid_start) if record.applied_by == "owner" else None,
    )


class ListingMemo:
    """The memo of one queue (see the module doc). The queue holds a lock around each use."""

    def __init__(self, root_fd: int, key: bytes, keys: tuple[bytes, ...]) -> None:
        self.root_fd = root_fd
        self.key = key
        self.keys = keys
        self.known: dict[str, Any] = {}  # name -> (identity, row) as read; checked when used
        self.used: dict[str, tuple[Identity, Row]] = {}  # looked up or built since the save
        self.loaded = False
        self.unsaved = 0

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        try:
            raw = storage.read_file(self.root_fd, LISTING, MAX_LISTING_BYTES)
            header_raw, _, payload = raw.partition(b"\n")
            header = json.loads(header_raw)
            if (
                not isinstance(header, dict)
                or header.get("version") != LISTING_FORMAT
                or header.get("codec") != CODEC
            ):
                return
            tag = header.get("tag")
            if not isinstance(tag, str) or not any(
                hmac.compare_digest(storage.tag_for(key, payload, PURPOSE), tag)
                for key in self.keys
            ):
                return
            data = marshal.loads(payload)
        except (OSError, ValueError, UnicodeDecodeError, EOFError, TypeError):
            return
        if type(data) is dict:
            self.known = data

    def get(self, name: str, key: Identity) -> Row | None:
        """The remembered row of record file ``name`` if the file still has identity ``key``."""
        self.load()
        found = self.known.get(name)
        if type(found) is not tuple or len(found) != 2 or found[0] != key:
            return None
        row = _row(found[1])
        if row is not None:
            self.used[name] = (key, row)
        return row

    def put(self, name: str, key: Identity, row: Row) -> None:
        """Remember ``row`` for record file ``name`` of identity ``key`` (once it settled)."""
        if settled(key, time.time_ns()):
            self.used[name] = (key, row)
            self.unsaved += 1

    def save(self) -> None:
        """Write the rows used since the last save, if enough were built; never raises."""
        used, self.used = self.used, {}
        if self.unsaved < PERSIST_AFTER:
            return
        try:
            payload = marshal.dumps(
                {name: (key, tuple(row)) for name, (key, row) in used.items()}, marshal.version
            )
        except ValueError:
            return
        header = {"version": LISTING_FORMAT, "codec": CODEC}
        header["tag"] = storage.tag_for(self.key, payload, PURPOSE)
        data = json.dumps(header).encode("ascii") + b"\n" + payload
        if len(data) > MAX_LISTING_BYTES:
            return
        try:
            storage.write_atomic(self.root_fd, LISTING, data, durable=False)
        except OSError:
            return
        self.known = {name: (key, tuple(row)) for name, (key, row) in used.items()}
        self.unsaved = 0


_FIELDS = len(Row._fields)


def _row(raw: Any) -> Row | None:
    """A row as :meth:`ListingMemo.save` wrote it (None for anything of another shape)."""
    if type(raw) is not tuple or len(raw) != _FIELDS:
        return None
    row = Row(*raw)
    if not (
        type(row.id) is str
        and type(row.source) is str
        and type(row.counts) is str
        and type(row.label) is str
        and type(row.stale) is bool
        and type(row.stale_reason) is str
        and type(row.notes) is tuple
        and type(row.checks) is tuple
        and (row.owner is None or type(row.owner) is tuple)
    ):
        return None
    return row
