"""QueueBase: the queue's folders, its id counter and its record files.

Every other part of :class:`~redline.workspace.queue.core.WorkspaceQueue` builds on this
one: the folder descriptors (opened on first use), the signed stores of records, resolutions
and owner requests, id allocation under the counter's flock, and reading and writing single
records. Layout and commit order: see :mod:`redline.workspace.queue.core`.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Self

from redline.workspace import known
from redline.workspace.queue import storage
from redline.workspace.queue.index import (
    Entry,
    RecordIndex,
    RecordSummary,
    collector_paused,
    identity,
    settled,
)
from redline.workspace.queue.records import (
    QueueError,
    QueueRecord,
    QueueRecordError,
    QueueUnavailable,
    ReplayedRecord,
    id_number,
)
from redline.workspace.queue.used import Ranges, UsedIds, UsedIdsError
from redline.workspace.state import StateFolderError, open_state_dir

if TYPE_CHECKING:
    # Loaded by the first listing, not by a queue that only pushes (a hook's queueing path).
    from redline.workspace.queue.hashes import FileHashes
    from redline.workspace.queue.listing import ListingMemo
    from redline.workspace.queue.staleness import Check

ACTIONS = "actions"
CONTENTS = "contents"
RESOLVED = "resolved"
REQUESTS = "requests"
CLAIMS = "claims"
COUNTER = "next-id"
PURPOSE_RECORD = "queue"
PURPOSE_RESOLVED = "queue-resolved"
PURPOSE_REQUEST = "queue-request"


def record_name(action_id: str) -> str:
    return f"{action_id}.json"


def check_id(action_id: str) -> str:
    if not isinstance(action_id, str) or id_number(action_id) is None:
        raise QueueError(f"{action_id!r} is not a pending action id (expected pa-N, e.g. pa-3)")
    return action_id


class QueueBase:
    """The state of one queue object and its file-level steps (no policy)."""

    def __init__(self, root: Path, *, reconcile: bool = True) -> None:
        self.root = Path(root).resolve()
        self._fds: dict[str, int] = {}
        self._lock = threading.RLock()
        self._pushed = 0
        self._workspace_keys: tuple[bytes, ...] | None = None
        self._signers: dict[str, storage.Signed] = {}
        self._used_ids = UsedIds(self.root)
        self._index: RecordIndex | None = None
        self._hashes: FileHashes | None = None
        self._listing: ListingMemo | None = None
        # record id -> (the record object, what its staleness check compares)
        self._checks_of: dict[str, tuple[QueueRecord, builtins.list[Check]]] = {}
        # What the first reconcile read, for the listing that follows it.
        self._loaded: tuple[builtins.list[Entry], builtins.list[QueueRecordError]] | None = None
        self._index_lock = threading.Lock()
        self._remembered = False
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
                if not self._remembered:
                    # In the user's list of known workspaces (``redline workspaces``).
                    self._remembered = True
                    known.remember(self.root)
            return fd

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fds.clear()
            self._signers.clear()
            self._index = None
            self._hashes = None
            self._listing = None
            self._checks_of = {}

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:  # noqa: SIM105 - at interpreter exit even contextlib may be gone
            self.close()
        except Exception:
            pass

    def _keys(self) -> tuple[bytes, ...]:
        """The workspace keys: the first signs, every one verifies (see ``auth``)."""
        if self._workspace_keys is None:
            from redline.workspace import auth

            try:
                self._workspace_keys = auth.workspace_keys(self.root)
            except auth.AuthError as exc:
                raise QueueUnavailable(f"The review queue cannot be used: {exc}") from None
        return self._workspace_keys

    @property
    def path(self) -> Path:
        return self.root / ".redline" / "queue"

    def _signed(self, folder: str, purpose: str, what: str) -> storage.Signed:
        with self._lock:
            signed = self._signers.get(folder)
            if signed is None:
                signed = storage.Signed(
                    self.root, self._fd(folder), purpose, what, folder, self._keys()
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
            # Ids that left the queue are never handed out again, even if the counter (a
            # file in the workspace) was reset or removed.
            number = max(number, self._used().highest() + 1)
            actions, resolved = self._fd(ACTIONS), self._fd(RESOLVED)
            while storage.exists(actions, record_name(f"pa-{number}")) or storage.exists(
                resolved, record_name(f"pa-{number}")
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

    # -- used ids -------------------------------------------------------------------
    def _used(self) -> Ranges:
        """Every id that has left this workspace's queue (see :mod:`.used`)."""
        try:
            return self._used_ids.read()
        except UsedIdsError as exc:
            raise QueueUnavailable(f"The review queue cannot be used: {exc}") from None

    def _mark_used(self, action_id: str) -> None:
        """Record for good that ``action_id`` left the queue (before its record goes)."""
        number = id_number(action_id)
        if number is None:
            return
        try:
            self._used_ids.add([number], seed=self._resolved_numbers())
        except UsedIdsError as exc:
            raise QueueUnavailable(
                f"Cannot record that {action_id} was resolved: {exc}. Its record is kept; the "
                "next redline that opens this workspace finishes this."
            ) from None

    def _resolved_numbers(self) -> Iterator[int]:
        """Ids the resolved log names with a valid signature (seeds a new used-id set)."""
        signed = self._signed(RESOLVED, PURPOSE_RESOLVED, "resolution")
        for name in os.listdir(signed.fd):
            number = id_number(name.removesuffix(".json"))
            if number is None or not name.endswith(".json"):
                continue
            try:
                if signed.read(name, name.removesuffix(".json")) is not None:
                    yield number
            except QueueRecordError:
                continue

    def _replayed(self, action_id: str) -> ReplayedRecord:
        return ReplayedRecord(
            action_id,
            f"queue record {action_id} (.redline/queue/{ACTIONS}/{record_name(action_id)}) "
            f"belongs to an action that was already resolved: {action_id} left the queue "
            "before, so this leftover or copy is never acted on.",
        )

    # -- records -------------------------------------------------------------------
    def _write_record(self, record: QueueRecord) -> None:
        self._records().write(record_name(record.id), record.to_dict(), record.id)

    def _remove_record(self, action_id: str) -> None:
        fd = self._fd(ACTIONS)
        try:
            if storage.unlink(fd, record_name(action_id)):
                storage.fsync_dir(fd)
        except OSError as exc:
            raise QueueUnavailable(
                f"Cannot remove queue record {action_id}: {storage.error_text(exc)}."
            ) from None

    def _read_record(self, action_id: str, used: Ranges | None = None) -> QueueRecord | None:
        """The verified record (None if there is none); ReplayedRecord if its id was used."""
        return self._read_entry(action_id, used)[0]

    def _read_entry(
        self, action_id: str, used: Ranges | None = None
    ) -> tuple[QueueRecord | None, os.stat_result | None]:
        """:meth:`_read_record`, and the ``fstat`` of the file it was read from."""
        data, st = self._records().read_stat(record_name(action_id), action_id)
        if data is None:
            return None, None
        if id_number(action_id) in (used if used is not None else self._used()):
            raise self._replayed(action_id)
        record = QueueRecord.from_dict(data, action_id)
        if record.id != action_id:
            raise QueueRecordError(
                action_id, f"queue record {action_id} holds the record of {record.id}; left out"
            )
        return record, st

    def _record_index(self) -> RecordIndex:
        if self._index is None:
            signed = self._records()
            self._index = RecordIndex(self._fd(""), signed.key, signed.keys)
        return self._index

    def _file_hashes(self) -> FileHashes:
        if self._hashes is None:
            from redline.workspace.queue.hashes import FileHashes

            signed = self._records()
            self._hashes = FileHashes(self._fd(""), signed.key, signed.keys)
        return self._hashes

    def _listing_memo(self) -> ListingMemo:
        if self._listing is None:
            from redline.workspace.queue.listing import ListingMemo

            signed = self._records()
            self._listing = ListingMemo(self._fd(""), signed.key, signed.keys)
        return self._listing

    def _load(self, full: bool) -> tuple[builtins.list[Entry], builtins.list[QueueRecordError]]:
        """Every record file's entry (see :mod:`.index`): unchanged files are not read again.

        ``full``: every entry has its record (else only its summary is sure to be there).
        """
        with collector_paused():
            return self._load_paused(full)

    def _load_paused(
        self, full: bool
    ) -> tuple[builtins.list[Entry], builtins.list[QueueRecordError]]:
        entries: builtins.list[Entry] = []
        problems: builtins.list[QueueRecordError] = []
        used = self._used()
        actions = self._fd(ACTIONS)
        with self._index_lock:
            index = self._record_index()
            index.load()
            if full:
                index.fill_records()
            now = time.time_ns()
            seen: dict[str, Entry] = {}
            young: builtins.list[str] = []
            with os.scandir(actions) as found:
                for item in found:
                    name = item.name
                    action_id = name[:-5]
                    entry = index.entries.get(name)
                    if entry is not None:
                        number: int | None = entry.order[1]  # its name was checked before
                    elif name.startswith(".") or not name.endswith(".json"):
                        continue
                    else:
                        number = id_number(action_id)
                        if number is None:
                            continue
                    try:
                        key = identity(item.stat(follow_symlinks=False))
                    except OSError:
                        key = None
                    if entry is not None and key is not None and entry.key == key:
                        if full and entry.record is None:
                            entry = None  # its full record did not survive: read the file
                        elif number in used:
                            problems.append(self._replayed(action_id))
                            continue
                    else:
                        entry = None
                    if entry is None:
                        try:
                            record, st = self._read_entry(action_id, used)
                        except QueueRecordError as exc:
                            problems.append(exc)
                            continue
                        if record is None or st is None:
                            continue
                        read_key = identity(st)
                        entry = Entry(read_key or (0, 0, 0, 0, 0), RecordSummary.of(record), record)
                        if read_key is None:  # not a regular file: listed, never remembered
                            entries.append(entry)
                            continue
                        if settled(read_key, now):
                            index.unsaved += 1
                        else:
                            young.append(name)
                    seen[name] = entry
                    entries.append(entry)
            for name in young:  # the index's own entries were settled when they came in
                del seen[name]
            index.entries = seen
            index.save()
        entries.sort(key=lambda e: e.order, reverse=True)
        problems.sort(key=lambda e: id_number(e.action_id) or 0)
        return entries, problems

    def _load_all(self) -> tuple[builtins.list[QueueRecord], builtins.list[QueueRecordError]]:
        """Every usable record, top first. The records are shared with the index (listing
        10,000 costs no copies): read them, never change them -- a change goes through
        :meth:`claim`, which reads the record afresh."""
        entries, problems = self._load(full=True)
        return [entry.record for entry in entries if entry.record is not None], problems

    def _load_summaries(
        self,
    ) -> tuple[builtins.list[RecordSummary], builtins.list[QueueRecordError]]:
        entries, problems = self._load(full=False)
        return [entry.summary for entry in entries], problems

    def ids(self) -> builtins.list[str]:
        """The ids of the records in the folder, none of them read or verified (cheap: for
        noticing what is new; read each with :meth:`get`)."""
        names = os.listdir(self._fd(ACTIONS))
        found = (name.removesuffix(".json") for name in names if name.endswith(".json"))
        return [action_id for action_id in found if id_number(action_id) is not None]

    def get(self, action_id: str) -> QueueRecord | None:
        """The pending action ``action_id``, or None; QueueRecordError if unusable."""
        return self._read_record(check_id(action_id))
