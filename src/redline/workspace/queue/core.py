"""WorkspaceQueue: the durable review queue of one workspace, shared by every process.

Layout of ``.redline/queue/`` (see docs/queue.md):

* ``actions/pa-N.json``  one signed record per pending action (purpose ``queue``);
* ``contents/SHA256``    Preview texts, stored once per content;
* ``resolved/pa-N.json`` the bounded resolved log (purpose ``queue-resolved``);
* ``requests/pa-N.json`` a request to an owner process to resolve its action
  (purpose ``queue-request``);
* ``claims/pa-N.lock``   per-action ``flock``: an action is resolved at most once;
* ``next-id``            the id counter, also the id allocation lock (never the apply lock);
* ``index``, ``listing``, ``hashes``  signed memos that let a listing skip unchanged files
  (:mod:`.index`, :mod:`.listing`, :mod:`.hashes`).

Commit order of an apply (each step calls the test-only
:data:`redline.workspace.queue.claims._step_hook`):

1. claim the action (flock on its claim file; the kernel drops it if the process dies);
2. rewrite the record with ``state: "applying"``;
3. safe apply of the Preview, journalled with ``action_id`` = the action's id; the
   journal's ``done`` marker is the commit point;
4. write the resolution to the resolved log;
5. remove the record.

On open, :meth:`WorkspaceQueue.reconcile` settles whatever a crash left: a record with a
resolution is removed; a record whose complete journal entry exists is moved to the
resolved log as applied; an ``applying`` record without one goes back to pending (after
journal recovery rolled back any half-written files); a half-done replacement is finished.

:class:`WorkspaceQueue` is put together from one layer per concern, each building on the
ones before it: :mod:`~redline.workspace.queue.base` (folders, id counter, record files),
:mod:`~redline.workspace.queue.contents` (drafts and the content store),
:mod:`~redline.workspace.queue.resolved` (the resolved log and its pruning),
:mod:`~redline.workspace.queue.claims` (claims and the commit order),
:mod:`~redline.workspace.queue.owners` (owner requests) and
:mod:`~redline.workspace.queue.reconcile` (crash recovery on open); this module adds pushing,
updating, listing and watching (:mod:`~redline.workspace.queue.watcher`).
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Container, Iterable
from typing import TYPE_CHECKING

from redline.workspace.queue import storage
from redline.workspace.queue.base import ACTIONS, REQUESTS, RESOLVED, check_id, record_name
from redline.workspace.queue.claims import Claim, _step
from redline.workspace.queue.contents import ActionDraft
from redline.workspace.queue.index import (
    PERSIST_AFTER,
    Entry,
    Identity,
    RecordSummary,
    collector_paused,
    identity,
)
from redline.workspace.queue.owners import QueueOwners
from redline.workspace.queue.records import QueueError, QueueRecord, QueueRecordError, id_number
from redline.workspace.queue.table import QueueListing
from redline.workspace.queue.watcher import QueueWatcher, doorbell_name

if TYPE_CHECKING:
    from redline.jsontypes import JsonValue
    from redline.workspace.queue.staleness import Check

__all__ = [
    "ActionDraft",
    "Claim",
    "QueueWatcher",
    "RecordSummary",
    "SessionView",
    "WorkspaceQueue",
    "changed_records",
    "check_id",
]


class WorkspaceQueue(QueueOwners, QueueListing):
    """The queue of the workspace at ``root``; see the module doc for layout and commit order.

    Cheap to create; folders are opened on first use. Thread-safe for use from one process's
    threads; processes coordinate through the file system alone.
    """

    def push(self, draft: ActionDraft) -> QueueRecord:
        """Queue a new action on top; durable when this returns."""
        from redline.workspace.queue import revisions

        self._ensure_reconciled()
        revision = revisions.check_named(self, draft) if draft.revises is not None else None
        number = self._allocate()
        _step("push: id allocated")
        record = self._new_record(draft, number, number)
        _step("push: contents stored")
        revisions.link(self, draft, record, revision)
        self._write_record(record)
        _step("push: record written")
        return record

    def replace(
        self, action_id: str, draft: ActionDraft, *, resolved_by: str = "agent"
    ) -> QueueRecord:
        """Put a new action in ``action_id``'s place (same position, new id)."""
        with self.claim(action_id) as claim:
            return claim.replace(draft, resolved_by=resolved_by)

    def update(self, action_id: str, *, stale: bool, stale_reason: str = "") -> QueueRecord | None:
        """Set an action's stale flag (e.g. the pushing session saw its files change)."""
        with self.claim(action_id, wait=2.0) as claim:
            record = claim.record
            if record.stale != stale or record.stale_reason != stale_reason:
                record.stale, record.stale_reason = stale, stale_reason
                self._write_record(record)
            return record

    def update_details(self, action_id: str, details: JsonValue) -> QueueRecord | None:
        """Replace an action's ``details`` (its pusher learned more, e.g. its agent ended)."""
        try:
            storage.canonical_check(details)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the action's details are not JSON: {exc}") from None
        with self.claim(action_id, wait=2.0) as claim:
            record = claim.record
            if record.details != details:
                record.details = details
                self._write_record(record)
            return record

    # -- reading -------------------------------------------------------------------
    def list(self) -> builtins.list[QueueRecord]:
        """Every pending action, top first; unusable records go to :attr:`problems`.

        Record files that did not change since this queue (or any redline, through the
        signed listing index) read them are not read again; see :mod:`.index`. The records
        are shared with that index: read them, never change them (changes go through
        :meth:`claim`, which reads the record afresh).
        """
        loaded = None
        if not self._reconciled:
            self._ensure_reconciled(full=True)
            loaded, self._loaded = self._loaded, None  # nothing settled: no second scan
        entries, problems = loaded if loaded is not None else self._load(full=True)
        self.problems = problems
        return [entry.record for entry in entries if entry.record is not None]

    def summaries(self) -> builtins.list[RecordSummary]:
        """Every pending action's id, position, state, replacement and files, top first.

        What a decision needs of the others (which ones to re-base); cheaper than
        :meth:`list` on a long queue. Unusable records go to :attr:`problems`.
        """
        self._ensure_reconciled()
        self._loaded = None  # what a first reconcile read: only a listing takes it
        summaries, problems = self._load_summaries()
        self.problems = problems
        return summaries

    def top(self, minimum: int = 0) -> QueueRecord | None:
        """The top pending action, read and verified from its own file; the others are
        ordered by the index's summaries and not read (a dashboard's first frame, issue 44).

        None when the index knows fewer than ``minimum`` records, when many records are new
        to it, or when no pending one can be read: then :meth:`list`. Crash leftovers are
        not settled here (the listing that follows does that): a record whose id was used,
        that is not pending or that cannot be used is passed over."""
        with collector_paused(), self._index_lock:
            index = self._record_index()
            index.load()
            known = index.entries
            if len(known) < minimum:
                return None
            ranked: builtins.list[tuple[tuple[int, int], str]] = []
            new = 0
            for name in os.listdir(self._fd(ACTIONS)):
                entry = known.get(name)
                if entry is not None:
                    ranked.append((entry.order, name))
                    continue
                number = id_number(name[:-5]) if name.endswith(".json") else None
                if number is None:
                    continue
                new += 1
                if new > PERSIST_AFTER:
                    return None
                try:
                    record, _st = self._read_entry(name[:-5])
                except QueueRecordError:
                    continue
                if record is not None:
                    ranked.append(((record.position, number), name))
            ranked.sort(reverse=True)
            used = self._used()
            for _order, name in ranked[:PERSIST_AFTER]:
                try:
                    record, _st = self._read_entry(name[:-5], used)
                except QueueRecordError:
                    continue
                if record is not None and record.state == "pending":
                    return record
        return None

    def touching(self, paths: set[str]) -> builtins.list[RecordSummary]:
        """The summaries of the pending actions whose files include any of ``paths``, top
        first: the ones a decision that wrote ``paths`` re-bases.

        Does not look at every record (:meth:`summaries` does): the folder's names are
        listed, a record the index knows is found through the index's map of files to
        records (a record's files never change under its id: every rewrite keeps them), and
        only records the index does not know are read. Unusable ones are left out (each
        one found is claimed and read again before it is re-based)."""
        self._ensure_reconciled()
        self._loaded = None
        found: builtins.list[Entry] = []
        with collector_paused(), self._index_lock:
            index = self._record_index()
            index.load()
            names = set(os.listdir(self._fd(ACTIONS)))
            known = index.entries
            for name in index.naming(paths) & names:
                entry = known.get(name)
                if entry is not None:
                    found.append(entry)
            for name in names.difference(known):
                action_id = name[:-5]
                if not name.endswith(".json") or id_number(action_id) is None:
                    continue
                try:
                    record, st = self._read_entry(action_id)
                except QueueRecordError:
                    continue
                if record is not None and st is not None and paths.intersection(record.files):
                    found.append(Entry(identity(st) or (0, 0, 0, 0, 0), RecordSummary.of(record)))
        found.sort(key=lambda e: e.order, reverse=True)
        return [entry.summary for entry in found]

    def map_files(self) -> None:
        """Make the index's map of workspace files to records now (:meth:`touching` grows
        it by the records it has not mapped yet): a dashboard's first listing does, on its
        thread, so that its first decision does not map 10,000 records while a person
        waits (issue 44)."""
        with collector_paused(), self._index_lock:
            self._record_index().naming(set())

    # -- what changed since a listing (issue 44: the dashboard's re-read) ----------
    # A dashboard lists 10,000 and then, after each decision or watcher report, needs only
    # what changed. Every change to a record file -- a push, a rewrite (always a new file
    # renamed into place), a removal -- gives its name another file identity or none (see
    # .index), so the folder's names and their ``stat`` say which records to read again.
    def identities(self, known: Container[str] = ()) -> dict[str, Identity]:
        """Every record file's action id and the file's identity now, none of them read
        (a file that is not a regular file, or vanished meanwhile, is left out). ``known``:
        ids already checked to be action ids (their names are not checked again)."""
        found: dict[str, Identity] = {}
        with os.scandir(self._fd(ACTIONS)) as entries:
            for item in entries:
                name = item.name
                action_id = name[:-5]
                if action_id not in known:
                    if name.startswith(".") or not name.endswith(".json"):
                        continue
                    if id_number(action_id) is None:
                        continue
                elif not name.endswith(".json"):
                    continue
                try:
                    key = identity(item.stat(follow_symlinks=False))
                except OSError:
                    continue
                if key is not None:
                    found[action_id] = key
        return found

    def identities_named(self, action_ids: Iterable[str]) -> dict[str, Identity]:
        """The identity of the record file of each of ``action_ids`` that has one now (as
        :meth:`identities`, looking only at those: one ``stat`` each)."""
        found: dict[str, Identity] = {}
        folder = self._fd(ACTIONS)
        for action_id in action_ids:
            try:
                st = os.stat(record_name(action_id), dir_fd=folder, follow_symlinks=False)
            except OSError:
                continue
            key = identity(st)
            if key is not None:
                found[action_id] = key
        return found

    def actions_folder_stat(self) -> Identity | None:
        """The actions folder's own identity (device, inode, size, times): it changes
        whenever a name in it is made, removed or renamed, within the clock's tick (see
        :mod:`.index`); None when it cannot be read."""
        try:
            st = os.stat(self._fd(ACTIONS))
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def record_files(self) -> builtins.list[str]:
        """The names in the actions folder, nothing looked up (one ``listdir``): records'
        ``pa-N.json`` and whatever else is there (a temporary ``.name``)."""
        return os.listdir(self._fd(ACTIONS))

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

    def stale_reasons(
        self, record: QueueRecord, cache: dict[str, str | None] | None = None
    ) -> builtins.list[str]:
        """Why the record's Preview no longer fits the files ([] when fresh); no blob reads.

        A file whose identity is unchanged since a listing hashed it is not read again
        (:mod:`.hashes`); :meth:`remember_hashes` keeps what was hashed for the next one.
        What to compare is worked out once per record object listed (a record the queue
        shares with its index: from its row in the listing memo when that was built from the
        same file, see :mod:`.listing`)."""
        with self._index_lock:
            from redline.workspace.queue.staleness import run_checks

            hashes = self._file_hashes()
            return run_checks(
                self.root, self._checks(record), cache if cache is not None else {}, hashes
            )

    def _checks(self, record: QueueRecord) -> builtins.list[Check]:
        known = self._checks_of.get(record.id)
        if known is not None and known[0] is record:
            return known[1]
        found = None
        index = self._index
        name = record_name(record.id)
        entry = index.entries.get(name) if index is not None else None
        if entry is not None and entry.record is record:
            # The row was built from the file of this identity: the file this record is.
            row = self._listing_memo().get(name, entry.key)
            if row is not None:
                found = builtins.list(row.checks)
        if found is None:
            from redline.workspace.queue.staleness import checks

            found = checks(record.preview)
        if len(self._checks_of) > 2 * len(index.entries if index is not None else ()) + 64:
            self._checks_of.clear()  # records that left the queue
        self._checks_of[record.id] = (record, found)
        return found

    def remember_hashes(self) -> None:
        """Keep the files' hashes looked up by :meth:`stale_reasons` for the next listing
        (written when enough were read; never raises)."""
        with self._index_lock:
            if self._hashes is not None:
                self._hashes.save()

    def session_view(self, session_id: str) -> SessionView:
        return SessionView(self, session_id)

    # -- watching ------------------------------------------------------------------
    def watch(
        self,
        callback: Callable[[], None],
        *,
        on_paths: Callable[[frozenset[str] | None], None] | None = None,
    ) -> QueueWatcher:
        """Call ``callback()`` (from a thread) whenever any process changes the queue;
        ``on_paths`` is first told the paths below ``.redline/queue/`` that changed (None:
        not known; :func:`changed_records` reads them)."""
        self._fd(ACTIONS)
        self._fd(RESOLVED)
        self._fd(REQUESTS)
        watcher = QueueWatcher(
            self.path,
            callback,
            doorbell=self.path / REQUESTS / doorbell_name(os.getpid()),
            on_paths=on_paths,
        )
        watcher.start()
        return watcher


