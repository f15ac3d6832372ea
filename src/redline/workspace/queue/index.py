"""The listing index: each record file's verified contents, kept by the file's identity.

Listing the queue used to read, verify and parse every ``actions/pa-N.json`` each time, so
with 10,000 pending actions every listing -- and every decision, which lists to settle
crash leftovers and to find the actions to re-base -- cost a second. The index remembers,
for each record file, the file's identity and what was read from it; a file whose identity
has not changed is not read again, any other file is read and verified exactly as before.

* **Identity** is ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` of the descriptor
  the record was read through (so it is the identity of exactly the bytes that were
  verified). Records are never rewritten in place (a new file is renamed over the old one),
  and a file's change time cannot be set by anyone. Time stamps are as coarse as a clock
  tick, though, so a file is remembered only once it is :data:`SETTLE_NS` old when read:
  any later file, even one that reuses the inode and has the same size, then has other
  times.
* **Trust**: in memory the index lives as long as its :class:`WorkspaceQueue`; on disk it is
  ``.redline/queue/index``, signed with the workspace key like the records themselves
  (purpose ``queue-index``). An index that does not verify, is damaged or is of another
  format is ignored (and replaced by the next listing that reads many records). It holds
  only records that verified when they were read; the used-id set is still checked on
  every listing, and a decision reads the record itself again under its claim.
* **Two parts**: the summaries (id, position, state, replacement, files) that settling
  crash leftovers and re-basing need, and the full records, parsed only when a listing
  needs them. Each part has its own tag; the summaries' tag also covers the records' tag,
  so the two parts of one file are never mixed with another file's.

* **Encoding**: a JSON header line (format, tags, the two parts' lengths), then the two
  parts as :mod:`marshal` data -- the same lists of plain values JSON would hold, built
  about twice as fast when a long queue is listed (issue 44). Only bytes whose tag
  verifies are ever given to :func:`marshal.loads` (so only what a redline of this user
  wrote), the result is checked field by field as before, and an index written by another
  Python (the header names the marshal version and Python's) is not used but replaced.

Several processes may write the index at once: each writes a complete one and renames it
into place, and whichever lands last is as good as the others (every entry carries its own
identity). Losing it costs nothing but one slower listing.
"""

from __future__ import annotations

import builtins
import contextlib
import gc
import hmac
import json
import marshal
import os
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from redline.workspace.queue import storage
from redline.workspace.queue.records import QueueRecord, Source, id_number

INDEX = "index"
INDEX_FORMAT = 2  # 1: JSON parts, one a line
# Who can read the parts: marshal's own format, and the Python that wrote them.
CODEC = [marshal.version, sys.version_info[0], sys.version_info[1]]
PURPOSE_SUMMARIES = "queue-index"
PURPOSE_RECORDS = "queue-index-records"
MAX_INDEX_BYTES = 256 * 1024 * 1024
# A record file is remembered only once it is this old (time stamps are a clock tick coarse).
SETTLE_NS = 2_000_000_000
# The index on disk is rewritten after a listing that had to read this many settled files.
PERSIST_AFTER = 64

Identity = tuple[int, int, int, int, int]


