"""ReviewSession: the one place where a session's actions are proposed and decided.

Every driver owns one ReviewSession over its :class:`~redline.review.store.PendingActionStore`
and translates its protocol into these calls and nothing more:

* :meth:`ReviewSession.propose` pushes an action (the store records it in the workspace
  queue, events go out);
* :meth:`ReviewSession.resolve` decides one — the model's ``resolve`` tool call, a dashboard
  key, an ``apply-all`` resolver and a review rule all run it: it calls
  :func:`redline.review.resolve.resolve_pending` (LIFO for the model, any action by id for a
  person, hunks, the not-newest and stale checks), emits the one typed event the
  resolution is logged as, and re-checks the other actions for staleness;
* :meth:`ReviewSession.undo` reverts the newest apply through the journal;
* :meth:`ReviewSession.follow` follows the workspace queue through the process's
  :class:`~redline.review.follower.QueueFollower`: another process's decision on one of
  this session's actions is taken off the stack and reported (``on_remote``), and requests
  to run this session's own apply/reject code (owner actions) are served here.

Threads: the driver's event loop owns the session's resolutions (``submit`` hands the
follower's work to it); ``store.resolution_lock`` is held for the whole of one resolution,
so a remote decision is never mistaken for a local one; ``_lock`` guards the session's own
small state (follow flags, re-check requests, reported undos).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from redline.hooktrace import mark
from redline.lazylog import LazyLogger
from redline.review.result import ToolResult
from redline.review.store import PendingAction, PendingActionStore, StoreEvent

# The event classes, the resolution machinery (hunks, rebase, merge3), the queue follower
# and asyncio are imported where they are used, not here: a process that only proposes and
# waits (``redline hook``) queues its action before it loads them (see
# :meth:`ReviewSession.prepare_to_serve`; docs/performance.md, "`redline hook`").
if TYPE_CHECKING:
    from redline.review.decision import Capabilities, Decision, PartsServed
    from redline.review.event_stream import EventStream
    from redline.review.events import ResolvedBy
    from redline.review.provenance import GitBatch
    from redline.review.resolve import EditOutcome, ResolveOutcome
    from redline.workspace.queue import Resolution as QueueResolution

log = LazyLogger(__name__)  # logging is imported when something is logged

Verb = Literal["apply", "discard"]  # as redline.review.decision.Verb
Submit = Callable[[Coroutine[Any, Any, None]], object]
RemoteHook = Callable[[PendingAction, "QueueResolution | None"], None]
UndoHook = Callable[[str, str, list[str], str], None]


PartsHook = Callable[[PendingAction, "PartsServed"], None]


if TYPE_CHECKING:
    #: What :meth:`ReviewSession.resolve` returns: how the decision ended, and the text
    #: the model reads.
    Resolution = ResolveOutcome


def __getattr__(name: str) -> Any:
    # ``Resolution`` without importing the resolution machinery with this module.
    if name == "Resolution":
        from redline.review.resolve import ResolveOutcome

        return ResolveOutcome
    # The decision's values are made where first used (redline.review.decision).
    if name in ("Capabilities", "Decision", "PartsServed"):
        from redline.review import decision

        return getattr(decision, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` cancels the task (asyncio is not imported to ask: a resolution that
    never waits, a rule's at a hook's push, runs without an event loop)."""
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(exc, asyncio.CancelledError)


