"""WorkspaceQueue: the durable review queue of one workspace, shared by every process.

Layout of ``.redline/queue/`` (see docs/queue.md):

* ``actions/pa-N.json``  one signed record per pending action (purpose ``queue``);
* ``contents/SHA256``    Preview texts, stored once per content;
* ``resolved/pa-N.json`` the bounded resolved log (purpose ``queue-resolved``);
* ``requests/pa-N.json`` a request to an owner process to resolve its action
  (purpose ``queue-request``);
* ``claims/pa-N.lock``   per-action ``flock``: an action is resolved at most once;
* ``next-id``            the id counter, also the id allocation lock (never the apply lock).

Commit order of an apply (each step calls the test-only :data:`_step_hook`):

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
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from redline.workspace.hunks import Origin
from redline.workspace.preview import Preview
from redline.workspace.queue import storage
from redline.workspace.queue.records import (
    ORPHANED_REASON,
    ActionBusy,
    ActionGone,
    OwnerRequest,
    QueueError,
    QueueRecord,
    QueueRecordError,
    QueueUnavailable,
    Resolution,
    Source,
    id_number,
)
from redline.workspace.state import StateFolderError, open_state_dir

ACTIONS = "actions"
CONTENTS = "contents"
RESOLVED = "resolved"
REQUESTS = "requests"
CLAIMS = "claims"
COUNTER = "next-id"
PURPOSE_RECORD = "queue"
PURPOSE_RESOLVED = "queue-resolved"
PURPOSE_REQUEST = "queue-request"

# The resolved log keeps at most this many resolutions, and none older than KEEP_DAYS.
KEEP_RESOLUTIONS = 1000
KEEP_DAYS = 30
PRUNE_EVERY = 50
# A stored content younger than this is never collected: a push writes its contents first.
BLOB_GRACE_SECONDS = 600.0

# Test-only: called as ``_step_hook(description)`` at each step of push, resolve, replace.
_step_hook: Callable[[str], None] | None = None


def _step(text: str) -> None:
    hook = _step_hook
    if hook is not None:
        hook(text)


def _record_name(action_id: str) -> str:
    return f"{action_id}.json"


def check_id(action_id: str) -> str:
    if not isinstance(action_id, str) or id_number(action_id) is None:
        raise QueueError(f"{action_id!r} is not a pending action id (expected pa-N, e.g. pa-3)")
    return action_id


@dataclass(frozen=True)
class ActionDraft:
    """What a push (or replacement) describes; the queue adds id, position and time."""

    label: str
    source: Source
    source_tool_name: str = "custom_tool"
    preview: Preview | None = None
    details: Any = None
    applied_by: str | None = None  # default: "preview" with a Preview, else "owner"
    applied_text: str | None = None
    stale: bool = False
    stale_reason: str = ""
    # What a derived action (remaining, rebased, edited) keeps of the model's proposal.
    origin: Origin | None = None


def _to_blobs(data: Any, put: Callable[[str], str]) -> Any:
    changes = []
    for change in data.get("changes", []):
        item = dict(change)
        for key in ("old_text", "new_text"):
            if isinstance(item.get(key), str):
                item[key] = {"blob": put(item[key])}
        changes.append(item)
    return {"changes": changes}


class Claim:
    """This process's exclusive right to resolve one action (see :meth:`WorkspaceQueue.claim`)."""

    def __init__(self, queue: WorkspaceQueue, record: QueueRecord) -> None:
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

    def finish(self, resolution: Resolution) -> Resolution:
        """Log ``resolution`` and remove the record: the action has left the queue."""
        if resolution.record is None:
            resolution = replace(resolution, record=self.record.to_dict())
        self.queue._log_resolution(resolution)
        _step(f"{resolution.decision}: resolution logged")
        self.queue._remove_record(self.record.id)
        _step(f"{resolution.decision}: record removed")
        self.finished = True
        return resolution

    def replace(self, draft: ActionDraft, *, resolved_by: str = "agent") -> QueueRecord:
        """Put a new action in this one's place (same position, new id) and finish the claim."""
        queue = self.queue
        number = queue._allocate()
        record = queue._new_record(draft, number, self.record.position)
        record.replaces = self.record.id
        queue._write_record(record)
        _step("replace: new record written")
        self.finish(
            Resolution(self.record.id, "replaced", resolved_by=resolved_by, replaced_by=record.id)
        )
        return record


