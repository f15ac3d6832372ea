"""The resolved log (``resolved/pa-N.json``) and its bounds: pruning and content collection."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from redline.workspace.queue import storage
from redline.workspace.queue.base import CONTENTS, RESOLVED, check_id, record_name
from redline.workspace.queue.contents import QueueContents
from redline.workspace.queue.records import (
    QueueError,
    QueueRecordError,
    Resolution,
    id_number,
)

# The resolved log keeps at most this many resolutions, and none older than KEEP_DAYS.
KEEP_RESOLUTIONS = 1000
KEEP_DAYS = 30
PRUNE_EVERY = 50
# A stored content younger than this is never collected: a push writes its contents first.
BLOB_GRACE_SECONDS = 600.0


def _refs(preview: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(preview, dict):
        for change in preview.get("changes", []):
            if isinstance(change, dict):
                for key in ("old_text", "new_text"):
                    ref = change.get(key)
                    if isinstance(ref, dict) and isinstance(ref.get("blob"), str):
                        found.add(ref["blob"])
    return found


class QueueResolved(QueueContents):
    """Reading and writing the resolved log; keeping it (and the content store) bounded."""

    # Set by a process that decides while a person waits (the dashboard): the pruning due
    # every PRUNE_EVERY ids (a whole listing of the queue: ~0.2 s at 10,000 pending) then
    # waits for :meth:`housekeep`, called once the decision's outcome is on its way,
    # instead of holding that outcome back (issue 44); :meth:`close` does what is still due.
    defer_pruning = False
    prune_due = False

    def housekeep(self) -> None:
        """Prune the resolved log if a decision made it due (see ``defer_pruning``)."""
        if self.prune_due:
            self.prune_due = False
            with contextlib.suppress(OSError, QueueError):
                self.prune()

    def close(self) -> None:
        self.housekeep()
        super().close()

    def resolution(self, action_id: str) -> Resolution | None:
        """How ``action_id`` was resolved (while the bounded log keeps it), or None."""
        check_id(action_id)
        data = self._resolved().read(record_name(action_id), action_id)
        return None if data is None else Resolution.from_dict(data, action_id)

    def note_result(self, action_id: str, text: str) -> None:
        """Add what the resolver said to ``action_id``'s logged resolution (the rest of a
        partial resolution is logged as a replacement before its text is known)."""
        from dataclasses import replace

        found = self.resolution(action_id)
        if found is None:
            return
        self._resolved().write(
            record_name(action_id), replace(found, result_text=text).to_dict(), action_id
        )

    def _log_resolution(self, resolution: Resolution) -> None:
        """Log ``resolution``, then mark its id used for good (the log itself is pruned)."""
        self._write_resolution(resolution)
        self._resolution_kept(resolution)

    def _write_resolution(self, resolution: Resolution) -> None:
        """The resolution's durable half: its entry in the resolved log (fsynced). From
        here on the action is decided: whoever claims it next, and the reconcile, finish
        what a resolver left (:meth:`_resolution_kept`, the record's removal)."""
        self._resolved().write(record_name(resolution.id), resolution.to_dict(), resolution.id)

    def _resolution_kept(self, resolution: Resolution) -> None:
        """Mark a logged resolution's id used for good (before its record goes)."""
        self._mark_used(resolution.id)
        self._pushed += 1
        number = id_number(resolution.id) or 0
        if number % PRUNE_EVERY == 0:
            self.prune_due = True
            if not self.defer_pruning:
                self.housekeep()

    def prune(self) -> None:
        """Bound the resolved log (KEEP_RESOLUTIONS, KEEP_DAYS) and collect unused contents."""
        folder = self._fd(RESOLVED)
        names = [n for n in os.listdir(folder) if not n.startswith(".") and n.endswith(".json")]
        names.sort(key=lambda n: id_number(n.removesuffix(".json")) or 0)
        cutoff = time.time() - KEEP_DAYS * 86400
        excess = len(names) - KEEP_RESOLUTIONS
        for index, name in enumerate(names):
            drop = index < excess
            if not drop:
                with contextlib.suppress(OSError):
                    drop = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mtime < cutoff
            if drop:
                storage.unlink(folder, name)
        from redline.workspace.queue import conversation

        # A conversation is kept as long as its action is pending or in the resolved log.
        kept = {n.removesuffix(".json") for n in os.listdir(folder) if n.endswith(".json")}
        kept.update(self.ids())
        with contextlib.suppress(OSError, QueueError):
            conversation.forget_except(self, kept)
        from redline.workspace.queue import revisions

        with contextlib.suppress(OSError, QueueError):
            revisions.forget_except(self, kept)
        self.collect()

    def collect(self) -> int:
        """Remove stored contents no pending record or kept resolution refers to."""
        referenced: set[str] = set()
        for record in self._load_all()[0]:
            referenced.update(_refs(record.preview))
        resolved = self._resolved()
        for name in os.listdir(resolved.fd):
            if name.startswith(".") or not name.endswith(".json"):
                continue
            try:
                data = resolved.read(name, name.removesuffix(".json"))
            except QueueRecordError:
                continue
            if data and isinstance(data.get("record"), dict):
                referenced.update(_refs(data["record"].get("preview")))
        folder = self._fd(CONTENTS)
        cutoff = time.time() - BLOB_GRACE_SECONDS
        removed = 0
        for name in os.listdir(folder):
            if name in referenced or name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                if os.stat(name, dir_fd=folder, follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(name, dir_fd=folder)
                    removed += 1
        return removed