class ReviewSession:
    """One session's pending actions and every way they are decided (see the module doc)."""

    def __init__(self, root: Path, store: PendingActionStore, events: EventStream) -> None:
        self.root = root
        self.store = store
        self.events = events
        #: Another process decided (or removed) one of this session's actions; called on the
        #: driver's loop after the action left the stack and before its event goes out.
        self.on_remote: RemoteHook | None = None
        #: An action removed elsewhere without a decision (split, replaced, dropped); the
        #: default says so in a notice.
        self.on_removed_elsewhere: RemoteHook | None = None
        #: An apply of this session's action was undone (here or in another process).
        self.on_undone: UndoHook | None = None
        #: An owner action of this session was resolved in parts for another process
        #: (only actions pushed with ``owner_parts``); called before the action leaves.
        self.on_parts: PartsHook | None = None
        #: The redline surface this session's decisions are made through (the decisions
        #: log's ``via``): ``sdk`` unless its driver says (``hook``, ``exec``, ``dashboard``).
        self.via = "sdk"
        #: The model behind this session's edits, when its driver knows it (``Assisted-by``).
        self.model: str | None = None
        self._lock = threading.Lock()
        self._recheck_all = False
        self._recheck_paths: set[str] = set()
        self._submit: Submit | None = None
        self._syncing = False
        self._sync_again = False
        self._closed = False
        self._stops: list[Callable[[], None]] = []
        # This session's actions (id -> label) and the undos of them already reported.
        self._pushed: dict[str, str] = {}
        # The resolutions this process logged for owner requests, until heard (not read
        # back from the resolved log: they are what was just written there).
        self._served: dict[str, QueueResolution] = {}
        self._undos_reported: set[str] = set()
        self._undo_lock = threading.Lock()
        self._stops.append(store.subscribe(self._on_store_event))

    # -- propose ------------------------------------------------------------------------
    def propose(self, action: PendingAction) -> PendingAction:
        """Queue ``action`` for review (it gets its ``pa-N`` id); returns it."""
        return self.store.push(action)

    # -- decide -------------------------------------------------------------------------
    async def resolve(self, action_id: str | None, decision: Decision) -> Resolution:
        """Apply or discard ``action_id`` (None: the top, the model's semantics).

        The one resolution path: emits the resolution's event and, after an apply, marks
        the other actions whose files changed as stale.
        """
        from redline.review.resolve import ResolveOutcome, resolution_event, resolve_pending

        try:
            outcome = await resolve_pending(
                self.store,
                decision.verb,
                decision.reason,
                action_id,
                decision.only,
                # The queue's resolved log credits a rule or the model for this one call;
                # anyone else keeps the store's default (a person).
                resolved_by=decision.by if decision.by in ("rule", "agent") else None,
                rule=decision.rule,
            )
        except BaseException as exc:  # an action's callback that escaped its isolation
            if _cancelled(exc):
                raise
            log.debug("resolving failed", exc_info=True)
            detail = str(exc)
            cause = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
            return ResolveOutcome(
                "failed", f"Resolving failed: {cause}. The action is still pending."
            )
        if not outcome.is_error:
            outcome = self._provenance(
                outcome, decision.by, decision.batch, rule=decision.rule, via=decision.via
            )
        if self.events.heard:
            event = resolution_event(outcome, decision.by, rule=decision.rule)
            if event is not None:
                self.events.emit(event)
        if outcome.is_error:
            self.check_staleness(set())  # the checks that waited for this resolution
        else:
            # What the apply wrote can make the other actions stale: check them by hash now,
            # with any check that waited for this resolution.
            self.check_staleness(None if decision.verb == "apply" else set())
        return outcome

    def _provenance(
        self,
        outcome: ResolveOutcome,
        by: str,
        batch: GitBatch | None = None,
        *,
        rule: str | None = None,
        via: str | None = None,
        reviewer: str | None = None,
    ) -> ResolveOutcome:
        """Log the decision and do ``[git] on_apply``; its notes join the outcome's text.
        ``reviewer``: who decided when not this machine's user (a team queue reviewer)."""
        from dataclasses import replace

        from redline.review.provenance import Decided, assisted_facts, record

        facts = outcome.action
        if facts is None or outcome.verb is None:
            return outcome
        source = self.store.source.canonical if self.store.source is not None else "sdk"
        helper, why, imported = assisted_facts(source, {"model": self.model} if self.model else {})
        surface = via or ("model" if by == "agent" else self.via)
        notes = record(
            self.root,
            Decided(
                facts.action_id,
                facts.label,
                source,
                outcome.verb,
                outcome.reason,
                facts.edited,
                by,
                outcome.written,
                reviewer=reviewer,
                via=surface,
                rule=rule,
                parts=outcome.parts,
                assisted_by=helper,
                assisted_why=why,
                imported_assisted=imported,
            ),
            batch=batch,
        )
        return replace(outcome, text="\n".join([outcome.text, *notes])) if notes else outcome

    async def decide(self, action_id: str, decision: Decision) -> Resolution:
        """Decide any pending action of the workspace, whoever queued it: this session's
        own through :meth:`resolve`, another process's through its queue claim
        (:func:`redline.review.decide.decide_queued`), with the same ``only`` parts, reason,
        batch and texts."""
        queue = self.store.queue
        if queue is None or self._is_mine(action_id):
            return await self.resolve(action_id, decision)
        from redline.review.decide import decide_queued

        return await decide_queued(
            queue,
            action_id,
            decision.verb,
            decision.reason,
            only=decision.only,
            by=decision.by,
            rule=decision.rule,
            batch=decision.batch,
            via=decision.via or "sdk",
        )

    def _is_mine(self, action_id: str) -> bool:
        return (
            self.store.get(action_id) is not None or self.store.replaced_by(action_id) is not None
        )

    async def edit(self, action_id: str, path: str, text: str) -> EditOutcome:
        """Replace ``path``'s proposed content in ``action_id`` with a person's ``text``
        (this session's action, or another process's through its queue claim)."""
        from redline.review.resolve import edit_pending

        queue = self.store.queue
        if queue is not None and not self._is_mine(action_id):
            from redline.review.decide import edit_queued

            return await edit_queued(queue, action_id, path, text)
        return await edit_pending(self.store, action_id, path, text)

    async def repreview(self, action_id: str) -> ToolResult:
        """Propose a stale action again against the files as they are now, whoever queued
        it: the action's own re-preview when it has one, else its change merged three ways
        onto the current text (another process's through its queue claim)."""
        from redline.review.decide import repreview_any

        queue = self.store.queue
        action = self.store.get(action_id)
        if action is None and queue is not None:
            return repreview_any(queue, action_id)
        if action is None:
            return ToolResult.error(f"No pending action {action_id}.")
        if action.repreview is not None:
            import inspect

            fresh = action.repreview()
            if inspect.isawaitable(fresh):
                fresh = await fresh
            if not isinstance(fresh, PendingAction):
                return ToolResult.error(f"Re-preview of {action.label} did not return an action.")
            try:
                fresh = self.store.replace(action_id, fresh)
            except KeyError:
                return ToolResult.error(
                    f"{action_id} was resolved meanwhile; nothing was replaced."
                )
            return ToolResult.text_result(f"Re-previewed {action_id} as {fresh.id}: {fresh.label}")
        if not action.stale:
            return ToolResult.error(f"{action_id} is not stale; nothing to do")
        if not action.preview_apply or action.preview is None:
            return ToolResult.error(f"{action.label} ({action_id}) cannot be re-previewed.")
        from redline.review.rebase import rebase_onto_files

        with self.store.resolution_lock:
            carried = rebase_onto_files(
                self.store,
                self.root,
                set(action.preview.paths),
                onto="a change made since the preview",
                only=action_id,
            )
        for item in carried:
            if item.old_id == action_id and item.new_id:
                return ToolResult.text_result(f"Re-previewed {action_id} as {item.new_id}.")
            if item.old_id == action_id:
                return ToolResult.error(f"{action_id} cannot be re-previewed: {item.stale_reason}")
        return ToolResult.error(
            f"{action_id} cannot be re-previewed: its files changed in a way "
            "a merge cannot carry over; discard it"
        )

    def undo(self) -> ToolResult:
        """Undo the newest applied action through the journal; ``on_undone`` is told."""
        from redline.review.events import Notice
        from redline.review.git_undo import undo
        from redline.workspace.journal import UndoError

        with self._undo_lock:  # the journal follower must not report this undo again
            try:
                done = undo(self.root, None)
            except UndoError as exc:
                self.events.emit(Notice(message=str(exc)))
                return ToolResult.error(str(exc))
            receipt = done.receipt
            self._undos_reported.add(receipt.entry_id)
        files = list(receipt.files)
        text = "\n".join(
            [f"Undid {receipt.label or 'the last apply'} ({', '.join(files)}).", *done.notes]
        )
        self._undone(receipt.entry_id, receipt.label, files, text, receipt.action_id)
        self._rebase_after_undo(set(files), receipt.label)
        self.check_staleness()
        return ToolResult.text_result(text, details={"entry_id": receipt.entry_id, "files": files})

    def _rebase_after_undo(self, files: set[str], label: str) -> None:
        """Carry the pending actions over the files the undo restored (the rest of an
        undone partial apply proposes its hunks against the restored text again)."""
        from redline.review.events import Notice
        from redline.review.rebase import rebase_onto_files

        onto = f"the undo of {label or 'the last apply'}"
        with self.store.resolution_lock:
            try:
                for carried in rebase_onto_files(self.store, self.root, files, onto=onto):
                    self.events.emit(Notice(message=carried.text))
            except Exception:  # the undo stands; the actions stay stale and say why
                log.exception("carrying pending actions over an undo failed")

    def _undone(
        self, entry_id: str, label: str, files: list[str], text: str, action_id: str | None
    ) -> None:
        from redline.review.events import Undone

        if self.on_undone is not None:
            self.on_undone(entry_id, label, files, text)
        self.events.emit(Undone(entry_id=entry_id, label=label, files=files, action_id=action_id))

    # -- staleness ----------------------------------------------------------------------
    def check_staleness(self, paths: set[str] | None = None) -> list[str]:
        """Mark pending previews whose files changed; returns the ids marked stale.

        ``paths`` (workspace-relative) limits the check to actions touching them; None
        checks every action. While a resolution is writing files the check is left to it
        (it runs when the resolution ends): redline's own writes are never outside edits.
        """
        with self._lock:
            if paths is None:
                self._recheck_all = True
            else:
                self._recheck_paths |= paths
        lock = self.store.resolution_lock
        marked: list[str] = []
        while True:
            if not lock.acquire(blocking=False):
                # Whoever holds the lock checks these paths when it lets go.
                return marked
            try:
                with self._lock:
                    check_all, todo = self._recheck_all, self._recheck_paths
                    self._recheck_all, self._recheck_paths = False, set()
                if check_all or todo:
                    marked += self._mark_stale(None if check_all else todo)
            finally:
                lock.release()
            with self._lock:
                if not self._recheck_all and not self._recheck_paths:
                    return marked

    def _mark_stale(self, paths: set[str] | None) -> list[str]:
        from redline.workspace.safe_apply import check_preview

        marked = []
        for action in self.store.snapshot():
            preview = action.preview
            if preview is None or (paths is not None and not paths & set(preview.paths)):
                continue
            reasons = check_preview(self.root, preview)
            if reasons and self.store.mark_stale(action.id, "; ".join(reasons)) is not None:
                marked.append(action.id)
        return marked

    # -- following the workspace queue --------------------------------------------------
    def follow(self, submit: Submit, *, journal: bool = False) -> None:
        """Follow the workspace queue: ``submit`` runs a coroutine on the driver's loop.

        With ``journal``, undos of this session's applies made by other processes are
        reported too. Stopped by :meth:`close`.
        """
        from redline.review.follower import follow

        queue = self.store.queue
        if queue is None or self._submit is not None or self._closed:
            return
        self._submit = submit
        self._stops.append(follow(queue, self._queue_changed))
        self._queue_changed()  # anything that happened before the follow began
        if journal:
            self._follow_journal()

    def prepare_to_serve(self) -> None:
        """Import now what deciding an action here will need (the resolution machinery,
        the event classes, the decisions log) and find who the decisions log will name. A
        process that proposes and then waits for a person (``redline hook``) calls it after
        its action is queued, so the person's decision does not wait for these."""
        import redline.review.events
        import redline.review.queued
        import redline.review.resolve  # noqa: F401
        from redline.review.provenance import remember_reviewer

        remember_reviewer(self.root)

    def _queue_changed(self) -> None:
        """From the follower's thread: hand one sync at a time to the driver's loop."""
        submit = self._submit
        if submit is None:
            return
        with self._lock:
            if self._closed:
                return
            if self._syncing:
                self._sync_again = True
                return
            self._syncing = True
        try:
            submit(self._sync_until_settled())
        except RuntimeError:  # the loop closed meanwhile
            with self._lock:
                self._syncing = False

    async def _sync_until_settled(self) -> None:
        try:
            while True:
                with self._lock:
                    self._sync_again = False
                try:
                    await self.sync()
                except (
                    Exception
                ):  # a damaged queue never stops the session; the next change retries
                    log.exception("following the workspace queue failed")
                with self._lock:
                    if not self._sync_again or self._closed:
                        return
        finally:
            with self._lock:
                self._syncing = False

    async def sync(self) -> None:
        """Catch up with the queue: serve owner requests, take in decisions made elsewhere."""
        queue = self.store.queue
        if queue is None or self._closed:
            return
        mark("sync")
        await self._serve_and_hear()
        mine = self.store.snapshot()
        if not mine:
            return
        queued = {record.id for record in queue.summaries()}
        lock = self.store.resolution_lock
        removed = False
        for action in mine:
            if action.id in queued:
                continue
            # A local resolution holds this lock until the store is updated: wait for it,
            # so it is never mistaken for one made by another process.
            while not lock.acquire(blocking=False):
                import asyncio

                await asyncio.sleep(0.002)
            try:
                if self.store.get(action.id) is None:
                    continue  # resolved here meanwhile
                resolution = queue.resolution(action.id)
                if resolution is None and queue.get(action.id) is not None:
                    continue
                self.store.remove(action.id)
                removed = True
            finally:
                lock.release()
            self._heard_remote(action, resolution)
        if removed:
            self.check_staleness(None)  # an apply elsewhere may have changed our files
            # A replacement the driver took in (``on_removed_elsewhere`` → ``store.adopt``)
            # may already have a request waiting.
            await self._serve_and_hear()

    async def _serve_and_hear(self) -> None:
        queue = self.store.queue
        assert queue is not None
        before = {action.id: action for action in self.store.snapshot()}
        for action_id, result in await self.serve_owner_requests():
            resolution = self._served.pop(action_id, None) or queue.resolution(action_id)
            action = before.get(action_id)
            if action is not None and resolution is not None and not result.is_error:
                self._heard_remote(action, resolution)

    def _heard_remote(self, action: PendingAction, resolution: QueueResolution | None) -> None:
        """Tell the driver (and the event stream) how another process resolved ``action``."""
        from redline.review.events import Notice, PendingResolved
        from redline.review.queued import resolution_result

        if resolution is None or resolution.decision not in ("apply", "discard"):
            if self.on_removed_elsewhere is not None:
                self.on_removed_elsewhere(action, resolution)
                return
            how = "removed"
            if resolution is not None and resolution.replaced_by:
                how = f"replaced by {resolution.replaced_by}"
            self.events.emit(
                Notice(message=f"{action.id} ({action.label}) was {how} in another process.")
            )
            return
        if self.on_remote is not None:
            self.on_remote(action, resolution)
        if not self.events.heard:  # (a hook process: its answer waits for this)
            return
        by: ResolvedBy = "human"
        if resolution.resolved_by == "agent":
            by = "agent"
        elif resolution.resolved_by == "rule":
            by = "rule"
        self.events.emit(
            PendingResolved(
                action_id=action.id,
                action="apply" if resolution.decision == "apply" else "discard",
                reason=resolution.reason,
                by=by,
                label=action.label,
                source_tool_name=action.source_tool_name,
                result=resolution_result(resolution),
                rule=resolution.rule if by == "rule" else None,
            )
        )

    async def serve_owner_requests(self) -> list[tuple[str, ResolveOutcome]]:
        """Run this session's owner actions that another process asked to resolve.

        Returns ``(action_id, outcome)`` pairs; the outcome's text is logged as the
        resolution, which the asking process is waiting for.
        """
        from redline.review.resolve import resolve_pending
        from redline.workspace.queue import ActionGone, QueueError
        from redline.workspace.queue import Resolution as Logged

        queue = self.store.queue
        if queue is None:
            return []
        done: list[tuple[str, ResolveOutcome]] = []
        for request, record in queue.owner_requests():
            action = self.store.get(request.id)
            if action is None:
                with self._lock:
                    replaces_mine = bool(record.replaces) and record.replaces in self._pushed
                if not replaces_mine:  # else: left for the sync that takes the replacement in
                    queue.drop_request(request.id)
                continue
            if request.only is not None:
                await self._serve_parts(request, action)
                continue
            with self.store.serving(request.id):
                try:
                    mark("serving")
                    result = await resolve_pending(
                        PendingActionStore.single(action), request.decision, request.reason
                    )
                    mark("resolved")
                    if not result.is_error:
                        result = self._provenance(
                            result,
                            request.resolved_by,
                            rule=request.rule,
                            via=request.via,
                            reviewer=request.reviewer or None,
                        )
                        mark("provenance")
                        self.store.remove(request.id)  # serving: its record is logged below
                        mark("store removed")
                        logged = Logged(
                            request.id,
                            request.decision,
                            request.reason,
                            request.resolved_by,
                            request.rule,
                            result_text=result.text,
                        )
                        try:
                            with queue.claim(request.id, wait=2.0) as claim:
                                # The decision is durable once logged; an asker that says so
                                # marks the id used and removes the record itself (while it
                                # waits anyway), and this process answers sooner.
                                if request.asker_finishes:
                                    logged = claim.log(logged)
                                else:
                                    logged = claim.finish(logged)
                                self._served[request.id] = logged
                        except ActionGone:
                            pass
                        except QueueError:
                            log.exception("could not log the resolution of %s", request.id)
                        mark("logged")
                    else:  # nothing done: the asker hears why now, not at its timeout
                        self._refuse(request, result.text)
                    done.append((request.id, result))
                finally:
                    queue.drop_request(request.id)
                    mark("request dropped")
        return done

    def _refuse(self, request: Any, text: str) -> None:
        """Tell the process that asked that its request was not done, and why."""
        from redline.workspace.queue import QueueError

        queue = self.store.queue
        if queue is None:
            return
        # The request goes first: an asker that hears the refusal finds no request left.
        queue.drop_request(request.id)
        try:
            queue.refuse_request(request, text)
        except QueueError:  # the asker waits out its timeout, as it did before refusals
            log.warning("could not tell the asker of %s its refusal", request.id)

    async def _serve_parts(self, request: Any, action: PendingAction) -> None:
        """Resolve some hunks of an owner action for another process (see
        :func:`redline.review.queued.serve_parts`); the driver hears it (``on_parts``)."""
        from redline.review.queued import serve_parts

        queue = self.store.queue
        assert queue is not None
        with self.store.serving(request.id):
            try:
                if not action.owner_parts:  # never written for it: refuse, nothing happens
                    self._refuse(
                        request,
                        f"{request.id} resolves only as a whole: its owner cannot apply or "
                        "discard some hunks only. Nothing was applied or discarded.",
                    )
                    return
                result, written = await serve_parts(
                    queue,
                    request.id,
                    request.decision,
                    request.reason,
                    request.only,
                    resolved_by=request.resolved_by,
                    rule=request.rule,
                    via=request.via,
                    reviewer=request.reviewer or None,
                )
                if result.is_error:
                    log.warning("serving parts of %s failed: %s", request.id, result.text)
                    self._refuse(request, result.text)
                    return
                details = result.details if isinstance(result.details, dict) else {}
                remaining = details.get("remaining_action_id") or ""
                self.store.remove(request.id)  # serving: its record was resolved above
                from redline.review.decision import PartsServed

                served = PartsServed(
                    request.id,
                    request.decision,
                    request.reason,
                    result.text,
                    written,
                    str(remaining),
                )
                if self.on_parts is not None:
                    self.on_parts(action, served)
            finally:
                queue.drop_request(request.id)

    # -- the journal: undos made elsewhere ----------------------------------------------
    def _on_store_event(self, event: StoreEvent) -> None:
        action = event.action
        if action is not None and event.kind in ("push", "replace"):
            with self._lock:
                self._pushed[action.id] = action.label

    def _follow_journal(self) -> None:
        """Watch the journal for undos of this session's actions made by other processes."""
        from redline.workspace.entries import DONE_FILE
        from redline.workspace.queue.watcher import QueueWatcher
        from redline.workspace.state import JOURNAL_DIR_NAME, open_state_dir

        os.close(open_state_dir(self.root, JOURNAL_DIR_NAME))
        path = self.root / ".redline" / JOURNAL_DIR_NAME
        # The queue's watcher: start() returns once the watch is set, so an undo made
        # right after this session starts is heard (a watch started on a thread that said
        # it was ready before watching missed it now and then). Only the entries' "done"
        # files (the last file an entry writes) count.
        watcher = QueueWatcher(path, self._journal_read, suffix=DONE_FILE)
        watcher.start()
        self._stops.append(watcher.stop)

    def _journal_read(self) -> None:
        try:
            self._journal_changed()
        except Exception:
            log.debug("reading the journal failed", exc_info=True)

    def _journal_changed(self) -> None:
        """Report undos (from any process) of applies of this session's actions."""
        from redline.workspace.entries import Entry, iter_entries

        with self._lock:
            mine = dict(self._pushed)
        if not mine or self._closed:
            return
        with self._undo_lock:
            loaded = [e for _folder, e in iter_entries(self.root) if isinstance(e, Entry)]
            undone = {e.undoes for e in loaded if e.kind == "undo" and e.complete}
            for entry in loaded:
                if (
                    entry.kind != "apply"
                    or entry.action_id not in mine
                    or entry.id not in undone
                    or entry.id in self._undos_reported
                ):
                    continue
                self._undos_reported.add(entry.id)
                files = list(entry.files)
                text = f"Undid {entry.label or 'the last apply'} ({', '.join(files)})."
                self._undone(entry.id, entry.label, files, text, entry.action_id)

    # -- life cycle ---------------------------------------------------------------------
    def close(self) -> None:
        """Stop following the queue and the journal (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            stops, self._stops = self._stops, []
        for stop in stops:
            try:
                stop()
            except Exception:
                log.exception("stopping a review session's follower failed")


__all__ = ["Capabilities", "Decision", "PartsServed", "Resolution", "ReviewSession"]
