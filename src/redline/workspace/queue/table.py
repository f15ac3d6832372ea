"""QueueListing: what ``redline pending list`` prints, from the listing memo (:mod:`.listing`).

While ``actions/`` is as the memo's snapshot found it (:mod:`.listing`: no record file
added, removed or replaced since) a listing takes the snapshot's rows and looks at no
record file; it still reads the used-id set, the resolved log's names and (when it changed)
the journal, and compares the files with the disk. Otherwise a listing whose record files
all kept their identity since a listing built their rows reads the folder (one ``stat`` per
record), the used-id set and the memo -- neither the listing
index nor any record -- settles crash leftovers from the remembered summaries exactly as
:meth:`~.reconcile.QueueReconcile.reconcile` does, and compares each action's files with
the disk (their hashes from :mod:`.hashes` while a file keeps its identity). A few changed
record files are read on their own; many, a leftover to settle or a memo that cannot be
used take the ordinary way (the index, :meth:`~.base.QueueBase._load`), which also
remembers the rows for the next listing.
"""

from __future__ import annotations

import builtins
import functools
import os
import time
from typing import TYPE_CHECKING, TypeAlias

from redline.workspace.queue.base import ACTIONS, REQUESTS, RESOLVED, record_name
from redline.workspace.queue.index import (
    PERSIST_AFTER,
    Entry,
    RecordSummary,
    collector_paused,
    identity,
)
from redline.workspace.queue.procs import is_alive
from redline.workspace.queue.reconcile import QueueReconcile
from redline.workspace.queue.records import QueueRecordError, ReplayedRecord, id_number

if TYPE_CHECKING:
    # Loaded by the first listing, not by a queue that only pushes (a hook's queueing path).
    from redline.workspace.queue.listing import Listed, ListingMemo, Row

#: One action of a listing: its listing order (position, id number), summary and row.
Found: TypeAlias = "tuple[tuple[int, int], RecordSummary, Row]"


