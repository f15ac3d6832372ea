"""One review source: the listed action every list shows, and the typed interface the
dashboard's one screen (``tui/screens/inbox.py``) reviews through.

Three shapes an action has, each made from the one before by one function:

1. the ``PendingAction`` a driver proposes (``review/store.py``);
2. the queue record it is stored as (``workspace/queue``: ``QueueRecord``, made from the
   action's draft by ``WorkspaceQueue.push``); the team queue mirrors the record as a row;
3. the :class:`ListedAction` every list shows, made from the record by
   :func:`listed_from_record` (from a team row by ``teamqueue.source.listed_from_row``).

A :class:`ReviewSource` is where listed actions come from and where a person's decisions
go. It declares what it can do (:class:`SourceCapabilities`: per capability, available or
not and why not), so the screen greys out the keys a source cannot serve and says the
reason when one is pressed; it never probes a source with ``getattr``. Backends:

- one workspace (``review/workspace_source.py``: a ``ReviewSession`` over the workspace
  queue; decisions through ``ReviewSession.decide``);
- the team queue (``teamqueue/source.py``: decisions bind the view the reviewer read);
- every workspace on the machine (issue 45's ``redline --all``).

Listing is lazy: :meth:`ReviewSource.listed` reads summaries only (the queue's index, the
team queue's rows) and never a Preview; :meth:`ReviewSource.view` loads one action's
preview when the screen shows it. Every call may block (disk, network): the dashboard
makes them from worker threads, except :meth:`ReviewSource.listed` of a local source,
which reads the queue's index. Nothing here imports Textual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    from redline.jsontypes import JsonValue
    from redline.review.session import Decision
    from redline.review.store import PendingAction
    from redline.workspace.preview import Preview
    from redline.workspace.queue import QueueRecord, WorkspaceQueue

#: The capabilities a source declares, in the order help and the footer name them.
CapabilityName: TypeAlias = Literal[
    "whole", "parts", "edit", "repreview", "undo", "marks", "rules", "checks"
]
CAPABILITY_NAMES: tuple[CapabilityName, ...] = (
    "whole",
    "parts",
    "edit",
    "repreview",
    "undo",
    "marks",
    "rules",
    "checks",
)

#: What a listed action is, as ``PendingAction.kind`` says ("" when the source cannot tell).
ListedKind: TypeAlias = Literal["file_change", "ast_edit", "permission", "custom", ""]


@dataclass(frozen=True, slots=True)
class Capability:
    """One thing a source can or cannot do; ``reason`` says why not (shown to the person)."""

    available: bool = True
    reason: str = ""

    @classmethod
    def no(cls, reason: str) -> Capability:
        return cls(False, reason)


YES = Capability()


@dataclass(frozen=True, slots=True)
class SourceCapabilities:
    """What a source offers, declared once (and narrowed per action by
    :meth:`ReviewSource.allows`).

    ``whole``: apply or discard an action as a whole; ``parts``: some of its hunks;
    ``edit``: a person's edit before it lands; ``repreview``: a stale action proposed again
    over the current files; ``undo``: the newest apply reverted; ``marks``: several actions
    marked and decided with one key; ``rules``: session rules (``a``); ``checks``: the
    configured checks run on an action.
    """

    whole: Capability = YES
    parts: Capability = YES
    edit: Capability = YES
    repreview: Capability = YES
    undo: Capability = YES
    marks: Capability = YES
    rules: Capability = YES
    checks: Capability = YES

    def get(self, name: CapabilityName) -> Capability:
        capability: Capability = getattr(self, name)
        return capability

    def refusal(self, name: CapabilityName) -> str:
        """Why ``name`` cannot be done ("" when it can)."""
        capability = self.get(name)
        return "" if capability.available else capability.reason or f"{name} is not available"

    def narrowed(self, **why_not: str) -> SourceCapabilities:
        """These capabilities with each named one unavailable for the reason given (an
        empty reason leaves that one as it is)."""
        changes = {name: Capability.no(reason) for name, reason in why_not.items() if reason}
        if not changes:
            return self
        from dataclasses import replace

        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class WorkspaceRef:
    """The workspace an action belongs to: the team queue's id (``g1a2b3c4d5e6``, from
    ``teamqueue.settings.workspace_id``) and its folder."""

    id: str
    path: str


@dataclass(frozen=True, slots=True)
class ListedAction:
    """One pending action as every list shows it: the row, never the Preview.

    ``id`` is what the source decides by: ``pa-N`` in one workspace, ``pa-N@WSID`` where
    a source spans workspaces (then ``local_id`` is ``pa-N``). ``source`` is
    ``Source.canonical`` (``exec``, ``acp:gemini``, ``mcp:cursor``): the badge, the filter
    and the rules use it. ``applied_by``: ``preview`` (the queue applies it by safe apply)
    or ``owner`` (the process that queued it applies it: a hook's held call); ``owner`` is
    who queued it (``pid 123``, a session id). ``state`` is ``pending`` or, in the team
    queue, ``conflict`` / ``failed`` / ``refused`` (decide again), said in ``note``.
    ``created_at`` is seconds since the epoch (None: unknown).
    """

    id: str
    label: str
    source: str
    local_id: str = ""
    kind: ListedKind = ""
    source_tool_name: str = ""
    files: tuple[str, ...] = ()
    added: int = 0
    removed: int = 0
    created_at: float | None = None
    workspace: WorkspaceRef | None = None
    applied_by: str = "preview"
    owner: str = ""
    stale: bool = False
    stale_reason: str = ""
    state: str = "pending"
    note: str = ""
    has_preview: bool = True
    #: The record's free-form details (JSON), shown by the preview of actions without files.
    details: JsonValue = field(default=None, compare=False)

    @property
    def conflict(self) -> bool:
        """Decided, but its workspace could not carry the decision out: decide again."""
        return self.state in ("conflict", "failed", "refused")

    @property
    def facts(self) -> tuple[tuple[str, ...], int, int]:
        """The row's files and +/- lines (what the stack shows without the Preview)."""
        return self.files, self.added, self.removed


@dataclass(frozen=True, slots=True)
class ActionView:
    """One action as the screen shows it, loaded by :meth:`ReviewSource.view`.

    A local source gives the ``preview`` (every file's old and new text); the team queue
    keeps no file contents and gives the unified ``diff`` its workspace mirrored, with
    ``view_hash``, the hash of exactly what the reviewer is shown: a decision made on this
    view carries it, and a row changed since is refused. ``hunks`` are the ``PATH#N``
    parts a decision may name. ``error`` says why it could not be read (then nothing else).
    """

    action: ListedAction
    preview: Preview | None = None
    diff: str | None = None
    view_hash: str = ""
    hunks: tuple[str, ...] = ()
    error: str = ""


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """How a call into a source ended: ``ok``, and the text to show.

    ``lost``: another reviewer decided the action first (``text`` names who): the screen
    selects nothing rather than sliding onto the next action.
    """

    ok: bool
    text: str
    lost: bool = False


#: Hands a fresh listing to the screen (called on the watching thread).
RowsCallback = Callable[[Sequence[ListedAction]], object]
#: ``(online, text)``: the source was reached, or lost (``text`` says why).
StatusCallback = Callable[[bool, str], object]


class ReviewSource(Protocol):
    """Where the dashboard's screen lists actions and sends a person's decisions.

    Implementations: ``review.workspace_source.WorkspaceSource`` and
    ``teamqueue.source.TeamSource``. Every method may block; see the module docstring.
    """

    @property
    def title(self) -> str:
        """What the screen's top line calls this source (``team queue``, a folder)."""
        ...

    @property
    def capabilities(self) -> SourceCapabilities:
        """What this source can do at all."""
        ...

    @property
    def spans_workspaces(self) -> bool:
        """Whether its actions come from several workspaces (rows then show a workspace
        badge and ``f`` steps through workspaces)."""
        ...

    def listed(self) -> Sequence[ListedAction]:
        """Every pending action, newest first, from summaries only (no Preview read)."""
        ...

    def allows(self, action: ListedAction) -> SourceCapabilities:
        """What can be done to ``action`` now: :attr:`capabilities` narrowed by what the
        action itself allows (an owner action's parts, an orphaned one's apply)."""
        ...

    def view(self, action_id: str) -> ActionView:
        """Load one action's preview (or mirrored diff) to show it."""
        ...

    def decide(
        self, action_id: str, decision: Decision, view: ActionView | None = None
    ) -> SourceOutcome:
        """Apply or discard ``action_id`` (``decision.only``: some of its hunks) through
        the source's one decision path; ``view`` is what the person read (a source that
        binds a decision to it refuses one made on nothing shown)."""
        ...

    def gone_text(self, action_id: str) -> str:
        """How ``action_id``, no longer listed, left: ``pa-3 was discarded by … (reason:
        …).`` (may block: the team queue asks the database)."""
        ...

    def edit(self, action_id: str, path: str, text: str) -> SourceOutcome:
        """Replace ``path``'s proposed text with a person's ``text``."""
        ...

    def repreview(self, action_id: str) -> SourceOutcome:
        """Propose a stale action again over the current files."""
        ...

    def undo(self, workspace: WorkspaceRef | None = None) -> SourceOutcome:
        """Undo the newest apply (in ``workspace``, for a source spanning several)."""
        ...

    def undo_target(self, workspace: WorkspaceRef | None = None) -> str:
        """What :meth:`undo` would undo, in words for the person to confirm (the apply
        and, for a source spanning workspaces, the workspace); "" when there is nothing to
        undo (pressing ``u`` then says why without asking)."""
        ...

    def conversation_target(self, action_id: str) -> tuple[WorkspaceQueue, str] | None:
        """Where ``action_id``'s review conversation (comments, viewed marks; issue 47) is
        kept: the queue of its workspace and its local id there; None when this source
        keeps none (the team queue) or the action's workspace has no usable queue."""
        ...

    def watch(
        self, stop: threading.Event, on_rows: RowsCallback, on_status: StatusCallback
    ) -> None:
        """Until ``stop`` is set: hand every fresh listing to ``on_rows`` (one at once,
        then one per change) and every change of reachability to ``on_status``. Blocks:
        the dashboard runs it on a worker thread of its own."""
        ...

    def close(self) -> None:
        """Release what the source holds (connections); called once the screen is gone."""
        ...


def record_kind(record: QueueRecord) -> ListedKind:
    """What a queue record is, as its action's ``kind`` says (until records store the
    kind itself): an ``ast_edit`` batch, a file change, a held permission, a custom one."""
    return record.kind


def record_files(record: QueueRecord) -> tuple[str, ...]:
    """The files a record's Preview touches, as its summary lists them (a rename by its new
    path), without reading the Preview's texts."""
    files: list[str] = []
    preview = record.preview
    changes = preview.get("changes") if isinstance(preview, dict) else None
    for change in changes if isinstance(changes, list) else ():
        if isinstance(change, dict):
            path = change.get("new_path") if change.get("kind") == "rename" else change.get("path")
            if isinstance(path, str):
                files.append(path)
    return tuple(files) if files or not record.files else tuple(record.files)


def listed_from_record(
    record: QueueRecord,
    *,
    workspace: WorkspaceRef | None = None,
    qualified: bool = False,
    stale_reasons: Sequence[str] = (),
) -> ListedAction:
    """The listed action of a queue record: the one way a record becomes a row.

    ``workspace``: the workspace the record's queue belongs to; ``qualified``: list it by
    its cross-workspace id ``pa-N@WSID`` (a source spanning workspaces); ``stale_reasons``:
    what the staleness check found changed on disk since the record was written (an
    orphaned owner action is stale for the reason that it can only be discarded).
    """
    from redline.workspace.queue import ORPHANED_REASON

    orphaned = record.orphaned()
    action_id = record.id
    if qualified and workspace is not None:
        action_id = f"{record.id}@{workspace.id}"
    source = record.source
    owner = source.session_id or (f"pid {source.pid}" if source.pid else "")
    return ListedAction(
        id=action_id,
        label=record.label,
        source=source.canonical,
        local_id=record.id,
        kind=record_kind(record),
        source_tool_name=record.source_tool_name,
        files=record_files(record),
        added=record.added,
        removed=record.removed,
        created_at=record.created_at,
        workspace=workspace,
        applied_by=record.applied_by,
        owner=owner,
        stale=record.stale or orphaned or bool(stale_reasons),
        stale_reason=ORPHANED_REASON
        if orphaned
        else record.stale_reason or "; ".join(stale_reasons),
        has_preview=record.has_preview,
        details=record.details,
    )


def listed_from_action(
    action: PendingAction,
    *,
    workspace: WorkspaceRef | None = None,
) -> ListedAction:
    """The listed action of a session's own action that no queue lists (a session without
    a workspace queue, or one pushed a moment ago): the row made from the action itself,
    as :func:`listed_from_record` makes it from the record the queue would write. Its
    files and +/- lines come from its Preview's summary (a rename by its new path)."""
    from redline.workspace.details import details_to_json

    files: tuple[str, ...] = ()
    added = removed = 0
    preview = action.preview
    if preview is not None:
        summary = preview.summary()
        files = tuple(str(entry["path"]) for entry in summary["files"])
        added, removed = int(summary["added"]), int(summary["removed"])
    source = action.source
    kind: ListedKind = action.kind if action.kind in _KINDS else "custom"
    return ListedAction(
        id=action.id,
        label=action.label,
        source=source.canonical if source is not None else "agent",
        local_id=action.id,
        kind=kind,
        source_tool_name=action.source_tool_name,
        files=files,
        added=added,
        removed=removed,
        created_at=action.created_at or None,
        workspace=workspace,
        # As the store would queue it: the queue applies a Preview's safe apply itself.
        applied_by="preview" if preview is not None and action.preview_apply else "owner",
        owner=(source.session_id or "") if source is not None else "",
        stale=action.stale,
        stale_reason=action.stale_reason,
        has_preview=preview is not None,
        details=details_to_json(action.details),
    )


_KINDS = frozenset({"file_change", "ast_edit", "permission", "custom"})


def epoch(iso: str | None) -> float | None:
    """Seconds since the epoch of an ISO-8601 time (None when absent or unreadable)."""
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


__all__ = [
    "CAPABILITY_NAMES",
    "YES",
    "ActionView",
    "Capability",
    "CapabilityName",
    "ListedAction",
    "ListedKind",
    "ReviewSource",
    "RowsCallback",
    "SourceCapabilities",
    "SourceOutcome",
    "StatusCallback",
    "WorkspaceRef",
    "epoch",
    "listed_from_action",
    "listed_from_record",
    "record_files",
    "record_kind",
]
