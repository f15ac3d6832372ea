"""Owner requests (``requests/pa-N.json``): asking the process that pushed an owner action
(``applied_by="owner"``) to apply or discard it, and waiting for its resolution."""

from __future__ import annotations

import builtins
import contextlib
import os
import time

from redline.hooktrace import mark
from redline.workspace.queue import storage
from redline.workspace.queue.base import ACTIONS, REQUESTS, record_name
from redline.workspace.queue.claims import QueueClaims
from redline.workspace.queue.records import (
    ORPHANED_REASON,
    ActionBusy,
    OwnerRequest,
    QueueError,
    QueueRecord,
    QueueRecordError,
    Resolution,
    id_number,
)
from redline.workspace.queue.watcher import ring


class QueueOwners(QueueClaims):
    """Requests to an owner process, and waiting until an action is resolved."""

    def request_owner(
        self,
        action_id: str,
        decision: str,
        reason: str,
        *,
        resolved_by: str = "person",
        rule: str | None = None,
        only: tuple[str, ...] | None = None,
        via: str = "",
        reviewer: str = "",
    ) -> None:
        """Ask the process that pushed an owner action to apply or discard it (``only``:
        some parts of it; refused unless its record says its owner serves parts)."""
        record = self.get(action_id)
        if record is None:
            raise self._gone(action_id)
        if record.applied_by != "owner":
            raise QueueError(f"{action_id} is applied by the queue itself, not by its owner")
        if decision == "apply" and record.orphaned():
            raise QueueError(
                f"Cannot apply {action_id} ({record.label}): {ORPHANED_REASON}. It can only "
                "be discarded."
            )
        if only is not None and "parts" not in record.owner_serves:
            raise QueueError(
                f"{action_id} ({record.label}) resolves only as a whole: the process waiting "
                "on it cannot apply or discard some hunks only"
            )
        request = OwnerRequest(
            action_id,
            decision,
            reason,
            resolved_by,
            rule,
            os.getpid(),
            only=only,
            via=via,
            reviewer=reviewer,
            asker_finishes=True,  # wait_resolution() does
        )
        # Not fsynced: a request matters only to its owner's live process, which a power
        # loss ends too (the record, orphaned then, can only be discarded).
        self._requests().write(record_name(action_id), request.to_dict(), action_id, durable=False)
        mark("request written")
        ring(self._fd(REQUESTS), record.source.pid)  # the owner hears it now, not at its watch

    def owner_requests(
        self, pid: int | None = None
    ) -> builtins.list[tuple[OwnerRequest, QueueRecord]]:
        """Requests for actions this process (or ``pid``) pushed, oldest first."""
        pid = os.getpid() if pid is None else pid
        found: builtins.list[tuple[OwnerRequest, QueueRecord]] = []
        for name in sorted(os.listdir(self._fd(REQUESTS))):
            action_id = name.removesuffix(".json")
            if name.startswith(".") or id_number(action_id) is None:
                continue
            try:
                record = self._read_record(action_id)
                if record is None:
                    self.drop_request(action_id)
                    continue
                if record.source.pid != pid:
                    continue
                data = self._requests().read(name, action_id)
            except QueueRecordError as exc:
                self.problems.append(exc)
                continue
            if data is not None:
                found.append((OwnerRequest.from_dict(data, action_id), record))
        found.sort(key=lambda pair: pair[0].time)
        return found

    def _record_file_exists(self, action_id: str) -> bool:
        try:
            os.stat(record_name(action_id), dir_fd=self._fd(ACTIONS), follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def drop_request(self, action_id: str) -> None:
        with contextlib.suppress(OSError):
            storage.unlink(self._fd(REQUESTS), record_name(action_id))

    def wait_resolution(self, action_id: str, timeout: float) -> Resolution | None:
        """Wait until ``action_id`` is resolved (None after ``timeout`` or if its owner ends).

        The owner logs the resolution and may leave the rest to this process (the request
        says it does: ``asker_finishes``): once the owner lets go of the claim, the claim
        taken here marks the id used and removes the record. The caller sees the queue as
        the decision left it."""
        deadline = time.monotonic() + timeout
        look_again = 0.0
        while True:
            found = self.resolution(action_id)
            if found is not None:
                if self._record_file_exists(action_id) and time.monotonic() < deadline:
                    try:
                        with self.claim(action_id):
                            pass
                    except ActionBusy:  # the owner still holds it
                        time.sleep(0.002)
                        continue
                    except QueueError:  # ActionGone: finished, here or by the owner;
                        pass  # else left for the next claim or reconcile: decided all the same
                mark("resolution seen")
                return found
            now = time.monotonic()
            if now >= look_again:  # is the owner still there? (a record read: not too often)
                record = self.get(action_id)
                if record is None or record.orphaned() or now >= deadline:
                    return self.resolution(action_id)
                look_again = now + 0.02
            time.sleep(0.004)  # a look at the resolved log costs a failed open