def changed_records(paths: Iterable[str] | None) -> set[str] | None:
    """The action ids whose record files a queue watcher's report names (``paths`` relative
    to ``.redline/queue/``, see :class:`QueueWatcher`); None when the report may hide a
    record's change: the paths are not known, or one is the queue or actions folder itself
    (made, removed, replaced) or a name in the actions folder that is neither a record
    (``pa-N.json``) nor a temporary file (``.name``, renamed to a record's name when done,
    which is then named). Paths in the other folders name no record."""
    if paths is None:
        return None
    found: set[str] = set()
    for path in paths:
        folder, _sep, name = path.partition("/")
        if folder != ACTIONS:
            if not path:
                return None
            continue
        if name.startswith("."):
            continue
        action_id = name[:-5]
        if "/" in name or not name.endswith(".json") or id_number(action_id) is None:
            return None
        found.add(action_id)
    return found


class SessionView:
    """The actions one session pushed: what its model's ``resolve`` and ``has_pending`` see."""

    def __init__(self, queue: WorkspaceQueue, session_id: str) -> None:
        self.queue = queue
        self.session_id = session_id

    def list(self) -> list[QueueRecord]:
        """The session's pending actions, top first, without one whose decision is logged.

        An owner logs its decision and answers at once; the process that asked it removes
        the record a moment later (docs/queue.md, "Who applies an action"). In between the
        record is still in the folder, and the owner -- ``exec --wait`` ending its run, a
        model's ``has_pending`` -- must not take its own decided action for a pending one.
        """
        mine = [r for r in self.queue.list() if r.source.session_id == self.session_id]
        return [r for r in mine if not self._decided(r.id)]

    def _decided(self, action_id: str) -> bool:
        """Whether ``action_id``'s resolution is logged (an unreadable entry: not decided)."""
        try:
            return self.queue.resolution(action_id) is not None
        except (QueueError, OSError):
            return False

    def top(self) -> QueueRecord | None:
        records = self.list()
        return records[0] if records else None

    @property
    def has_pending(self) -> bool:
        return bool(self.list())
