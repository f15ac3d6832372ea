"""Claims: this process's exclusive right to resolve one action, in the commit order.

An action is resolved under its claim (a ``flock`` on ``claims/pa-N.lock``), in the commit
order described in :mod:`redline.workspace.queue.core`; each step calls the test-only
:data:`_step_hook`. Claiming a record left ``applying`` by a resolver that stopped settles it
first (:meth:`QueueClaims._settle_applying`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from redline.workspace.queue import storage
from redline.workspace.queue.base import ACTIONS, CLAIMS, check_id, record_name
from redline.workspace.queue.contents import ActionDraft
from redline.workspace.queue.records import (
    ActionBusy,
    ActionGone,
    QueueError,
    QueueRecord,
    QueueRecordError,
    QueueUnavailable,
    Resolution,
    id_number,
)
from redline.workspace.queue.resolved import QueueResolved

# Test-only: called as ``_step_hook(description)`` at each step of push, resolve, replace.
_step_hook: Callable[[str], None] | None = None


def _step(text: str) -> None:
    hook = _step_hook
    if hook is not None:
        hook(text)


class Claim:
    """This process's exclusive right to resolve one action (see :meth:`QueueClaims.claim`)."""

    def __init__(self, queue: QueueClaims, record: QueueRecord) -> None:
        self.queue = queue
        self.record = record
        self.finished = False

    def mark_applying(self) -> None:
        self.record.state = "applying"
        self.queue._write_record(self.record)
        _step("apply: marked applying")

    def back_to_pending(self, stale_reason: str | None = None) -> None:
        """The apply did not happen: the action stays pending (marked stale if given)."""
        changed = self.record.state != "pending"
        self.record.state = "pending"
        if stale_reason is not None:
            changed = changed or not self.record.stale
            self.record.stale = True
            self.record.stale_reason = stale_reason
        if changed:
            self.queue._write_record(self.record)

    def clear_stale(self) -> None:
        """The action fits the files again (a re-preview found nothing to carry over)."""
        if self.record.stale:
            self.record.stale, self.record.stale_reason = False, ""
            self.queue._write_record(self.record)

    def finish(self, resolution: Resolution) -> Resolution:
        """Log ``resolution`` and remove the record: the action has left the queue."""
        return self.clear(self.log(resolution))

    def log(self, resolution: Resolution) -> Resolution:
        """Only the durable half of :meth:`finish`: ``resolution`` is in the resolved log.
        The record stays until someone finishes it — whoever claims the action next (the
        process that asked an owner for this decision does, at once), or the reconcile
        of the next process that opens the queue — so no second decision can be made on
        it meanwhile. An owner that answers its agent right after this leaves the rest
        to the process that asked (docs/queue.md)."""
        if resolution.record is None:
            resolution = replace(resolution, record=self.record.to_dict())
        self.queue._write_resolution(resolution)
        _step(f"{resolution.decision}: resolution logged")
        return resolution

    def clear(self, resolution: Resolution) -> Resolution:
        """The rest of :meth:`finish` after :meth:`log`: the id marked used for good, the
        record removed, a discard remembered for its session's next proposal."""
        self.queue._resolution_kept(resolution)
        _step(f"{resolution.decision}: id marked used")
        self.queue._remove_record(self.record.id)
        _step(f"{resolution.decision}: record removed")
        self.finished = True
        if resolution.decision == "discard":
            from redline.workspace.queue import conversation, revisions

            # Its session's next proposal may revise it (QueueError: only the link is lost).
            with contextlib.suppress(QueueError):
                commented = conversation.has_comments(self.queue, self.record.id)
                revisions.note_discard(self.queue, self.record, resolution, commented=commented)
        return resolution

    def hand_over(self) -> QueueRecord:
        """An owner action's process stops waiting: from now on the queue applies its
        Preview itself (``applied_by="preview"``), whoever resolves it."""
        if self.record.applied_by != "preview":
            self.record.applied_by = "preview"
            self.queue._write_record(self.record)
        return self.record

    def replace(self, draft: ActionDraft, *, resolved_by: str = "agent") -> QueueRecord:
        """Put a new action in this one's place (same position, new id) and finish the claim."""
        queue = self.queue
        number = queue._allocate()
        record = queue._new_record(draft, number, self.record.position)
        record.replaces = self.record.id
        # A replacement is the same proposal: it stays the revision it was.
        record.revision_of, record.revision = self.record.revision_of, self.record.revision
        queue._write_record(record)
        _step("replace: new record written")
        from redline.workspace.queue import conversation

        # Its comments and viewed marks go with it (QueueError: the replacement stands).
        with contextlib.suppress(QueueError):
            conversation.move(queue, self.record.id, record.id)
        self.finish(
            Resolution(self.record.id, "replaced", resolved_by=resolved_by, replaced_by=record.id)
        )
        return record


