"""Every known workspace's pending actions, read lazily: the data side of ``redline --all``
(docs/inbox.md; the review source over it is :mod:`redline.review.all_source`).

The workspaces are the ones :mod:`redline.workspace.known` remembers. Each is a
:class:`Space`: its id (the team queue's, so a local ``pa-N@WSID`` and a team one agree),
its folder (``missing`` when gone: shown, never read), whether its id is shared with
another known path (``conflict``: listed, but refused as a target), and its queue, opened
only when its ``.redline/queue/`` exists (listing never creates one).

**Lazy.** :meth:`AllWorkspaces.read` reads each queue's records from its listing index
(``workspace/queue/index.py``: a record file that did not change is not read again, no
Preview is read) and orders every workspace's actions newest first; :class:`Listing` is a
sequence over that order whose rows (:class:`~redline.review.source.ListedAction`, with
the staleness check by hash) are made when first asked for. The Preview of one action is
read when it is shown (:meth:`AllWorkspaces.preview`).

**Routing.** A ``pa-N@WSID`` names its workspace; :meth:`AllWorkspaces.route` finds it
and refuses a missing or conflicting one, and :meth:`AllWorkspaces.session` is that
workspace's :class:`~redline.review.session.ReviewSession` (made on first use, with no
actions of its own), through which every decision, edit, re-preview and undo goes: the
one decision path, ``ReviewSession.decide`` → ``review.decide.decide_queued``.

Threads: every method may be called from any thread; ``_lock`` guards the spaces and each
space's cached records (reading a queue happens outside it, under the queue's own locks).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, overload

from redline.review.source import ListedAction, WorkspaceRef, listed_from_record

if TYPE_CHECKING:
    from redline.review.session import ReviewSession
    from redline.workspace.known import Known
    from redline.workspace.preview import Preview
    from redline.workspace.queue import QueueRecord, WorkspaceQueue

log = logging.getLogger(__name__)

#: Rows of one workspace read one record file each; past this many, its whole list is read
#: from its listing index instead (cheaper per row, and every later row costs nothing).
SINGLE_READS = 8


class RouteError(ValueError):
    """An id that names no usable workspace or action; the message says which and why."""


def workspace_ident(known: Known, root: Path) -> str:
    """The team queue's id of the workspace at ``root``: a configured ``[queue]
    workspace_id`` (the user's, or a trusted workspace's) wins, else the id cached in its
    known entry, else computed (which runs git) and cached."""
    from redline.review.provenance import configured_workspace_id
    from redline.workspace.identity import workspace_id
    from redline.workspace.known import cache_id

    configured = configured_workspace_id(root)
    if configured:
        cache_id(known, configured)
        return configured
    if known.id:
        return known.id
    ident = workspace_id(root)
    cache_id(known, ident)
    return ident


@dataclass
class Space:
    """One known workspace as the inbox reads it."""

    known: Known
    id: str | None
    missing: bool = False
    conflict: bool = False
    problem: str = ""
    queue: WorkspaceQueue | None = None
    #: Records read so far, by local id (all of them once ``complete``).
    records: dict[str, QueueRecord] = field(default_factory=dict)
    complete: bool = False
    single_reads: int = 0
    session: ReviewSession | None = None

    @property
    def path(self) -> str:
        return self.known.path

    @property
    def ref(self) -> WorkspaceRef | None:
        return WorkspaceRef(self.id, self.known.path) if self.id else None

    @property
    def usable(self) -> bool:
        """Listed and decided: not missing, not in conflict, with an id."""
        return bool(self.id) and not self.missing and not self.conflict

    @property
    def queue_folder(self) -> Path:
        return Path(self.known.path) / ".redline" / "queue"

    def describe(self) -> str:
        return f"{self.id or '?'} ({self.known.path})"


class AllWorkspaces:
    """Every known workspace and its pending actions (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spaces: dict[str, Space] = {}  # by path

    # -- the workspaces ------------------------------------------------------------------
    def spaces(self) -> list[Space]:
        """Every known workspace, by path (as of the last :meth:`refresh`)."""
        with self._lock:
            return sorted(self._spaces.values(), key=lambda space: space.path)

    def refresh(self) -> list[Space]:
        """Read the known workspaces again: new ones added, forgotten ones dropped, missing
        folders noticed, ids and conflicts found. Queues are not read here."""
        from redline.workspace.known import read_all

        entries = read_all()
        with self._lock:
            old = dict(self._spaces)
        found: dict[str, Space] = {}
        for known in entries:
            space = old.pop(known.path, None)
            if space is None:
                space = Space(known, known.id)
            space.known = known if known.id or not space.id else space.known
            space.missing = not os.path.isdir(known.path)
            if space.missing:
                space.problem = ""
                self._close(space)
            elif not space.id:
                space.problem = ""
                try:
                    space.id = workspace_ident(known, Path(known.path))
                except OSError as exc:
                    space.problem = f"its id cannot be found: {exc}"
            found[known.path] = space
        counts: dict[str, int] = {}
        for space in found.values():
            if space.id and not space.missing:
                counts[space.id] = counts.get(space.id, 0) + 1
        for space in found.values():
            space.conflict = bool(space.id) and not space.missing and counts[space.id or ""] > 1
        for space in old.values():  # forgotten meanwhile
            self._close(space)
        with self._lock:
            self._spaces = found
        return self.spaces()

    def space(self, wsid: str) -> Space:
        """The usable workspace with id ``wsid``; RouteError naming why there is none.
        An id not known yet makes the known workspaces be read again first."""
        with self._lock:
            matches = [s for s in self._spaces.values() if s.id == wsid]
        if not matches:
            self.refresh()
            with self._lock:
                matches = [s for s in self._spaces.values() if s.id == wsid]
        present = [s for s in matches if not s.missing]
        if len(present) > 1:
            paths = " and ".join(s.path for s in present)
            raise RouteError(
                f"workspace id {wsid} is shared by {paths} (a conflict; see `redline "
                "workspaces list`): give one of them its own [queue] workspace_id"
            )
        if present:
            return present[0]
        if matches:
            raise RouteError(f"workspace {wsid} ({matches[0].path}) is missing: its folder is gone")
        raise RouteError(f"unknown workspace {wsid} here; for the team queue add --queue URL")

    def route(self, action_id: str) -> tuple[Space, str]:
        """The workspace and local id of ``pa-N@WSID``; RouteError when it names none."""
        local, sep, wsid = action_id.partition("@")
        if not sep or not local or not wsid:
            raise RouteError(f"{action_id!r} is not an id of the form pa-N@WSID")
        return self.space(wsid), local

    # -- reading -------------------------------------------------------------------------
    def read(self, *, check_files: bool = True) -> Listing:
        """Every usable workspace's pending actions, newest first, from each queue's
        listing index (records whose files did not change are not read again; no Preview
        is read). The rows themselves are made when first asked for; ``check_files``:
        with the staleness check of each row's files by hash (else only what the records
        say: a first frame's quick listing, followed by a checked one)."""
        from redline.workspace.queue.index import collector_paused

        with collector_paused():
            order: list[tuple[float, int, Space, str]] = []
            for space in self.spaces():
                if not space.usable:
                    continue
                for record in self.load(space, again=True):
                    number = _number(record.id)
                    order.append((record.created_at, number, space, record.id))
            order.sort(key=lambda item: (item[0], item[1], item[2].path), reverse=True)
        return Listing(self, [(space, local) for _, _, space, local in order], check_files)

    def reread(self, paths: set[str]) -> None:
        """Forget what was read of the workspaces at ``paths`` (they changed)."""
        with self._lock:
            for path in paths:
                space = self._spaces.get(path)
                if space is not None:
                    space.records = {}
                    space.complete = False
                    space.single_reads = 0

    def queue(self, space: Space) -> WorkspaceQueue | None:
        """The workspace's queue, opened on first use (None when it has no queue folder:
        nothing is created just to read it)."""
        if space.queue is not None:
            return space.queue
        if space.missing or not space.queue_folder.is_dir():
            return None
        from redline.workspace.queue import WorkspaceQueue

        queue = WorkspaceQueue(Path(space.path))
        with self._lock:
            if space.queue is None:
                space.queue = queue
                return queue
        queue.close()
        return space.queue

    def record(self, space: Space, local: str) -> QueueRecord | None:
        """The pending record ``local`` of ``space`` (None when it is gone)."""
        with self._lock:
            found = space.records.get(local)
            if found is not None or space.complete:
                return found
            many = space.single_reads >= SINGLE_READS
            space.single_reads += 1
        queue = self.queue(space)
        if queue is None:
            return None
        if many:
            self.load(space)
            with self._lock:
                return space.records.get(local)
        try:
            record = queue.get(local)
        except Exception as exc:
            log.warning("reading %s in %s failed: %s", local, space.path, exc)
            return None
        if record is not None:
            with self._lock:
                space.records[local] = record
        return record

    def load(self, space: Space, *, again: bool = False) -> list[QueueRecord]:
        """Every pending record of ``space``, read at once from its listing index (kept
        until :meth:`reread`; ``again``: read now whatever is kept)."""
        with self._lock:
            if space.complete and not again:
                return list(space.records.values())
        queue = self.queue(space)
        if queue is None:
            return []
        try:
            records = queue.list()
        except Exception as exc:  # a damaged queue: shown as a problem, the others listed
            space.problem = f"its queue cannot be read: {exc}"
            log.warning("reading %s's queue failed: %s", space.path, exc)
            return []
        with self._lock:
            space.problem = ""
            space.records = {r.id: r for r in records}
            space.complete = True
        return records

    def tops(self) -> list[ListedAction]:
        """Each usable workspace's top pending action, newest first, read from its own
        file (the queue's index orders the others without reading them:
        ``WorkspaceQueue.top``): the first frame over many workspaces, before the whole
        listing. No staleness check; a workspace whose top cannot be told is left out."""
        found: list[tuple[float, int, str, ListedAction]] = []
        for space in self.spaces():
            queue = self.queue(space) if space.usable else None
            if queue is None:
                continue
            try:
                record = queue.top()
            except Exception as exc:  # the whole listing that follows says why
                log.warning("reading %s's top action failed: %s", space.path, exc)
                continue
            if record is not None:
                row = listed_from_record(record, workspace=space.ref, qualified=True)
                found.append((record.created_at, _number(record.id), space.path, row))
        found.sort(key=lambda item: item[:3], reverse=True)
        return [row for *_, row in found]

    def remember_hashes(self) -> None:
        """Keep the files' hashes the staleness checks read for the next listing (each
        queue's memo, ``queue/hashes.py``; never raises)."""
        for space in self.spaces():
            queue = space.queue
            if queue is not None:
                queue.remember_hashes()

    def listed(
        self,
        space: Space,
        local: str,
        hashes: dict[str, str | None] | None = None,
        *,
        check_files: bool = True,
    ) -> ListedAction | None:
        """The listed row of ``local`` in ``space``, with its staleness checked by hash
        now (``hashes``: the listing's cache of the files' hashes; unchanged files are not
        read again either way, see ``queue/hashes.py``)."""
        record = self.record(space, local)
        queue = space.queue
        if record is None or queue is None:
            return None
        changed: list[str] = []
        try:
            if check_files:
                changed = queue.stale_reasons(record, {} if hashes is None else hashes)
        except Exception as exc:
            log.warning("checking %s for staleness failed: %s", record.id, exc)
        return listed_from_record(
            record, workspace=space.ref, qualified=True, stale_reasons=changed
        )

    def preview(self, action_id: str) -> tuple[Space, QueueRecord, Preview | None]:
        """One action's record and Preview (read from its queue's contents now)."""
        space, local = self.route(action_id)
        queue = self.queue(space)
        record = queue.get(local) if queue is not None else None
        if record is None or queue is None:
            raise RouteError(f"{action_id} is no longer pending")
        return space, record, queue.preview(record)

    def session(self, space: Space) -> ReviewSession:
        """The workspace's ReviewSession for a person's decisions (made on first use)."""
        with self._lock:
            if space.session is not None:
                return space.session
        from redline.review.event_stream import EventStream
        from redline.review.session import ReviewSession
        from redline.review.store import PendingActionStore
        from redline.workspace.queue import WorkspaceQueue

        root = Path(space.path)
        # No actions of its own: every one it decides is another process's, by its claim.
        store = PendingActionStore(queue=WorkspaceQueue(root))
        session = ReviewSession(root, store, EventStream("redline-all"))
        session.via = "dashboard"
        with self._lock:
            if space.session is None:
                space.session = session
                return session
        session.close()
        return space.session

    def close(self) -> None:
        with self._lock:
            spaces, self._spaces = list(self._spaces.values()), {}
        for space in spaces:
            self._close(space)

    @staticmethod
    def _close(space: Space) -> None:
        queue, space.queue = space.queue, None
        session, space.session = space.session, None
        if session is not None:
            with contextlib.suppress(Exception):
                session.close()
            store_queue = session.store.queue
            if store_queue is not None:
                store_queue.close()
        if queue is not None:
            queue.close()
        space.records, space.complete = {}, False


def _number(action_id: str) -> int:
    from redline.workspace.queue.records import id_number

    return id_number(action_id) or 0


class Listing(Sequence[ListedAction]):
    """Every workspace's actions newest first; each row made when first asked for.

    A row whose action left its queue since the listing was read is listed as gone
    (its label says so) until the next listing, so indexes never shift under the screen.
    """

    def __init__(
        self, spaces: AllWorkspaces, order: list[tuple[Space, str]], check_files: bool = True
    ) -> None:
        self._spaces = spaces
        self._order = order
        self.check_files = check_files
        self._rows: dict[int, ListedAction] = {}
        self._lock = threading.Lock()
        self._positions: dict[str, int] | None = None
        self._hashes: dict[str, dict[str, str | None]] = {}  # per workspace, this listing's

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> ListedAction: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ListedAction]: ...

    def __getitem__(self, index: int | slice) -> ListedAction | Sequence[ListedAction]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._order)))]
        if index < 0:
            index += len(self._order)
        if not 0 <= index < len(self._order):
            raise IndexError(index)
        with self._lock:
            row = self._rows.get(index)
        if row is not None:
            return row
        space, local = self._order[index]
        hashes: dict[str, str | None] | None = None
        if self.check_files:
            with self._lock:
                hashes = self._hashes.setdefault(space.path, {})
        made = self._spaces.listed(space, local, hashes, check_files=self.check_files)
        if made is None:
            ref = space.ref
            made = ListedAction(
                id=f"{local}@{space.id}",
                label=f"{local} is no longer pending",
                source="",
                local_id=local,
                workspace=ref,
                has_preview=False,
                state="gone",
            )
        with self._lock:
            self._rows[index] = made
        return made

    def __iter__(self) -> Iterator[ListedAction]:
        """Every row, in order (each workspace's records read at once from its index, not
        one file each); actions that left their queue since the listing are skipped."""
        seen: set[str] = set()
        for space, _local in self._order:
            if space.path not in seen:
                seen.add(space.path)
                self._spaces.load(space)
        for index in range(len(self._order)):
            row = self[index]
            if row.state != "gone":
                yield row
        if self.check_files:
            self._spaces.remember_hashes()

    def checked(self) -> Listing:
        """The same listing with each row's files checked for staleness by hash."""
        return Listing(self._spaces, self._order, True)

    def ids(self) -> list[str]:
        """Every row's id, in order, without making the rows."""
        return [f"{local}@{space.id}" for space, local in self._order]

    def index_of(self, action_id: str) -> int | None:
        """Where ``action_id`` is listed (None: not listed)."""
        if self._positions is None:
            self._positions = {key: number for number, key in enumerate(self.ids())}
        return self._positions.get(action_id)

    def workspaces(self) -> list[WorkspaceRef]:
        """The workspaces listed, in order of their newest action."""
        seen: dict[str, WorkspaceRef] = {}
        for space, _local in self._order:
            ref = space.ref
            if ref is not None and ref.id not in seen:
                seen[ref.id] = ref
        return list(seen.values())

    def made(self) -> int:
        """How many rows have been made so far (for tests and the bench)."""
        with self._lock:
            return len(self._rows)


__all__ = [
    "SINGLE_READS",
    "AllWorkspaces",
    "Listing",
    "RouteError",
    "Space",
    "workspace_ident",
]
