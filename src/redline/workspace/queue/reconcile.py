"""Reconcile: on open, settle whatever a crash left in the queue.

A record with a resolution is removed; a record whose complete journal entry exists is moved
to the resolved log as applied; an ``applying`` record without one goes back to pending
(after journal recovery rolled back any half-written files); a half-done replacement is
finished. Temporary files of killed writers are swept first.
"""

from __future__ import annotations

import builtins
import contextlib
import os

from redline.workspace.queue import storage
from redline.workspace.queue.base import ACTIONS, CONTENTS, REQUESTS, RESOLVED, record_name
from redline.workspace.queue.claims import QueueClaims
from redline.workspace.queue.index import RecordSummary
from redline.workspace.queue.records import (
    ActionBusy,
    ActionGone,
    QueueError,
    QueueRecordError,
    ReplayedRecord,
    Resolution,
)


class QueueReconcile(QueueClaims):
    """Crash recovery over all records (one record's interrupted apply: :class:`QueueClaims`)."""

    def _ensure_reconciled(self, *, full: bool = False) -> None:
        if not self._reconciled:
            self._reconciled = True
            self.messages.extend(self.reconcile(full=full))

    def ensure_reconciled(self) -> None:
        """Settle crash leftovers once per queue object (what was done goes to ``messages``)."""
        self._ensure_reconciled()

    def reconcile(self, *, full: bool = False) -> builtins.list[str]:
        """Settle what a crash left behind (see the module doc); returns what was done.

        Cheap when nothing is left over: the records' summaries (from the listing index,
        :mod:`.index`), one listing of the resolved log and one pass over the journal; only
        records that need settling are claimed.
        """
        self._sweep_temporaries()
        messages = self._reconcile(full)
        if messages:
            self._loaded = None  # records were settled (what was read is out of date)
        return messages

    def _reconcile(self, full: bool) -> builtins.list[str]:
        messages: builtins.list[str] = []
        # Kept for a listing that follows at once (``full``: with the records themselves; a
        # listing takes it only right after its own reconcile, of the kind it asked for).
        entries, problems = self._loaded = self._load(full)
        leftovers = [p.action_id for p in problems if isinstance(p, ReplayedRecord)]
        if leftovers:
            messages.extend(self._remove_leftovers(leftovers))
            entries, problems = self._loaded = self._load(full)
        messages.extend(self._settle([entry.summary for entry in entries]))
        return messages

    def _settle(self, records: builtins.list[RecordSummary]) -> builtins.list[str]:
        """Settle those of ``records`` a crash left unfinished; what was done."""
        messages: builtins.list[str] = []
        if not records:
            return messages
        ids = {r.id for r in records}
        resolved = {n.removesuffix(".json") for n in os.listdir(self._fd(RESOLVED))}
        applied = self._journal_applies(min(r.created_at for r in records))
        for record in records:
            when = applied.get(record.id)
            needs = (
                record.id in resolved
                or record.state != "pending"
                or (record.replaces is not None and record.replaces in ids)
                or (when is not None and when >= record.created_at - 1e-6)
            )
            if not needs:
                continue
            try:
                messages.extend(self._reconcile_one(record, ids))
            except ActionBusy:
                continue  # someone is resolving it right now: not a leftover
            except QueueError as exc:
                messages.append(str(exc))
        return messages

    def _remove_leftovers(self, action_ids: builtins.list[str]) -> builtins.list[str]:
        """Remove records whose ids already left the queue (never acted on, nothing lost:
        the action was resolved before). Skipped while another process holds the claim."""
        messages: builtins.list[str] = []
        for action_id in action_ids:
            try:
                messages.append(self.drop_unusable(action_id))
            except (ActionBusy, ActionGone):
                continue
            except (OSError, QueueError) as exc:
                messages.append(str(exc))
        return messages

    def _sweep_temporaries(
        self, folders: tuple[str, ...] = ("", ACTIONS, CONTENTS, RESOLVED, REQUESTS)
    ) -> None:
        """Remove temporary files left by writers that were killed mid-write (in
        ``folders``; "": the index's own)."""
        from redline.workspace.queue.procs import is_alive

        for folder in folders:
            fd = self._fd(folder)
            for name in os.listdir(fd):
                if not (name.startswith(".") and name.endswith(".tmp")):
                    continue
                parts = name.rsplit(".", 3)  # ".NAME", PID, HEX, "tmp"
                if len(parts) == 4 and parts[1].isdigit() and is_alive(int(parts[1]), None):
                    continue  # its writer is still at work
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)

    def _journal_applies(self, since: float) -> dict[str, float]:
        """action id -> time of the newest complete journal apply that names it.

        Skipped when the journal folder has not changed since ``since`` (the oldest
        record's creation): no apply of any of those records can be in it then.
        """
        from redline.workspace.state import journal_dir

        try:
            if journal_dir(self.root).stat().st_mtime < since - 1.0:
                return {}
        except OSError:
            return {}
        from redline.workspace import entries

        found: dict[str, float] = {}
        try:
            for _folder, loaded in entries.iter_entries(self.root):
                if (
                    isinstance(loaded, entries.Entry)
                    and loaded.complete
                    and loaded.kind == "apply"
                    and loaded.action_id
                ):
                    found[loaded.action_id] = max(
                        found.get(loaded.action_id, 0.0), loaded.when.timestamp()
                    )
        except OSError:
            pass
        return found

    def _reconcile_one(self, record: RecordSummary, ids: set[str]) -> builtins.list[str]:
        resolved = None
        with contextlib.suppress(QueueRecordError):
            resolved = self.resolution(record.id)
        if resolved is not None:
            # Under its claim: a resolver that logged the resolution and is about to remove
            # the record itself holds it (ActionBusy: not a leftover, skipped).
            with self._held_now(record.id):
                if not storage.exists(self._fd(ACTIONS), record_name(record.id)):
                    return []  # its resolver removed it meanwhile
                self._mark_used(record.id)
                self._remove_record(record.id)
            return [f"{record.id} had already been resolved; removed its leftover record."]
        if record.replaces and record.replaces in ids:
            try:
                with self.claim(record.replaces) as claim:
                    claim.finish(
                        Resolution(
                            record.replaces,
                            "replaced",
                            resolved_by="recovery",
                            replaced_by=record.id,
                        )
                    )
            except ActionGone:
                pass
            return [f"Finished replacing {record.replaces} by {record.id}."]
        before = len(self.messages)
        try:
            with self.claim(record.id) as claim:
                if self._journal_applied(claim.record) is not None:
                    claim.record.state = "applying"
                    self._settle_applying(claim.record)
                    claim.finished = True
        except ActionGone:
            pass
        settled = self.messages[before:]
        del self.messages[before:]
        return settled