class QueueListing(QueueReconcile):
    """:meth:`listing`, the text listing's rows (see the module doc)."""

    def listing(self) -> builtins.list[Listed]:
        """What ``redline pending list`` prints of every pending action, top first, with
        each one's staleness found now; unusable records go to :attr:`problems`.

        Cheaper than :meth:`list` on a long queue (see the module doc): an unchanged record
        file is neither read nor parsed, from its file or from the index."""
        from redline.workspace.queue.listing import snapshot

        with collector_paused():
            loaded = None
            settle = not self._reconciled
            if settle:
                self._reconciled = True
                # Not the contents store's (10,000 blobs to list): the next decision or
                # push of any redline sweeps it.
                self._sweep_temporaries(("", ACTIONS, RESOLVED, REQUESTS))
            rows = self._from_folder(settle)
            if rows is not None:
                return self._checked(rows)
            # Before any name of the folder is read (see listing.snapshot).
            folder, now = os.fstat(self._fd(ACTIONS)), time.time_ns()
            found = self._from_memo()
            messages: builtins.list[str] = []
            if settle:
                if found is None:
                    messages = self._reconcile(full=False)
                    loaded, self._loaded = self._loaded, None
                    if messages:  # records were settled: what reconcile read is old
                        loaded = None
                else:
                    messages = self._settle([summary for _o, summary, _r in found])
                    if messages:  # records were settled: read them as they are now
                        found = None
                self.messages.extend(messages)
            if found is None:
                found = self._from_index(loaded)
            if settle and not messages and not self.problems:
                # Only a listing that found nothing to settle and no unusable record.
                self._listing_memo().new_folder = snapshot(
                    folder, now, [(summary, row) for _order, summary, row in found]
                )
            return self._checked([row for _order, _summary, row in found])

    def _from_folder(self, settle: bool) -> builtins.list[Row] | None:
        """Every row, top first, from the memo's snapshot of ``actions/`` when the folder
        is as that snapshot found it (no record file added, removed or replaced: not one
        record file is looked at, see ``workspace/queue/listing``); None otherwise, or when
        an id left the queue or (``settle``) a record is a crash leftover."""
        from redline.workspace.queue.listing import FIELDS, Row, stamp

        with self._index_lock:
            memo = self._listing_memo()
            memo.load()
            folder = memo.folder
            if folder is None:
                return None
            try:
                seen, names, numbers, oldest, rows = folder
                if (
                    # changed, or an id left the queue (a leftover to remove)
                    stamp(os.fstat(self._fd(ACTIONS))) != seen
                    or self._used().meets(numbers)
                    or (settle and self._leftovers_in(names, oldest))
                    # Signed by this user's key in this format: the shapes are the ones
                    # save() wrote (one of another size, and the listing reads the folder).
                    or len(rows) != len(names)
                    or any(n != FIELDS for n in set(map(len, rows)))
                ):
                    rows = None
            except (TypeError, ValueError, KeyError, IndexError):
                rows = None
            if rows is None:
                memo.folder = None  # replaced by the snapshot this listing finds, if any
                return None
            return builtins.list(map(functools.partial(tuple.__new__, Row), rows))

    def _leftovers_in(self, names: tuple[str, ...], oldest: float) -> bool:
        """Whether any of the record files ``names`` (unchanged since a listing found none
        to settle: neither a state but pending nor a replacement of another) has been
        resolved or applied since: the checks of :meth:`_settle` that depend on other files."""
        if not names:
            return False  # (as _settle: an empty queue has nothing to settle)
        if not set(os.listdir(self._fd(RESOLVED))).isdisjoint(names):
            return True
        applied = self._journal_applies(oldest)
        return bool(applied) and not {record_name(i) for i in applied}.isdisjoint(names)

    def _from_memo(self) -> builtins.list[Found] | None:
        """Every record's summary and row from the memo, a few changed files read on their
        own; None when that would not be cheap or a record is a leftover to remove."""
        from redline.workspace.queue.listing import row_of

        with self._index_lock:
            memo = self._listing_memo()
            memo.load()
            known = memo.known
            used = self._used()
            found: builtins.list[Found] = []
            missing: builtins.list[str] = []
            problems: builtins.list[QueueRecordError] = []
            with os.scandir(self._fd(ACTIONS)) as names:
                for item in names:
                    name = item.name
                    remembered = known.get(name)
                    if remembered is None:
                        if name.endswith(".json") and id_number(name[:-5]) is not None:
                            missing.append(name)
                        continue
                    try:
                        key = identity(item.stat(follow_symlinks=False))
                    except OSError:
                        key = None
                    taken = None
                    if key is not None and type(remembered) is tuple and remembered[0] == key:
                        taken = memo.take(name, remembered)
                    if taken is None:
                        missing.append(name)
                        continue
                    summary, row = taken
                    number = id_number(summary.id) or 0
                    if number in used:
                        return None  # a leftover: reconcile removes it
                    found.append(((summary.position, number), summary, row))
                    if len(missing) > PERSIST_AFTER:
                        return None
            if len(missing) > PERSIST_AFTER:
                return None
            for name in missing:
                action_id = name[:-5]
                try:
                    record, st = self._read_entry(action_id, used)
                except QueueRecordError as exc:
                    if isinstance(exc, ReplayedRecord):
                        return None  # a leftover: reconcile removes it
                    problems.append(exc)
                    continue
                key = identity(st) if st is not None else None
                if record is None or key is None:
                    continue
                summary, row = RecordSummary.of(record), row_of(record)
                memo.put(name, key, summary, row)
                found.append(((summary.position, id_number(action_id) or 0), summary, row))
            found.sort(key=lambda item: item[0], reverse=True)
        problems.sort(key=lambda e: id_number(e.action_id) or 0)
        self.problems = problems
        return found

    def _from_index(
        self, loaded: tuple[builtins.list[Entry], builtins.list[QueueRecordError]] | None
    ) -> builtins.list[Found]:
        """Every record's summary and row by way of the index (rows built where the memo
        has none); ``loaded``: what reconcile has just read, if nothing was settled."""
        entries, problems = loaded if loaded is not None else self._load(full=False)
        self.problems = problems
        with self._index_lock:
            memo = self._listing_memo()
            rows = [memo.get(record_name(entry.summary.id), entry.key) for entry in entries]
            missing = [i for i, row in enumerate(rows) if row is None]
            if len(missing) > PERSIST_AFTER:
                self._record_index().fill_records()  # one parse instead of many files read
            found: builtins.list[Found] = []
            for entry, row in zip(entries, rows, strict=True):
                if row is None:
                    row = self._build_row(entry, memo)
                if row is not None:
                    found.append((entry.order, entry.summary, row))
        return found

    def _build_row(self, entry: Entry, memo: ListingMemo) -> Row | None:
        """The row of ``entry``'s record: from the index's record, else read from its file
        (None when it went meanwhile; a record now unusable goes to :attr:`problems`)."""
        from redline.workspace.queue.listing import row_of

        action_id = entry.summary.id
        record, key = entry.record, entry.key
        if record is None:
            try:
                record, st = self._read_entry(action_id)
            except QueueRecordError as exc:
                self.problems.append(exc)
                return None
            if record is None or st is None:
                return None
            key = identity(st) or key
        row = row_of(record)
        memo.put(record_name(action_id), key, RecordSummary.of(record), row)
        return row

    def _checked(self, rows: builtins.list[Row]) -> builtins.list[Listed]:
        """Each row with its staleness and orphan state found now; the memos saved."""
        from redline.workspace.queue.listing import Listed
        from redline.workspace.queue.staleness import run_many

        with self._index_lock:
            hashes = self._file_hashes()
            reasons = run_many(self.root, [row[7] for row in rows], hashes)
            orphaned = [row[8] is not None and not is_alive(*row[8]) for row in rows]
            # (tuple.__new__: a NamedTuple's own constructor is Python, 10,000 calls)
            listed = builtins.list(
                map(
                    functools.partial(tuple.__new__, Listed),
                    zip(rows, reasons, orphaned, strict=True),
                )
            )
            hashes.save()
            self._listing_memo().save()
        return listed
