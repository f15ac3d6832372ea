"""PendingActionStore: the LIFO stack of changes waiting to be applied or discarded."""

from __future__ import annotations

import collections
import contextlib
import contextvars
import dataclasses
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from redline.lazylog import LazyLogger
from redline.workspace.details import ActionDetails, ActionKind
from redline.workspace.preview import Preview

if TYPE_CHECKING:
    # Imported where used at run time: a hook's push never needs the hunk machinery.
    from pathlib import Path

    from redline.workspace.hunks import Origin
    from redline.workspace.queue import ActionDraft, QueueRecord, Source, WorkspaceQueue
    from redline.workspace.safe_apply import ApplyReceipt

log = LazyLogger(__name__)  # logging is imported when something is logged

ApplyCallback: TypeAlias = Callable[[str], "object | Awaitable[object]"]
RejectCallback: TypeAlias = Callable[[str], "object | Awaitable[object]"]
Clock: TypeAlias = Callable[[], float]

__all__ = [
    "ActionDetails",
    "ActionKind",
    "PendingAction",
    "PendingActionStore",
    "StoreEvent",
    "resolving_action",
]


@dataclass(frozen=True, eq=False)
class PendingAction:
    """A change that waits for ``resolve``. Frozen: nothing changes an action once made.

    ``apply(reason)`` and ``reject(reason)`` may be plain or ``async`` and may return a
    ToolResult, a note-shaped dict or a plain string (``reject`` may also return None).
    ``repreview()`` returns a fresh action computed against the current files.
    The store's ``push`` returns the action stamped with its ``id`` and ``created_at`` (a
    copy, ``dataclasses.replace``); a stale mark or a replacement is another copy again.
    ``details`` are typed for redline's own kinds (``FileChangeDetails``, …) and any JSON
    value for a custom tool's (:mod:`redline.workspace.details`).
    ``origin`` is what a derived action (remaining part, rebased, edited) keeps of the
    model's proposal; None means the action is the proposal as it was made. ``root`` and
    ``applied_text`` are set for actions whose apply is the Preview's safe apply, so a part
    of it can be applied and the rest carried over.
    """

    label: str
    apply: ApplyCallback
    reject: RejectCallback | None = None
    details: ActionDetails = None
    source_tool_name: str = "custom_tool"
    preview: Preview | None = None
    repreview: Callable[[], PendingAction | Awaitable[PendingAction]] | None = None
    id: str = ""
    created_at: float = 0.0
    stale: bool = False
    stale_reason: str = ""
    origin: Origin | None = None
    root: Path | None = None
    applied_text: str = ""
    #: What the action is: a file change (its Preview is all it writes), an ast_edit batch,
    #: an agent's permission request (no preview of its own, or one it writes itself), or
    #: a custom tool's action.
    kind: ActionKind = "custom"
    #: Its apply is the safe apply of its Preview and nothing else: any redline process
    #: may apply it (the queue lists it ``applied_by: "preview"``).
    preview_apply: bool = False
    #: Who pushed it (``source.canonical`` is its badge: ``exec``, ``acp:gemini``). The
    #: store fills in its own source on push; an action that replaces another (edited,
    #: re-based, the rest of a partial apply) keeps the one it replaces.
    source: Source | None = None
    #: An owner action whose process serves requests for some of its hunks: they are
    #: written through safe apply there (or dropped) and the rest is queued as applied by
    #: redline (:meth:`redline.review.session.ReviewSession.serve_owner_requests`).
    owner_parts: bool = False

    @property
    def edited(self) -> bool:
        """A person edited the proposal before it landed."""
        return self.origin is not None and self.origin.edited

    def origin_or_own(self) -> Origin | None:
        """The action's origin, or its own when it is the proposal as made (None: no preview)."""
        if self.origin is not None:
            return self.origin
        if self.preview is None:
            return None
        from redline.workspace.hunks import Origin

        return Origin.of(self.label, self.preview)

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label.strip():
            raise ValueError("a pending action needs a non-empty label")
        if not callable(self.apply):
            raise TypeError("a pending action needs a callable apply(reason)")
        if self.reject is not None and not callable(self.reject):
            raise TypeError("reject must be callable or None")

    def stamped(self, **changes: Any) -> PendingAction:
        """A copy with ``changes`` (``dataclasses.replace``), of this action's own class."""
        return dataclasses.replace(self, **changes)

    def summary(self) -> dict[str, Any]:
        """JSON-able description for events, logs and lists."""
        return {
            "action_id": self.id,
            "label": self.label,
            "source_tool_name": self.source_tool_name,
            "preview": self.preview.summary() if self.preview is not None else None,
            "stale": self.stale,
            "edited": self.edited,
        }