class WorkspaceQueue:
    """The queue of the workspace at ``root``; see the module doc for layout and commit order.

    Cheap to create; folders are opened on first use. Thread-safe for use from one process's
    threads; processes coordinate through the file system alone.
    """

    def __init__(self, root: Path, *, reconcile: bool = True) -> None:
        self.root = Path(root).resolve()
        self._fds: dict[str, int] = {}
        self._lock = threading.RLock()
        self._pushed = 0
        self._workspace_key: bytes | None = None
        self._signers: dict[str, storage.Signed] = {}
        self._last_load: (
            tuple[builtins.list[QueueRecord], builtins.list[QueueRecordError]] | None
        ) = None
        self._reconciled = not reconcile
        self.problems: builtins.list[QueueRecordError] = []
        self.messages: builtins.list[str] = []

    # -- folders -------------------------------------------------------------------
    def _fd(self, name: str) -> int:
        with self._lock:
            fd = self._fds.get(name)
            if fd is None:
                try:
                    fd = open_state_dir(self.root, "queue", *([name] if name else []))
                except StateFolderError as exc:
                    raise QueueUnavailable(f"The review queue cannot be used: {exc}") from None
                except OSError as exc:
                    where = ".redline/queue" + (f"/{name}" if name else "")
                    raise QueueUnavailable(
                        f"The review queue folder {where} cannot be opened: "
                        f"{storage.error_text(exc)}."
                    ) from None
                self._fds[name] = fd
            return fd

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fds.clear()
            self._signers.clear()

    def __enter__(self) -> WorkspaceQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def _key(self) -> bytes:
        if self._workspace_key is None:
            from redline.workspace import auth

            try:
                self._workspace_key = auth.workspace_key(self.root)
            except auth.AuthError as exc:
                raise QueueUnavailable(f"The review queue cannot be used: {exc}") from None
        return self._workspace_key

    @property
    def path(self) -> Path:
        return self.root / ".redline" / "queue"

    def _signed(self, folder: str, purpose: str, what: str) -> storage.Signed:
        with self._lock:
            signed = self._signers.get(folder)
            if signed is None:
                signed = storage.Signed(
                    self.root, self._fd(folder), purpose, what, folder, self._key()
                )
                self._signers[folder] = signed
            return signed

    def _records(self) -> storage.Signed:
        return self._signed(ACTIONS, PURPOSE_RECORD, "queue record")

    def _resolved(self) -> storage.Signed:
        return self._signed(RESOLVED, PURPOSE_RESOLVED, "resolution")

    def _requests(self) -> storage.Signed:
        return self._signed(REQUESTS, PURPOSE_REQUEST, "owner request")

    def _blobs(self) -> storage.Blobs:
        return storage.Blobs(self._fd(CONTENTS))

    # -- ids -----------------------------------------------------------------------
    def _allocate(self) -> int:
        """The next N of ``pa-N``, under the counter file's own flock; never reused."""
        base = self._fd("")
        try:
            fd = os.open(
                COUNTER, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=base
            )
        except OSError as exc:
            raise QueueUnavailable(
                f"Cannot open the queue's id counter .redline/queue/{COUNTER}: "
                f"{storage.error_text(exc)}. Nothing was queued."
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            number = int(raw) if raw.isdigit() else 0
            if number <= 0:
                number = self._highest_seen() + 1
            actions, resolved = self._fd(ACTIONS), self._fd(RESOLVED)
            while storage.exists(actions, _record_name(f"pa-{number}")) or storage.exists(
                resolved, _record_name(f"pa-{number}")
            ):
                number += 1
            # Not fsynced: after a power loss a stale counter is caught by the existence
            # checks above (every durable record and kept resolution is seen), and a push
            # already pays for two folder syncs.
            os.pwrite(fd, f"{number + 1:020d}\n".encode("ascii"), 0)
            return number
        except OSError as exc:
            raise QueueUnavailable(
                f"Cannot allocate a pending action id in .redline/queue/{COUNTER}: "
                f"{storage.error_text(exc)}. Nothing was queued."
            ) from None
        finally:
            os.close(fd)

    def _highest_seen(self) -> int:
        highest = 0
        for folder in (ACTIONS, RESOLVED):
            for name in os.listdir(self._fd(folder)):
                number = id_number(name.removesuffix(".json"))
                if number is not None:
                    highest = max(highest, number)
        return highest

    # -- records -------------------------------------------------------------------
    def _write_record(self, record: QueueRecord) -> None:
        self._records().write(_record_name(record.id), record.to_dict(), record.id)

    def _remove_record(self, action_id: str) -> None:
        fd = self._fd(ACTIONS)
        try:
            if storage.unlink(fd, _record_name(action_id)):
                storage.fsync_dir(fd)
        except OSError as exc:
            raise QueueUnavailable(
                f"Cannot remove queue record {action_id}: {storage.error_text(exc)}."
            ) from None

    def _read_record(self, action_id: str) -> QueueRecord | None:
        data = self._records().read(_record_name(action_id), action_id)
        if data is None:
            return None
        record = QueueRecord.from_dict(data, action_id)
        if record.id != action_id:
            raise QueueRecordError(
                action_id, f"queue record {action_id} holds the record of {record.id}; left out"
            )
        return record

    def _new_record(self, draft: ActionDraft, number: int, position: int) -> QueueRecord:
        if not isinstance(draft.label, str) or not draft.label.strip():
            raise ValueError("a pending action needs a non-empty label")
        preview_data = None
        files: builtins.list[str] = []
        added = removed = 0
        if draft.preview is not None:
            blobs = self._blobs()
            wrote = False

            def put(text: str) -> str:
                nonlocal wrote
                digest, new = blobs.put(text)
                wrote = wrote or new
                return digest

            try:
                preview_data = _to_blobs(draft.preview.to_dict(), put)
                if wrote:
                    blobs.sync()
            except OSError as exc:
                raise QueueUnavailable(
                    f"Cannot store the contents of pa-{number} in .redline/queue/{CONTENTS}: "
                    f"{storage.error_text(exc)}. Nothing was queued."
                ) from None
            summary = draft.preview.summary()
            files = list(draft.preview.paths)
            added, removed = int(summary["added"]), int(summary["removed"])
        origin_data = None
        if draft.origin is not None:
            origin_data = draft.origin.to_dict()
            if draft.origin.proposal is not None:
                origin_data["proposal"] = self._store_preview(draft.origin.proposal, number)
        applied_by = draft.applied_by or ("preview" if draft.preview is not None else "owner")
        if applied_by not in ("preview", "owner"):
            raise ValueError(f"applied_by must be 'preview' or 'owner', not {applied_by!r}")
        if applied_by == "preview" and draft.preview is None:
            raise ValueError(
                "an action applied by the queue (applied_by='preview') needs a Preview"
            )
        try:
            storage.canonical_check(draft.details)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the action's details are not JSON: {exc}") from None
        return QueueRecord(
            id=f"pa-{number}",
            position=position,
            label=draft.label,
            source_tool_name=draft.source_tool_name,
            source=draft.source,
            created_at=time.time(),
            applied_by=applied_by,
            details=draft.details,
            preview=preview_data,
            files=files,
            added=added,
            removed=removed,
            stale=draft.stale,
            stale_reason=draft.stale_reason,
            applied_text=draft.applied_text,
            origin=origin_data,
        )

    def push(self, draft: ActionDraft) -> QueueRecord:
        """Queue a new action on top; durable when this returns."""
        self._ensure_reconciled()
        number = self._allocate()
        _step("push: id allocated")
        record = self._new_record(draft, number, number)
        _step("push: contents stored")
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

    def update_details(self, action_id: str, details: Any) -> QueueRecord | None:
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
        """Every pending action, top first; unusable records go to :attr:`problems`."""
        loaded = None
        if not self._reconciled:
            self._reconciled = True
            messages = self.reconcile()
            self.messages.extend(messages)
            if not messages:
                loaded = self._last_load  # nothing changed: no need to read it all again
        records, problems = loaded if loaded is not None else self._load_all()
        self.problems = problems
        return list(records)

    def _load_all(self) -> tuple[builtins.list[QueueRecord], builtins.list[QueueRecordError]]:
        records: builtins.list[QueueRecord] = []
        problems: builtins.list[QueueRecordError] = []
        for name in os.listdir(self._fd(ACTIONS)):
            if name.startswith(".") or not name.endswith(".json"):
                continue
            action_id = name.removesuffix(".json")
            if id_number(action_id) is None:
                continue
            try:
                record = self._read_record(action_id)
            except QueueRecordError as exc:
                problems.append(exc)
                continue
            if record is not None:
                records.append(record)
        records.sort(key=lambda r: (r.position, id_number(r.id) or 0), reverse=True)
        problems.sort(key=lambda e: id_number(e.action_id) or 0)
        return records, problems

    def get(self, action_id: str) -> QueueRecord | None:
        """The pending action ``action_id``, or None; QueueRecordError if unusable."""
        return self._read_record(check_id(action_id))

    def _store_preview(self, preview: Preview, number: int) -> dict[str, Any]:
        blobs = self._blobs()
        try:
            data = _to_blobs(preview.to_dict(), lambda text: blobs.put(text)[0])
            blobs.sync()
        except OSError as exc:
            raise QueueUnavailable(
                f"Cannot store the contents of pa-{number} in .redline/queue/{CONTENTS}: "
                f"{storage.error_text(exc)}. Nothing was queued."
            ) from None
        return dict(data)

    def origin(self, record: QueueRecord) -> Origin | None:
        """The record's origin (label, hunk count, the model's proposal once edited)."""
        if record.origin is None:
            return None
        data = dict(record.origin)
        proposal = data.get("proposal")
        if isinstance(proposal, dict):
            data["proposal"] = self._unblob(proposal, record.id).to_dict()
        try:
            return Origin.from_dict(data)
        except ValueError as exc:
            raise QueueRecordError(
                record.id, f"queue record {record.id}: bad origin: {exc}"
            ) from None

    def preview(self, record: QueueRecord) -> Preview | None:
        """The record's Preview with its texts read back from the content store."""
        if record.preview is None:
            return None
        return self._unblob(record.preview, record.id)

    def _unblob(self, stored: dict[str, Any], action_id: str) -> Preview:
        blobs = self._blobs()
        changes = []
        for change in stored.get("changes", []):
            if not isinstance(change, dict):
                raise QueueRecordError(
                    action_id, f"queue record {action_id}: a change is not an object"
                )
            item = dict(change)
            for key in ("old_text", "new_text"):
                ref = item.get(key)
                if isinstance(ref, dict):
                    item[key] = blobs.get(str(ref.get("blob", "")), action_id)
            changes.append(item)
        try:
            return Preview.from_dict({"changes": changes})
        except ValueError as exc:
            raise QueueRecordError(
                action_id, f"queue record {action_id}: bad preview: {exc}"
            ) from None

    def resolution(self, action_id: str) -> Resolution | None:
        """How ``action_id`` was resolved (while the bounded log keeps it), or None."""
        check_id(action_id)
        data = self._resolved().read(_record_name(action_id), action_id)
        return None if data is None else Resolution.from_dict(data, action_id)

    def stale_reasons(
        self, record: QueueRecord, cache: dict[str, str | None] | None = None
    ) -> builtins.list[str]:
        """Why the record's Preview no longer fits the files ([] when fresh); no blob reads."""
        from redline.workspace.queue.staleness import quick_stale

        return quick_stale(self.root, record.preview, cache if cache is not None else {})

    def session_view(self, session_id: str) -> SessionView:
        return SessionView(self, session_id)

    # -- claims and resolution ------------------------------------------------------
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
            record = self._read_record(action_id)
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

    def _gone(self, action_id: str) -> ActionGone:
        try:
            resolution = self.resolution(action_id)
        except QueueRecordError:
            resolution = None
        if resolution is None:
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

    def _log_resolution(self, resolution: Resolution) -> None:
        self._resolved().write(_record_name(resolution.id), resolution.to_dict(), resolution.id)
        self._pushed += 1
        number = id_number(resolution.id) or 0
        if number % PRUNE_EVERY == 0:
            with contextlib.suppress(OSError, QueueError):
                self.prune()

    def drop_unusable(self, action_id: str, reason: str = "") -> str:
        """Remove a record that cannot be read or verified (never acted on); say what was done."""
        check_id(action_id)
        folder = self._fd(CLAIMS)
        fd = os.open(
            f"{action_id}.lock",
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=folder,
        )
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ActionBusy(
                    f"{action_id} is being resolved by another redline process right now."
                ) from None
            if not storage.exists(self._fd(ACTIONS), _record_name(action_id)):
                raise self._gone(action_id)
            self._log_resolution(
                Resolution(
                    action_id,
                    "discard",
                    reason,
                    result_text=f"Removed the unusable queue record {action_id}.",
                )
            )
            self._remove_record(action_id)
        finally:
            os.close(fd)
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

    # -- owner actions -------------------------------------------------------------
    def request_owner(
        self,
        action_id: str,
        decision: str,
        reason: str,
        *,
        resolved_by: str = "person",
        rule: str | None = None,
    ) -> None:
        """Ask the process that pushed an owner action to apply or discard it."""
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
        self._requests().write(
            _record_name(action_id),
            OwnerRequest(action_id, decision, reason, resolved_by, rule, os.getpid()).to_dict(),
            action_id,
        )

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

    def drop_request(self, action_id: str) -> None:
        with contextlib.suppress(OSError):
            storage.unlink(self._fd(REQUESTS), _record_name(action_id))

    def wait_resolution(self, action_id: str, timeout: float) -> Resolution | None:
        """Wait until ``action_id`` is resolved (None after ``timeout`` or if its owner ends)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.resolution(action_id)
            if found is not None:
                return found
            record = self.get(action_id)
            if record is None or record.orphaned() or time.monotonic() >= deadline:
                return self.resolution(action_id)
            time.sleep(0.02)

    # -- recovery and bounds -------------------------------------------------------
    def _ensure_reconciled(self) -> None:
        if not self._reconciled:
            self._reconciled = True
            self.messages.extend(self.reconcile())

    def reconcile(self) -> builtins.list[str]:
        """Settle what a crash left behind (see the module doc); returns what was done.

        Cheap when nothing is left over: one listing of the resolved log and one pass over
        the journal; only records that need settling are claimed.
        """
        messages: builtins.list[str] = []
        self._sweep_temporaries()
        records, _problems = self._last_load = self._load_all()
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

    def _sweep_temporaries(self) -> None:
        """Remove temporary files left by writers that were killed mid-write."""
        from redline.workspace.queue.procs import is_alive

        for folder in (ACTIONS, CONTENTS, RESOLVED, REQUESTS):
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

    def _reconcile_one(self, record: QueueRecord, ids: set[str]) -> builtins.list[str]:
        resolved = None
        with contextlib.suppress(QueueRecordError):
            resolved = self.resolution(record.id)
        if resolved is not None:
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

    # -- watching ------------------------------------------------------------------
    def watch(self, callback: Callable[[], None]) -> QueueWatcher:
        """Call ``callback()`` (from a thread) whenever any process changes the queue."""
        self._fd(ACTIONS)
        self._fd(RESOLVED)
        self._fd(REQUESTS)
        watcher = QueueWatcher(self.path, callback)
        watcher.start()
        return watcher


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


class QueueWatcher:
    """A watchfiles thread on ``.redline/queue/``; stop() ends it."""

    def __init__(self, path: Path, callback: Callable[[], None]) -> None:
        self.path = path
        self.callback = callback
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="redline-queue-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(5.0)

    def _run(self) -> None:
        import watchfiles

        def interesting(_change: Any, path: str) -> bool:
            name = os.path.basename(path)
            return name.endswith(".json") and not name.startswith(".")

        self._ready.set()
        for _changes in watchfiles.watch(
            self.path,
            watch_filter=interesting,
            stop_event=self._stop,
            debounce=50,
            step=10,
            rust_timeout=200,
            yield_on_timeout=False,
            raise_interrupt=False,
        ):
            try:
                self.callback()
            except Exception:  # a listener's failure never stops the watcher
                import logging

                logging.getLogger(__name__).exception("queue watch callback failed")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)