class QueueClaims(QueueResolved):
    """Claiming an action, settling an interrupted apply, and resolutions made under a claim."""

    @contextlib.contextmanager
    def claim(self, action_id: str, *, wait: float = 0.0) -> Iterator[Claim]:
        """Hold ``action_id``'s claim; raises ActionGone (resolved, replaced) or ActionBusy."""
        check_id(action_id)
        folder = self._fd(CLAIMS)
        name = f"{action_id}.lock"
        try:
            fd = os.open(
                name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder
            )
        except OSError as exc:
            raise QueueUnavailable(
                f"Cannot claim {action_id} (.redline/queue/{CLAIMS}/{name}): "
                f"{storage.error_text(exc)}. Nothing was applied or discarded."
            ) from None
        claim: Claim | None = None
        try:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise ActionBusy(
                            f"{action_id} is being resolved by another redline process right "
                            "now. Nothing was applied or discarded."
                        ) from None
                    time.sleep(0.01)
            used = self._used()
            if id_number(action_id) in used:
                # Left the queue before: a leftover or a copy put back is never acted on.
                raise self._gone(action_id)
            record = self._read_record(action_id, used)
            if record is not None:
                logged = self._logged(action_id)
                if logged is not None:  # decided, its record left for the next claim
                    claim = Claim(self, record)
                    claim.clear(logged)
                    raise self._gone(action_id)
            if record is not None and record.state == "applying":
                record = self._settle_applying(record)
            if record is None:
                raise self._gone(action_id)
            claim = Claim(self, record)
            yield claim
        finally:
            if claim is not None and claim.finished:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=folder)
            os.close(fd)  # releases the flock

    def _logged(self, action_id: str) -> Resolution | None:
        """``action_id``'s logged resolution while its record is still there (an owner
        that answered first, a resolver that stopped between the two), or None."""
        try:
            return self.resolution(action_id)
        except QueueRecordError:  # an unusable entry decides nothing: the record stands
            return None

    def _gone(self, action_id: str) -> ActionGone:
        try:
            resolution = self.resolution(action_id)
        except QueueRecordError:
            resolution = None
        if resolution is None:
            with contextlib.suppress(QueueError):
                if id_number(action_id) in self._used():
                    return ActionGone(
                        action_id,
                        f"{action_id} is no longer pending: it was already resolved (how is no "
                        "longer kept). Nothing was applied or discarded.",
                    )
            return ActionGone(action_id, f"No pending action {action_id} in this workspace.")
        if resolution.replaced_by:
            return ActionGone(
                action_id,
                f"{action_id} is no longer pending: it was replaced by {resolution.replaced_by}. "
                "Nothing was applied or discarded.",
                resolution.replaced_by,
            )
        done = {"apply": "applied", "discard": "discarded"}.get(resolution.decision, "resolved")
        return ActionGone(
            action_id,
            f"{action_id} is no longer pending: it was already {done}. Nothing was applied "
            "or discarded.",
        )

    def _journal_applied(self, record: QueueRecord) -> str | None:
        """The id of a complete journal entry that applied ``record``, if any."""
        from redline.workspace import entries

        try:
            for _folder, loaded in entries.iter_entries(self.root):
                if isinstance(loaded, entries.Entry) and (
                    loaded.complete
                    and loaded.kind == "apply"
                    and loaded.action_id == record.id
                    and loaded.when.timestamp() >= record.created_at - 1e-6
                ):
                    return loaded.id
        except OSError:
            return None
        return None

    def _settle_applying(self, record: QueueRecord) -> QueueRecord | None:
        """A record left ``applying`` by a process that ended (we hold its claim)."""
        entry_id = self._journal_applied(record)
        if entry_id is not None:
            self._log_resolution(
                Resolution(
                    record.id,
                    "apply",
                    resolved_by="recovery",
                    result_text=record.applied_text or "",
                    record=record.to_dict(),
                )
            )
            self._remove_record(record.id)
            self.messages.append(
                f"{record.id} ({record.label}) had been applied when its resolver stopped "
                f"(journal entry {entry_id}); moved it to the resolved log."
            )
            return None
        from redline.workspace import journal

        self.messages.extend(journal.recover(self.root))
        record.state = "pending"
        self._write_record(record)
        self.messages.append(
            f"{record.id} ({record.label}) was being applied when its resolver stopped; "
            "nothing was written, it is pending again."
        )
        return record

    @contextlib.contextmanager
    def _held_now(self, action_id: str) -> Iterator[None]:
        """``action_id``'s claim lock, taken at once, without reading the record: for
        removing records that were never acted on. ActionBusy while another process holds
        it (it may be between logging a resolution and removing the record)."""
        check_id(action_id)
        fd = os.open(
            f"{action_id}.lock",
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=self._fd(CLAIMS),
        )
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ActionBusy(
                    f"{action_id} is being resolved by another redline process right now."
                ) from None
            yield
        finally:
            os.close(fd)

    def drop_unusable(self, action_id: str, reason: str = "") -> str:
        """Remove a record that cannot be read or verified (never acted on); say what was done."""
        with self._held_now(action_id):
            if not storage.exists(self._fd(ACTIONS), record_name(action_id)):
                raise self._gone(action_id)
            if id_number(action_id) in self._used():
                # Resolved before: this is a leftover or a copy, its resolution stands.
                self._remove_record(action_id)
                return (
                    f"Removed the queue record {action_id}: {action_id} had already been "
                    "resolved; nothing was applied."
                )
            self._log_resolution(
                Resolution(
                    action_id,
                    "discard",
                    reason,
                    result_text=f"Removed the unusable queue record {action_id}.",
                )
            )
            self._remove_record(action_id)
        return f"Removed the unusable queue record {action_id}; nothing was applied."

    def discard_record(
        self,
        claim: Claim,
        reason: str,
        *,
        resolved_by: str = "person",
        rule: str | None = None,
        result_text: str = "",
    ) -> Resolution:
        return claim.finish(
            Resolution(
                claim.record.id, "discard", reason, resolved_by, rule, result_text=result_text
            )
        )