#: The stamped fields an SDK user may still read on the action they gave ``push`` (for one
#: release, with a DeprecationWarning): see :func:`_forward`.
_FORWARDED = frozenset({"id", "created_at", "stale", "stale_reason"})


def _forwarding_getattribute(self: PendingAction, name: str) -> Any:
    if name in _FORWARDED:
        try:
            store, stamped = object.__getattribute__(self, "_redline_pushed")
        except AttributeError:
            return object.__getattribute__(self, name)
        warnings.warn(
            f"reading PendingAction.{name} on the action given to push() is deprecated and "
            "will be an error in the next release: use the action push() returns "
            f"(`action = store.push(action)`); this one forwards to it ({stamped.id})",
            DeprecationWarning,
            stacklevel=2,
        )
        current = store.get(stamped.id)
        return getattr(current if current is not None else stamped, name)
    return object.__getattribute__(self, name)


_FORWARDING: dict[type, type] = {}
_FORWARDING_LOCK = threading.Lock()


def _forward(original: PendingAction, stamped: PendingAction, store: PendingActionStore) -> None:
    """Make ``original`` (the object an SDK user built and pushed) forward ``id``,
    ``created_at``, ``stale`` and ``stale_reason`` to ``stamped`` (as the store holds it now),
    with a DeprecationWarning. Its class becomes a subclass of its own with a
    ``__getattribute__`` hook, so the stamped action — what redline passes around — keeps
    plain attribute access. An action that already had an id is left alone."""
    if original is stamped or object.__getattribute__(original, "id"):
        return
    cls = type(original)
    with _FORWARDING_LOCK:
        forwarding = _FORWARDING.get(cls)
        if forwarding is None:
            forwarding = type(
                cls.__name__,
                (cls,),
                {
                    "__slots__": (),
                    "__getattribute__": _forwarding_getattribute,
                    # Shown as the stamped action it forwards to (and without a warning).
                    "__repr__": lambda self: repr(
                        object.__getattribute__(self, "_redline_pushed")[1]
                    ),
                    "__module__": cls.__module__,
                    "__qualname__": cls.__qualname__,
                },
            )
            _FORWARDING[cls] = forwarding
    object.__setattr__(original, "_redline_pushed", (store, stamped))
    object.__setattr__(original, "__class__", forwarding)


_RESOLVING: contextvars.ContextVar[PendingAction | None] = contextvars.ContextVar(
    "redline_resolving_action", default=None
)


def resolving_action() -> PendingAction | None:
    """The action whose ``apply``/``reject`` runs now (as the store holds it: its id, its
    Preview with real paths), for a callback built before the action was pushed; None
    outside a resolution."""
    return _RESOLVING.get()


@contextlib.contextmanager
def resolving(action: PendingAction) -> Iterator[None]:
    """Inside this block :func:`resolving_action` is ``action`` (``resolve`` runs its
    callbacks so)."""
    token = _RESOLVING.set(action)
    try:
        yield
    finally:
        _RESOLVING.reset(token)


StoreEventKind = Literal["push", "pop", "replace", "clear", "stale", "details"]


@dataclass(frozen=True)
class StoreEvent:
    kind: StoreEventKind
    action: PendingAction | None = None
    previous: PendingAction | None = None
    removed: tuple[PendingAction, ...] = field(default=())
    onto: str = ""  # a replace that re-based the action onto this applied action's id


StoreListener: TypeAlias = Callable[[StoreEvent], None]