def identity(st: os.stat_result) -> Identity | None:
    """What identifies one version of a regular file (None for anything else)."""
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(key: Identity, now_ns: int) -> bool:
    """Whether a file of this identity may be remembered (see the module doc)."""
    return max(key[3], key[4]) < now_ns - SETTLE_NS


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block.

    Reading 10,000 records (and building the dashboard's copies of them) makes tens of
    thousands of objects that all stay alive; each few hundred allocations the collector
    would walk everything alive again -- a full collection over the whole queue several
    times per listing (about half of the dashboard's reading of a 10,000-action queue).
    Nothing made here is garbage, so pausing loses nothing; the collector runs as usual
    afterwards. Nested blocks keep it paused until the outermost ends."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class RecordSummary(NamedTuple):
    """What settling leftovers and re-basing need of one pending action."""

    id: str
    position: int
    created_at: float
    state: str
    replaces: str | None
    files: tuple[str, ...]

    @classmethod
    def of(cls, record: QueueRecord) -> RecordSummary:
        return cls(
            record.id,
            record.position,
            record.created_at,
            record.state,
            record.replaces,
            tuple(record.files),
        )


@dataclass
class Entry:
    """One record file as it was read: its identity, summary and (once parsed) record."""

    key: Identity
    summary: RecordSummary
    record: QueueRecord | None = None  # None until the disk index's records are parsed
    #: Listing order, top last: position, then the id's number.
    order: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        self.order = (self.summary.position, id_number(self.summary.id) or 0)


class UnusableIndex(ValueError):
    """The index file cannot be used (it is then ignored)."""


def _summary_row(name: str, entry: Entry) -> list[Any]:
    s = entry.summary
    return [name, *entry.key, s.id, s.position, s.created_at, s.state, s.replaces, list(s.files)]


def _summary_from_row(row: Any) -> tuple[str, Identity, RecordSummary]:
    if not isinstance(row, list) or len(row) != 12:
        raise UnusableIndex("a summary is not a list of 12")
    name, dev, ino, size, mtime, ctime, action_id, position, created, state, replaces, files = row
    if not (
        type(dev) is int  # exact types: as written (marshal keeps them), and bool is no int
        and type(ino) is int
        and type(size) is int
        and type(mtime) is int
        and type(ctime) is int
        and type(position) is int
        and type(name) is str
        and type(action_id) is str
        and name == action_id + ".json"
        and type(created) in (int, float)
        and type(state) is str
        and (replaces is None or type(replaces) is str)
        and type(files) is list
        and all(type(f) is str for f in files)
    ):
        raise UnusableIndex("a summary has a field of the wrong type")
    summary = RecordSummary(action_id, position, float(created), state, replaces, tuple(files))
    return name, (dev, ino, size, mtime, ctime), summary


def _record(item: Any) -> QueueRecord | None:
    """A record as :meth:`QueueRecord.to_dict` gave it to the index (None if it is not one).

    Only verified index data gets here, and the index only ever holds ``to_dict()`` of a
    record that passed :meth:`QueueRecord.from_dict` -- so the fields are rebuilt as they
    are, without ``from_dict``'s checks (a third of a 10,000-action listing).
    """
    source = item.get("source") if type(item) is dict else None
    if type(source) is not dict:
        return None
    try:
        item["source"] = Source(**source)  # the parsed part is this call's own: no copy
        return QueueRecord(**item)
    except TypeError:  # fields of another format: read the file instead
        return None


def dump_part(value: Any) -> bytes:
    """One part of the index file (ValueError for a value marshal cannot write)."""
    return marshal.dumps(value, marshal.version)


def load_part(raw: bytes) -> Any:
    """A part written by :func:`dump_part`; only ever given bytes whose tag verified."""
    try:
        return marshal.loads(raw)
    except (EOFError, TypeError) as exc:
        raise UnusableIndex("a part of the index is damaged") from exc


def split(raw: bytes) -> tuple[Any, bytes, bytes]:
    """The index file's header (parsed), summaries part and records part (raw)."""
    header_raw, newline, rest = raw.partition(b"\n")
    header = json.loads(header_raw)
    if not newline or not isinstance(header, dict) or header.get("version") != INDEX_FORMAT:
        raise UnusableIndex("not an index of this format")
    if header.get("codec") != CODEC:
        raise UnusableIndex("an index written by another Python")
    sizes = header.get("sizes")
    if (
        not isinstance(sizes, list)
        or len(sizes) != 2
        or not all(type(n) is int and n >= 0 for n in sizes)
        or sum(sizes) != len(rest)
    ):
        raise UnusableIndex("the index's parts are not of the sizes it names")
    return header, rest[: sizes[0]], rest[sizes[0] :]


def join(header: dict[str, Any], summaries: bytes, records: bytes) -> bytes:
    """The index file of these parts (``header`` gets the format, codec and sizes)."""
    header = {**header, "version": INDEX_FORMAT, "codec": CODEC}
    header["sizes"] = [len(summaries), len(records)]
    return json.dumps(header).encode("ascii") + b"\n" + summaries + records


class RecordIndex:
    """The index of one queue's ``actions/`` folder (see the module doc). Not thread-safe:
    :class:`~redline.workspace.queue.base.QueueBase` holds its lock around every use."""

    def __init__(self, root_fd: int, key: bytes, keys: tuple[bytes, ...]) -> None:
        self.root_fd = root_fd
        self.key = key  # signs
        self.keys = keys  # verify
        self.entries: dict[str, Entry] = {}
        self._by_file: dict[str, builtins.list[str]] = {}  # see naming()
        self._mapped: set[str] = set()
        self.loaded = False
        self._records_line: bytes | None = None  # the disk index's records, parsed on demand
        self._records_names: builtins.list[str] = []
        self._records_tag = ""
        self.unsaved = 0  # settled files read since the index was last loaded or saved

    def naming(self, paths: set[str]) -> set[str]:
        """Record file names whose summaries name any of ``paths``: every one of
        :attr:`entries` that does, and perhaps names no longer there (the caller keeps
        those it finds in the folder and in :attr:`entries`). A map of workspace file ->
        record files, extended by the entries not mapped yet: a record's files never change
        under its name (every rewrite of a record keeps them), so nothing is ever unmapped."""
        by_file = self._by_file
        for name in self.entries.keys() - self._mapped:
            for rel in self.entries[name].summary.files:
                by_file.setdefault(rel, []).append(name)
            self._mapped.add(name)
        found: set[str] = set()
        for rel in paths:
            found.update(by_file.get(rel, ()))
        return found

    # -- the file ------------------------------------------------------------------------
    def _tag(self, payload: bytes, purpose: str) -> str:
        return storage.tag_for(self.key, payload, purpose)

    def _verifies(self, payload: bytes, tag: Any, purpose: str) -> bool:
        return isinstance(tag, str) and any(
            hmac.compare_digest(storage.tag_for(key, payload, purpose), tag) for key in self.keys
        )

    def load(self) -> None:
        """Read the index file once (a missing or unusable one leaves the index empty)."""
        if self.loaded:
            return
        self.loaded = True
        try:
            raw = storage.read_file(self.root_fd, INDEX, MAX_INDEX_BYTES)
        except OSError:
            return
        try:
            self._parse(raw)
        except (UnusableIndex, ValueError, UnicodeDecodeError):
            self.entries = {}
            self._records_line = None
            self.unsaved = PERSIST_AFTER  # replace it at the next chance

    def _parse(self, raw: bytes) -> None:
        header, summaries, records = split(raw)
        records_tag = header.get("records_tag")
        if not isinstance(records_tag, str) or not self._verifies(
            summaries + b"\0" + records_tag.encode("ascii"),
            header.get("summaries_tag"),
            PURPOSE_SUMMARIES,
        ):
            raise UnusableIndex("the index does not carry this user's signature")
        rows = load_part(summaries)
        if type(rows) is not list:
            raise UnusableIndex("the summaries are not a list")
        names: builtins.list[str] = []
        for row in rows:
            name, key, summary = _summary_from_row(row)
            self.entries[name] = Entry(key, summary)
            names.append(name)
        self._records_line = records
        self._records_names = names
        self._records_tag = records_tag

    def fill_records(self) -> None:
        """Parse the disk index's full records (for entries that still lack them)."""
        line, self._records_line = self._records_line, None
        if line is None:
            return
        try:
            if not self._verifies(line, self._records_tag, PURPOSE_RECORDS):
                raise UnusableIndex("the records do not carry this user's signature")
            data = load_part(line)
            if type(data) is not list or len(data) != len(self._records_names):
                raise UnusableIndex("the records do not match the summaries")
        except (UnusableIndex, ValueError):
            data = None
        for index, name in enumerate(self._records_names):
            entry = self.entries.get(name)
            if entry is None or entry.record is not None:
                continue
            record = _record(data[index] if data is not None else None)
            if record is not None and RecordSummary.of(record) == entry.summary:
                entry.record = record
                continue
            del self.entries[name]  # read the file itself instead
        self._records_names = []

    def save(self) -> None:
        """Write the index (every settled entry) if enough was read since; never raises."""
        if self.unsaved < PERSIST_AFTER:
            return
        self.fill_records()
        now = time.time_ns()
        kept = [
            (n, e.record, e)
            for n, e in self.entries.items()
            if e.record is not None and settled(e.key, now)
        ]
        try:
            summaries = dump_part([_summary_row(n, e) for n, _r, e in kept])
            records = dump_part([r.to_dict() for _n, r, _e in kept])
        except ValueError:
            return
        records_tag = self._tag(records, PURPOSE_RECORDS)
        header = {
            "summaries_tag": self._tag(
                summaries + b"\0" + records_tag.encode("ascii"), PURPOSE_SUMMARIES
            ),
            "records_tag": records_tag,
        }
        data = join(header, summaries, records)
        if len(data) > MAX_INDEX_BYTES:
            return
        try:
            storage.write_atomic(self.root_fd, INDEX, data, durable=False)
        except OSError:
            return
        self.unsaved = 0
