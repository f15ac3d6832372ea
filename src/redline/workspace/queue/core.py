"""WorkspaceQueue: the durable review queue of one workspace, shared by every process.

Layout of ``.redline/queue/`` (see docs/queue.md):

* ``actions/pa-N.json``  one signed record per pending action (purpose ``queue``);
* ``contents/SHA256``    Preview texts, stored once per content;
* ``resolved/pa-N.json`` the bounded resolved log (purpose ``queue-resolved``);
* ``requests/pa-N.json`` a request to an owner process to resolve its action
  (purpose ``queue-request``);
* ``claims/pa-N.lock``   per-action ``flock``: an action is resolved at most once;
* ``next-id``            the id counter, also the id allocation lock (never the apply lock).

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
from collections.abc import Callable
from typing import TYPE_CHECKING

from redline.workspace.queue import storage
from redline.workspace.queue.base import ACTIONS, REQUESTS, RESOLVED, check_id
from redline.workspace.queue.claims import Claim, _step
from redline.workspace.queue.contents import ActionDraft
from redline.workspace.queue.index import RecordSummary
from redline.workspace.queue.owners import QueueOwners
from redline.workspace.queue.reconcile import QueueReconcile
from redline.workspace.queue.records import QueueRecord
from redline.workspace.queue.watcher import QueueWatcher

if TYPE_CHECKING:
    from redline.jsontypes import JsonValue

__all__ = [
    "ActionDraft",
    "Claim",
    "QueueWatcher",
    "RecordSummary",
    "SessionView",
    "WorkspaceQueue",
    "check_id",
]


class WorkspaceQueue(QueueOwners, QueueReconcile):
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
        summaries, problems = self._load_summaries()
        self.problems = problems
        return summaries

    def stale_reasons(
        self, record: QueueRecord, cache: dict[str, str | None] | None = None
    ) -> builtins.list[str]:
        """Why the record's Preview no longer fits the files ([] when fresh); no blob reads.

        A file whose identity is unchanged since a listing hashed it is not read again
        (:mod:`.hashes`); :meth:`remember_hashes` keeps what was hashed for the next one."""
        from redline.workspace.queue.staleness import quick_stale

        with self._index_lock:
            hashes = self._file_hashes()
            return quick_stale(
                self.root, record.preview, cache if cache is not None else {}, hashes
            )

    def remember_hashes(self) -> None:
        """Keep the files' hashes looked up by :meth:`stale_reasons` for the next listing
        (written when enough were read; never raises)."""
        with self._index_lock:
            if self._hashes is not None:
                self._hashes.save()

    def session_view(self, session_id: str) -> SessionView:
        return SessionView(self, session_id)

    # -- watching ------------------------------------------------------------------
    def watch(self, callback: Callable[[], None]) -> QueueWatcher:
        """Call ``callback()`` (from a thread) whenever any process changes the queue."""
        self._fd(ACTIONS)
        self._fd(RESOLVED)
        self._fd(REQUESTS)
        watcher = QueueWatcher(self.path, callback)
        watcher.start()
        return watcher


class SessionView:
    """The actions one session pushed: what its model's ``resolve`` and ``has_pending`` see."""

    def __init__(self, queue: WorkspaceQueue, session_id: str) -> None:
        self.queue = queue
        self.session_id = session_id

    def list(self) -> list[QueueRecord]:
        return [r for r in self.queue.list() if r.source.session_id == self.session_id]

    def top(self) -> QueueRecord | None:
        records = self.list()
        return records[0] if records else None

    @property
    def has_pending(self) -> bool:
        return bool(self.list())