class PendingActionStore:
    """A thread-safe LIFO stack of :class:`PendingAction`.

    The agent thread pushes while the UI thread resolves, so every method takes the
    store's lock. Listeners run after the lock is released, one event at a time and in
    event order; one that raises is logged and never breaks the store.

    With ``queue`` (a :class:`~redline.workspace.queue.WorkspaceQueue`) the store holds one
    session's actions *persisted*: ``push`` writes a queue record (and takes its workspace-wide
    ``pa-N`` id) before it returns, ``replace`` and ``mark_stale`` update the record, and an
    action's ``apply``/``reject`` run under the action's cross-process claim and move the
    record to the resolved log when they succeed. ``source`` says who pushed (default: an
    ``agent`` source for this process). Without ``queue`` nothing changes.
    """

    def __init__(
        self,
        clock: Clock = time.time,
        *,
        queue: WorkspaceQueue | None = None,
        source: Source | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._delivering = threading.RLock()
        self._outbox: collections.deque[StoreEvent] = collections.deque()
        self._local = threading.local()
        self._stack: list[PendingAction] = []
        self._listeners: list[StoreListener] = []
        self._next_id = 1
        self._clock = clock
        self.queue = queue
        self.source = source
        # Who a local resolution is logged as: "person", "rule" or "agent" (the session sets it).
        self.resolved_by = "person"
        self.resolved_rule: str | None = None
        # Per action, who resolves it in the resolution running now (see ``credited``).
        self._credits: dict[str, tuple[str, str | None]] = {}
        self._serving: set[str] = set()
        self._replaced: dict[str, str] = {}
        # Held for the whole of one resolution, so an action never runs twice.
        self.resolution_lock = threading.Lock()

    @contextlib.contextmanager
    def credited(self, action_id: str, resolved_by: str, rule: str | None) -> Iterator[None]:
        """Log the resolution of ``action_id`` run inside this block as ``resolved_by``
        (and ``rule``) instead of the store's default: credit is per call, so two
        resolutions never see each other's resolver."""
        with self._lock:
            self._credits[action_id] = (resolved_by, rule)
        try:
            yield
        finally:
            with self._lock:
                self._credits.pop(action_id, None)

    def _credit(self, action_id: str) -> tuple[str, str | None]:
        with self._lock:
            return self._credits.get(action_id, (self.resolved_by, self.resolved_rule))

    @classmethod
    def single(cls, action: PendingAction) -> PendingActionStore:
        """A store (no queue) holding just ``action``, its id kept: for resolving it alone."""
        store = cls()
        store._stack.append(action)
        return store

    # -- stack -------------------------------------------------------------------
    def _real_paths(self, action: PendingAction) -> Preview | None:
        """The action's Preview naming the real paths (``Preview.via`` keeps what was
        asked), so rules, filters and every display see where it really writes."""
        root = action.root or (self.queue.root if self.queue is not None else None)
        if action.preview is None or root is None:
            return action.preview
        from redline.workspace.realpath import canonical_preview

        return canonical_preview(root, action.preview)

    def push(self, action: PendingAction) -> PendingAction:
        """Queue ``action``; returns it stamped (its id, time, source, real paths): the
        action every later call and event names. ``action`` itself is not changed."""
        preview = self._real_paths(action)
        with self._changing():
            source = action.source if action.source is not None else self.source
            ready = action.stamped(preview=preview, source=source)
            if self.queue is not None:
                record = self.queue.push(self._draft(ready))
                ready = self._stamped_from(ready, record.id, record.created_at)
            else:
                ready = self._stamp(ready)
            self._stack.append(ready)
            _forward(action, ready, self)
            self._emit(StoreEvent("push", ready))
            return ready

    def adopt(self, action: PendingAction, record: QueueRecord) -> PendingAction:
        """Take in ``record``, which replaced one of this store's owner actions in another
        process (a person's edit of a hook's action keeps its owner): ``action`` joins the
        stack under the record's id, its callbacks run under the record's claim; returns
        the stamped action."""
        assert self.queue is not None
        with self._changing():
            ready = self._stamped_from(
                action, record.id, record.created_at, record.stale, record.stale_reason
            )
            self._stack.append(ready)
            _forward(action, ready, self)
            self._emit(StoreEvent("push", ready))
            return ready

    def _stamped_from(
        self,
        action: PendingAction,
        action_id: str,
        created_at: float,
        stale: bool = False,
        stale_reason: str = "",
    ) -> PendingAction:
        """``action`` as the queue recorded it: its id and time, its callbacks guarded."""
        apply, reject = self._guard(action_id, action.apply, action.reject)
        return action.stamped(
            id=action_id,
            created_at=created_at,
            stale=stale,
            stale_reason=stale_reason,
            apply=apply,
            reject=reject,
        )

    def peek(self) -> PendingAction | None:
        with self._lock:
            return self._stack[-1] if self._stack else None

    def pop(self) -> PendingAction | None:
        with self._changing():
            if not self._stack:
                return None
            action = self._stack.pop()
            self._forget(action.id)
            self._emit(StoreEvent("pop", action))
            return action

    def remove(self, action_id: str) -> PendingAction | None:
        """Take one action off the stack by id (resolve uses it: the agent may push meanwhile)."""
        with self._changing():
            for index, action in enumerate(self._stack):
                if action.id == action_id:
                    del self._stack[index]
                    self._forget(action_id)
                    self._emit(StoreEvent("pop", action))
                    return action
            return None

    def replace(
        self, action_id: str, new_action: PendingAction, *, onto: str = ""
    ) -> PendingAction:
        """Put ``new_action`` where ``action_id`` was; it gets a new id, the stack keeps its order.

        ``onto`` names the applied action a rebase carried it over (for the event).
        """
        preview = self._real_paths(new_action)
        with self._changing():
            for index, action in enumerate(self._stack):
                if action.id == action_id:
                    source = new_action.source if new_action.source is not None else action.source
                    ready = new_action.stamped(preview=preview, source=source)
                    if self.queue is not None:
                        record = self.queue.replace(
                            action_id, self._draft(ready), resolved_by=self.resolved_by
                        )
                        ready = self._stamped_from(ready, record.id, record.created_at)
                    else:
                        ready = self._stamp(ready)
                    self._stack[index] = ready
                    self._replaced[action_id] = ready.id
                    _forward(new_action, ready, self)
                    self._emit(StoreEvent("replace", ready, previous=action, onto=onto))
                    return ready
            raise KeyError(f"no pending action with id {action_id!r}")

    def _swap(self, action_id: str, new: PendingAction) -> None:
        """Put ``new`` (a copy of ``action_id``'s action) in its place (lock held)."""
        for index, action in enumerate(self._stack):
            if action.id == action_id:
                self._stack[index] = new
                return

    def mark_stale(self, action_id: str, reason: str) -> PendingAction | None:
        """Mark ``action_id`` stale; returns the stale copy now on the stack (or the action
        as it was when already stale, None when there is none)."""
        with self._changing():
            action = self.get(action_id)
            if action is None or action.stale:
                return action  # already stale: its first reason (a conflict, say) stays
            action = action.stamped(stale=True, stale_reason=reason)
            self._swap(action_id, action)
            if self.queue is not None:
                try:
                    self.queue.update(action_id, stale=True, stale_reason=reason)
                except Exception:
                    log.exception("could not mark %s stale in the workspace queue", action_id)
            self._emit(StoreEvent("stale", action))
            return action

    def update_details(self, action_id: str, details: ActionDetails) -> PendingAction | None:
        """Replace ``action_id``'s details (its pusher learned more: its agent ended) on the
        stack and in its queue record; returns the new copy (None: no such action).
        Raises what the queue raises (QueueError, ValueError for details that are not JSON)."""
        from redline.workspace.details import details_to_json

        with self._changing():
            action = self.get(action_id)
            if action is None:
                return None
            action = action.stamped(details=details)
            self._swap(action_id, action)
            if self.queue is not None:
                self.queue.update_details(action_id, details_to_json(details))
            self._emit(StoreEvent("details", action))
            return action

    def replaced_by(self, action_id: str) -> str | None:
        """The id of the action that replaced ``action_id`` here (following a chain), if any."""
        with self._lock:
            seen: set[str] = set()
            current = self._replaced.get(action_id)
            while current is not None and current in self._replaced and current not in seen:
                seen.add(current)
                current = self._replaced[current]
            return current

    def get(self, action_id: str) -> PendingAction | None:
        with self._lock:
            for action in self._stack:
                if action.id == action_id:
                    return action
            return None

    def clear(self) -> tuple[PendingAction, ...]:
        with self._changing():
            removed = tuple(reversed(self._stack))
            self._stack.clear()
            for action in removed:
                self._forget(action.id)
            self._emit(StoreEvent("clear", removed=removed))
            return removed

    def snapshot(self) -> tuple[PendingAction, ...]:
        """Every pending action, top first."""
        with self._lock:
            return tuple(reversed(self._stack))

    @property
    def has_pending(self) -> bool:
        with self._lock:
            return bool(self._stack)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._stack)

    def __len__(self) -> int:
        return self.count

    # -- listeners ---------------------------------------------------------------
    def subscribe(self, listener: StoreListener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    @contextlib.contextmanager
    def _changing(self) -> Iterator[None]:
        """Hold the store's lock for a change; its events reach listeners after the lock is
        released, so a listener may wait on another thread that reads or changes the store."""
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        try:
            with self._lock:
                yield
        finally:
            self._local.depth = depth
            if depth == 0:
                self._deliver()

    def _emit(self, event: StoreEvent) -> None:
        """Queue ``event`` (called with the lock held); ``_changing`` delivers it."""
        self._outbox.append(event)

    def _deliver(self) -> None:
        # One thread delivers at a time, in the order the changes happened, and nobody waits
        # for it: a thread that finds another delivering leaves its events to that one, which
        # looks at the outbox once more after it lets go. A change made by a listener (the
        # same thread) is delivered before that listener's change returns.
        while self._delivering.acquire(blocking=False):
            try:
                while True:
                    with self._lock:
                        if not self._outbox:
                            break
                        event = self._outbox.popleft()
                        listeners = list(self._listeners)
                    for listener in listeners:
                        try:
                            listener(event)
                        except Exception:
                            log.exception(
                                "pending-action listener %r failed on %s", listener, event.kind
                            )
            finally:
                self._delivering.release()
            with self._lock:
                if not self._outbox:
                    return

    def _stamp(self, action: PendingAction) -> PendingAction:
        action_id = f"pa-{self._next_id}"
        self._next_id += 1
        return action.stamped(id=action_id, created_at=self._clock(), stale=False, stale_reason="")

    # -- the workspace queue (only with ``queue``) ----------------------------------------
    def _draft(self, action: PendingAction) -> ActionDraft:
        from redline.workspace.details import details_to_json
        from redline.workspace.queue import ActionDraft, Source

        assert self.queue is not None
        if self.source is None:
            self.source = Source.current("agent")
        # A Preview without code of its own is applied by whichever process resolves it.
        applied_by = "preview" if action.preview is not None and action.preview_apply else "owner"
        details: Any = details_to_json(action.details)
        try:
            from redline.workspace.queue.records import canonical

            canonical(details)
        except (TypeError, ValueError):
            details = repr(details)
        return ActionDraft(
            label=action.label,
            source=action.source if action.source is not None else self.source,
            source_tool_name=action.source_tool_name,
            preview=action.preview,
            details=details,
            applied_by=applied_by,
            stale=action.stale,
            stale_reason=action.stale_reason,
            origin=action.origin,
            owner_serves=("parts",) if action.owner_parts and action.preview is not None else (),
            kind=action.kind,
        )

    def _guard(
        self, action_id: str, apply: ApplyCallback, reject: RejectCallback | None
    ) -> tuple[ApplyCallback, RejectCallback]:
        """``apply`` and ``reject`` of ``action_id`` run under its queue claim, logging the
        outcome on success (the stamped action's callbacks)."""
        queue = self.queue
        assert queue is not None

        async def run(decision: str, callback: Any, reason: str) -> object:
            import inspect  # here, not at import: a hook call queues its action first

            from redline.review.result import coerce_result
            from redline.workspace.queue import Resolution

            with queue.claim(action_id, wait=2.0) as claim:
                if decision == "apply" and claim.record.applied_by == "preview":
                    claim.mark_applying()
                value: object = None
                try:
                    if callback is not None:
                        value = callback(reason)
                        if inspect.isawaitable(value):
                            value = await value
                    result = coerce_result(value)
                except BaseException:
                    claim.back_to_pending()
                    raise
                if result is not None and result.is_error:
                    claim.back_to_pending()
                    return value
                if action_id not in self._serving:
                    resolved_by, rule = self._credit(action_id)
                    claim.finish(
                        Resolution(
                            action_id,
                            decision,
                            reason,
                            resolved_by,
                            rule,
                            result_text=result.text if result is not None else "",
                        )
                    )
                return value

        async def guarded_apply(reason: str) -> object:
            return await run("apply", apply, reason)

        async def guarded_reject(reason: str) -> object:
            return await run("discard", reject, reason)

        return guarded_apply, guarded_reject

    def _forget(self, action_id: str) -> None:
        """The action left this store: make sure it left the workspace queue too."""
        if self.queue is None or action_id in self._serving:
            return
        from redline.workspace.queue import ActionGone, QueueError, Resolution

        try:
            with self.queue.claim(action_id, wait=2.0) as claim:
                by = self._credit(action_id)[0]
                claim.finish(Resolution(action_id, "removed", resolved_by=by))
        except ActionGone:
            pass  # already resolved (the usual case: its guarded callback logged it)
        except QueueError:
            log.exception("could not remove %s from the workspace queue", action_id)

    def write_part(self, pending: PendingAction, preview: Preview) -> ApplyReceipt:
        """Write ``preview`` (all or part of ``pending``'s) through safe apply."""
        from redline.workspace.safe_apply import apply_preview

        assert pending.root is not None
        return apply_preview(
            pending.root,
            preview,
            label=pending.label,
            source_tool_name=pending.source_tool_name,
            action_id=pending.id or None,
        )

    @contextlib.contextmanager
    def serving(self, action_id: str) -> Iterator[None]:
        """Inside this block ``action_id`` is being resolved for its owner request: its
        callbacks log nothing and removing it leaves its queue record to the caller."""
        with self._lock:
            self._serving.add(action_id)
        try:
            yield
        finally:
            with self._lock:
                self._serving.discard(action_id)
