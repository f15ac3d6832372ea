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

#: The file name's end of an owner's refusal, beside its request (``pa-N.refused``).
REFUSED = ".refused"
#: The longest refusal text kept (an owner's error text; the rest is cut).
REFUSAL_TEXT_LIMIT = 4000


class OwnerRefused(QueueError):
    """The owner of an action could not do what was asked (nothing was applied or
    discarded); the text is the owner's own."""


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
        known: QueueRecord | None = None,
    ) -> float:
        """Ask the process that pushed an owner action to apply or discard it (``only``:
        some parts of it; refused unless its record says its owner serves parts). Returns
        the request's time, which names it to :meth:`wait_resolution`. ``known``: the
        record as the caller's claim just read and verified it (not read again: the owner
        reads it anyway before it serves, and a record replaced meanwhile is not served)."""
        record = known if known is not None and known.id == action_id else self.get(action_id)
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
        with contextlib.suppress(OSError):  # an earlier request's refusal, never taken
            storage.unlink(self._fd(REQUESTS), action_id + REFUSED)
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
        return request.time

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

    def refuse_request(self, request: OwnerRequest, text: str) -> None:
        """The owner could not do what ``request`` asked (its apply failed, nothing was
        written): tell the asking process at once, with the owner's own words, instead of
        letting it wait out its timeout. Kept beside the request (``pa-N.refused``, signed,
        not fsynced: it matters only to a live asker) and read once by that asker."""
        answer = {
            "version": 1,
            "id": request.id,
            "requested_by_pid": request.requested_by_pid,
            "time": request.time,
            "text": text[:REFUSAL_TEXT_LIMIT],
        }
        self._requests().write(
            request.id + REFUSED, answer, request.id, sync_dir=False, durable=False
        )
        ring(self._fd(REQUESTS), request.requested_by_pid)

    def _refusal(self, action_id: str, asked_at: float) -> str | None:
        """The owner's refusal of this process's request for ``action_id`` made at
        ``asked_at`` (taken: it is removed), or None. Another asker's, or an earlier
        request's, is left alone; an unusable one is dropped and ignored (the wait goes
        on to its timeout, as before refusals were told)."""
        name = action_id + REFUSED
        try:
            data = self._requests().read(name, action_id)
        except QueueRecordError:
            with contextlib.suppress(OSError):
                storage.unlink(self._fd(REQUESTS), name)
            return None
        if data is None:
            return None
        text = data.get("text")
        if (
            data.get("requested_by_pid") != os.getpid()
            or data.get("time") != asked_at
            or not isinstance(text, str)  # (a request's own fields, copied: not a refusal)
            or not text
        ):
            return None
        with contextlib.suppress(OSError):
            storage.unlink(self._fd(REQUESTS), name)
        return text

    def drop_request(self, action_id: str) -> None:
        with contextlib.suppress(OSError):
            storage.unlink(self._fd(REQUESTS), record_name(action_id))

    def wait_resolution(
        self, action_id: str, timeout: float, asked_at: float | None = None
    ) -> Resolution | None:
        """Wait until ``action_id`` is resolved (None after ``timeout`` or if its owner ends;
        :class:`OwnerRefused` when the owner could not do the request made at ``asked_at``
        and said why).

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
                refused = None if asked_at is None else self._refusal(action_id, asked_at)
                if refused is not None:
                    raise OwnerRefused(refused)
                record = self.get(action_id)
                if record is None or record.orphaned() or now >= deadline:
                    return self.resolution(action_id)
                look_again = now + 0.02
            time.sleep(0.004)  # a look at the resolved log costs a failed open
