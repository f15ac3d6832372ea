"""The listing memo: each record's row of ``redline pending list``, kept by the file's identity.

With the listing index (:mod:`.index`) a record file that did not change is not read again,
but a text listing still rebuilt every record from the index's full records -- parsing
everything a record holds (its whole Preview) to print five cells (issue 44). This memo
keeps, for each record file, exactly what the table prints of it and what the staleness
check compares (:func:`.staleness.checks`), keyed by the record file's identity like the
index: a listing of unchanged records reads one small file, and builds a row from the
record only for a file that changed.

* **What a row holds** is a pure function of the record (:func:`row_of`), beside the
  record's summary (:class:`.index.RecordSummary`: what settling crash leftovers needs, so
  a listing of unchanged records needs neither the index nor the records); what can change
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
* **The folder's snapshot** (format 2): a listing that found every record file of
  ``actions/`` with its row, nothing to settle and no unusable record also keeps the
  folder's stamp (``st_dev, st_ino, st_mtime_ns, st_ctime_ns``, stat'ed *before* its names
  were read) with the rows top first. While the folder has that stamp a listing takes the
  rows as they are -- no name of the folder read, no record file stat'ed (10,000 ``stat``
  calls, issue 44). Why that is exact: redline never writes a record file in place; every
  push, replacement, update, state change and removal creates a temporary file in
  ``actions/`` and renames it over the record or unlinks it (:func:`.storage.write_atomic`),
  and each of those changes the folder's modification and change times, which nobody can
  set back (the change time). A change in the same clock tick as the stamp could keep it,
  so a stamp is kept only once it is :data:`.index.SETTLE_NS` older than that ``stat``.
  What can change without the folder changing is checked at every listing as before: the
  used-id set (an id that left the queue while its record stayed: a crash leftover, read
  the ordinary way), the resolved log and the journal (:meth:`~.reconcile.QueueReconcile._settle`'s
  checks that look beyond the record), the files' hashes and the owners' processes. A
  record file changed in place by something other than redline (an ``echo >>`` by hand)
  keeps the folder's stamp: the listing goes on showing the row it had until the folder
  changes; such a record no longer verifies, and every decision reads and verifies the
  record itself under its claim, so nothing but what was signed is ever applied.
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

from redline.workspace.queue import index, memo
from redline.workspace.queue.index import Identity, RecordSummary, settled
from redline.workspace.queue.records import QueueRecord, id_number
from redline.workspace.queue.staleness import Check, checks

LISTING = "listing"
LISTING_FORMAT = 2  # name -> (identity, RecordSummary tuple, Row tuple); "" -> Folder
PURPOSE = "queue-listing"
MAX_LISTING_BYTES = 128 * 1024 * 1024
# The memo is rewritten after a listing that had to build this many rows.
PERSIST_AFTER = index.PERSIST_AFTER
FOLDER = ""  # the key of the folder's snapshot (no record file has an empty name)

Stamp = tuple[int, int, int, int]  # st_dev, st_ino, st_mtime_ns, st_ctime_ns
#: ``actions/`` as a listing found it, every record in it remembered (see the module doc):
#: (the folder's stamp, the record files' names top first, their id numbers ascending,
#: the oldest record's ``created_at``); saved with the rows, top first, as a fifth item
#: (the same tuples as the rows by name: marshal writes each once).
Folder = tuple[Stamp, tuple[str, ...], tuple[int, ...], float]


def stamp(st: os.stat_result) -> Stamp:
    """What changes whenever a name in a folder is added, removed or replaced."""
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


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
    from redline.workspace.details import agent_ended, details_from_json
    from redline.workspace.preview import via_lines

    notes: list[str] = []
    ended = agent_ended(details_from_json(record.kind, record.details))
    if ended:
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


def snapshot(
    st: os.stat_result, now_ns: int, found: list[tuple[RecordSummary, Row]]
) -> Folder | None:
    """The snapshot of ``actions/`` holding ``found``, every record in it top first (``st``:
    the folder's stat, taken at ``now_ns`` before its names were read); None when it may
    not be kept: the folder changed too recently for its stamp to prove anything (see the
    module doc), or a record is one :meth:`~.reconcile.QueueReconcile._settle` would look
    at for what it holds itself (a state but pending, a replacement of a listed record)."""
    if max(st.st_mtime_ns, st.st_ctime_ns) >= now_ns - index.SETTLE_NS:
        return None
    ids = {summary.id for summary, _row in found}
    numbers: list[int] = []
    for summary, _row in found:
        if summary.state != "pending" or (summary.replaces is not None and summary.replaces in ids):
            return None
        number = id_number(summary.id)
        if number is None:
            return None
        numbers.append(number)
    names = tuple(f"{summary.id}.json" for summary, _row in found)
    oldest = min((summary.created_at for summary, _row in found), default=0.0)
    return (stamp(st), names, tuple(sorted(numbers)), float(oldest))


class ListingMemo:
    """The memo of one queue (see the module doc). The queue holds a lock around each use."""

    def __init__(self, root_fd: int, key: bytes, keys: tuple[bytes, ...]) -> None:
        self.root_fd = root_fd
        self.key = key
        self.keys = keys
        # name -> (identity, summary, row) as read; the shape is checked when used
        self.known: dict[str, Any] = {}
        # looked up or built since the last save
        self.used: dict[str, tuple[Identity, RecordSummary, Row]] = {}
        self.loaded = False
        self.unsaved = 0
        self.folder: Any = None  # the folder's snapshot as read (a Folder; checked when used)
        self.new_folder: Folder | None = None  # found by this listing, saved with the rows

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        data = memo.read(
            self.root_fd, LISTING, LISTING_FORMAT, PURPOSE, self.keys, MAX_LISTING_BYTES
        )
        if data is not None:
            self.folder = data.pop(FOLDER, None)
            self.known = data

    def take(self, name: str, found: Any) -> tuple[RecordSummary, Row] | None:
        """``found`` (what :attr:`known` holds for ``name``, its identity already compared
        with the file's) as a summary and a row; None if it is of another shape."""
        if type(found) is not tuple or len(found) != 3:
            return None
        summary, row = _summary(found[1]), _row(found[2])
        if summary is None or row is None:
            return None
        self.used[name] = (found[0], summary, row)
        return summary, row

    def get(self, name: str, key: Identity) -> Row | None:
        """The remembered row of record file ``name`` if the file still has identity ``key``."""
        self.load()
        found = self.known.get(name)
        if type(found) is not tuple or not found or found[0] != key:
            return None
        taken = self.take(name, found)
        return taken[1] if taken is not None else None

    def put(self, name: str, key: Identity, summary: RecordSummary, row: Row) -> None:
        """Remember ``row`` for record file ``name`` of identity ``key`` (once it settled)."""
        if settled(key, time.time_ns()):
            self.used[name] = (key, summary, row)
            self.unsaved += 1

    def save(self) -> None:
        """Write the rows used since the last save, if enough were built or the folder's
        snapshot is new (kept only when every record it names has its row); never raises."""
        used, self.used = self.used, {}
        folder, self.new_folder = self.new_folder, None
        if folder is not None and not all(name in used for name in folder[1]):
            folder = None
        old = self.folder
        same = type(old) is tuple and len(old) == 5 and old[:4] == folder
        if self.unsaved < PERSIST_AFTER and (folder is None or same):
            return
        known = {name: (key, tuple(s), tuple(r)) for name, (key, s, r) in used.items()}
        data: dict[str, Any] = dict(known)
        if folder is not None:
            data[FOLDER] = (*folder, tuple(known[name][2] for name in folder[1]))
        if not memo.write(
            self.root_fd, LISTING, LISTING_FORMAT, PURPOSE, self.key, MAX_LISTING_BYTES, data
        ):
            return
        self.known = known
        self.folder = data.get(FOLDER)
        self.unsaved = 0


FIELDS = len(Row._fields)


def _summary(raw: Any) -> RecordSummary | None:
    if type(raw) is not tuple or len(raw) != len(RecordSummary._fields):
        return None
    summary = RecordSummary._make(raw)
    if (
        type(summary.id) is not str
        or type(summary.position) is not int
        or type(summary.created_at) not in (int, float)
        or type(summary.files) is not tuple
    ):
        return None  # (state and replaces are only compared: another type never matches)
    return summary


def _row(raw: Any) -> Row | None:
    """A row as :meth:`ListingMemo.save` wrote it (None for anything of another shape)."""
    if type(raw) is not tuple or len(raw) != FIELDS:
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
