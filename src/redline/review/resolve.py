"""resolve: the one function that applies or discards a pending action, or part of one.

The model's ``resolve`` tool call, ``AgentSession.resolve`` and the dashboard's buttons
all end up in :func:`resolve_pending`. The model acts on the top of its stack, as a whole;
a person names any action by id and may select hunks of its Preview (``only``).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from redline.lazylog import LazyLogger
from redline.review.result import ToolResult, coerce_result
from redline.review.store import PendingAction, PendingActionStore, resolving

# A whole apply or discard needs none of the hunk, re-base and three-way merge machinery:
# each is imported where a partial decision, an edit or a re-base after an apply uses it,
# so a review rule's decision at a hook's push does not load them (issue 49). Nor asyncio:
# a resolution only waits when another one holds the store's lock.
if TYPE_CHECKING:
    from redline.review.events import PendingResolved, ResolutionFailed, ResolvedBy
    from redline.review.rebase import Rebased
    from redline.workspace.hunks import Origin, Unit
    from redline.workspace.preview import Preview

log = LazyLogger(__name__)

NOTHING_PENDING = "No pending action to resolve. Nothing to apply or discard."

ResolveAction = Literal["apply", "discard"]
ResolveKind = Literal["applied", "discarded", "failed", "top_changed", "invalid"]


@dataclass(frozen=True)
class ResolvedAction:
    """The facts of the action a resolution was about (it may still be pending)."""

    action_id: str
    label: str
    source_tool_name: str
    #: A person changed the proposed text before this resolution.
    edited: bool = False

    @classmethod
    def of(cls, pending: PendingAction) -> ResolvedAction:
        origin = pending.origin
        edited = origin is not None and origin.proposal is not None
        return cls(pending.id, pending.label, pending.source_tool_name, edited)


@dataclass(frozen=True)
class ResolveOutcome:
    """What one apply or discard did.

    ``kind`` says how it ended: ``applied``/``discarded`` (the action left the stack),
    ``failed`` (refused as stale, or its callback failed: the action is still pending),
    ``top_changed`` (``action_id`` is no longer pending: resolved elsewhere, replaced or
    re-based; ``top_action_id`` names its replacement when known; nothing happened) or
    ``invalid`` (bad arguments, a bad selection or an empty stack). ``text`` is what the
    model reads. A partial resolution is ``applied``/``discarded`` with ``remaining_id``
    naming the action left pending; ``rebased`` lists the other actions an apply carried
    over or marked stale.
    """

    kind: ResolveKind
    text: str
    verb: ResolveAction | None = None
    reason: str = ""
    action: ResolvedAction | None = None
    result_details: Any = None
    expected_action_id: str = ""
    top_action_id: str = ""
    remaining_id: str = ""
    rebased: tuple[Rebased, ...] = ()
    #: What an apply wrote through safe apply (the Preview, or the selected part of it);
    #: None for a discard or an apply whose callback is the action's own code.
    written: Preview | None = None
    #: ``"2 of 3 hunks"`` when only some hunks were applied.
    parts: str | None = None
    #: The units a partial discard dropped (their comments go to the agent with it).
    dropped: tuple[Unit, ...] | None = None

    @property
    def is_error(self) -> bool:
        return self.kind not in ("applied", "discarded")

    @property
    def top_changed(self) -> bool:
        return self.kind == "top_changed"

    def tool_details(self) -> dict[str, Any] | None:
        """The details dict of the tool result (the wire shape of ``tool_end`` events)."""
        if self.kind == "top_changed":
            return {
                "expected_action_id": self.expected_action_id,
                "top_action_id": self.top_action_id,
            }
        if self.action is None:
            return None
        details = {
            "action": self.verb,
            "reason": self.reason,
            "source_tool_name": self.action.source_tool_name,
            "label": self.action.label,
            "action_id": self.action.action_id,
            "result_details": self.result_details,
        }
        if self.remaining_id:
            details["remaining_action_id"] = self.remaining_id
        if self.rebased:
            details["rebased"] = [
                {"old": r.old_id, "new": r.new_id, "onto": r.onto, "stale_reason": r.stale_reason}
                for r in self.rebased
            ]
        return details

    def to_tool_result(self) -> ToolResult:
        return ToolResult.text_result(
            self.text, details=self.tool_details(), is_error=self.is_error
        )


def _invalid(text: str) -> ResolveOutcome:
    return ResolveOutcome("invalid", text)


async def _call(callback: Any, reason: str, pending: PendingAction) -> object:
    """``callback(reason)`` (plain or async), with ``pending`` as the resolving action."""
    with resolving(pending):
        value = callback(reason)
        if inspect.isawaitable(value):
            value = await value
        return value


async def _acquire(store: PendingActionStore) -> None:
    # Polling keeps cancellation safe: a cancelled waiter never ends up holding the lock.
    while not store.resolution_lock.acquire(blocking=False):
        import asyncio

        await asyncio.sleep(0.002)


async def resolve_pending(
    store: PendingActionStore,
    action: str,
    reason: str,
    action_id: str | None = None,
    only: Sequence[str] | None = None,
    *,
    resolved_by: str | None = None,
    rule: str | None = None,
) -> ResolveOutcome:
    """Apply or discard an action; it leaves the stack only if its callback succeeded.

    Without ``action_id`` the top is resolved (the model's semantics). With it, that action
    wherever it is; if it is no longer pending nothing runs and the outcome names what
    replaced it. ``only`` selects ``PATH#N`` / ``PATH`` parts of its Preview: those are
    applied (or dropped) and the rest stays pending as a new action in the same place.
    ``resolved_by`` (and ``rule``) is who a queue-backed store logs this one resolution as;
    None keeps the store's default.
    """
    if action not in ("apply", "discard"):
        return _invalid(f"Invalid resolve action {action!r}: expected 'apply' or 'discard'.")
    if not isinstance(reason, str):
        return _invalid("The resolve reason must be a string.")
    if only is not None and (
        isinstance(only, str) or not all(isinstance(item, str) for item in only)
    ):
        return _invalid("The selection must be a list of PATH or PATH#N strings.")
    verb: ResolveAction = "apply" if action == "apply" else "discard"
    await _acquire(store)
    try:
        if action_id is None:
            pending = store.peek()
            if pending is None:
                return _invalid(NOTHING_PENDING)
        else:
            pending = store.get(action_id)
            if pending is None and store.peek() is None and not store.replaced_by(action_id):
                return _invalid(NOTHING_PENDING)
            if pending is None:
                return _gone(store, action_id, verb, reason)
        credit = (
            store.credited(pending.id, resolved_by, rule)
            if resolved_by is not None
            else contextlib.nullcontext()
        )
        with credit:
            if only is not None:
                outcome = await _resolve_part(store, pending, verb, reason, only)
            elif action == "apply":
                outcome = await _apply(store, pending, reason)
            else:
                outcome = await _discard(store, pending, reason)
            return _with_comments(store, pending.id, outcome)
    finally:
        store.resolution_lock.release()


def _with_comments(
    store: PendingActionStore, action_id: str, outcome: ResolveOutcome
) -> ResolveOutcome:
    """The reviewer's comments go to the agent with the decision: a discard's with the
    reason, an apply's as notes (docs/review-conversation.md). A partial apply leaves them
    with the rest; a partial discard takes those on the hunks it dropped."""
    # A store of the queue, or one claimed record of it (review.queued's one-action store).
    queue = store.queue if store.queue is not None else getattr(store, "_workspace_queue", None)
    if queue is None or outcome.kind not in ("applied", "discarded") or not outcome.verb:
        return outcome
    from dataclasses import replace

    from redline.review import comments

    if outcome.remaining_id:
        if outcome.kind != "discarded" or outcome.dropped is None:
            return outcome
        taken = comments.split_for_discard(queue, action_id, outcome.remaining_id, outcome.dropped)
        notes = comments.notes_text("discard", taken)
    else:
        notes = comments.agent_notes(queue, action_id, outcome.verb)
    if not notes:
        return outcome
    return replace(outcome, text=comments.with_notes(outcome.text, notes))


def _gone(
    store: PendingActionStore, action_id: str, verb: ResolveAction, reason: str
) -> ResolveOutcome:
    replaced = store.replaced_by(action_id) or ""
    if not replaced and store.queue is not None:
        try:
            resolution = store.queue.resolution(action_id)
            replaced = (resolution.replaced_by or "") if resolution is not None else ""
        except Exception:  # an unreadable log only loses the hint
            replaced = ""
    if replaced:
        current = store.get(replaced)
        what = f"it was replaced by {replaced}" + (f" ({current.label})" if current else "")
    else:
        what = "it was resolved elsewhere or never existed"
    return ResolveOutcome(
        "top_changed",
        f"{action_id} is no longer pending: {what}. Nothing was applied or discarded.",
        verb=verb,
        reason=reason,
        expected_action_id=action_id,
        top_action_id=replaced,
    )


def _rebase(
    store: PendingActionStore,
    pending: PendingAction,
    written: Preview | None = None,
    skip: str = "",
) -> list[Rebased]:
    """Carry the other actions over what ``pending`` just wrote (``written``: a part of it)."""
    if written is None:
        if pending.preview is None or not pending.preview_apply:
            return []
        written = pending.preview
    from redline.review.rebase import rebase_others

    try:
        return rebase_others(
            store, written, onto=pending.id, skip=(pending.id, skip) if skip else (pending.id,)
        )
    except Exception:  # never let carrying others over turn a done apply into a failure
        log.exception("re-basing after %s failed", pending.id)
        return []


async def _resolve_part(
    store: PendingActionStore,
    pending: PendingAction,
    verb: ResolveAction,
    reason: str,
    only: Sequence[str],
) -> ResolveOutcome:
    from redline.review.texts import partial_apply_text, partial_discard_text, whole_only_text
    from redline.workspace.hunks import (
        HunkError,
        parse_selection,
        split_for_apply,
        split_for_discard,
    )

    if pending.preview is None:
        return _invalid(whole_only_text(pending.id, pending.label))
    try:
        units = parse_selection(pending.preview, only)
    except HunkError as exc:
        return _invalid(str(exc))
    origin = pending.origin_or_own()
    assert origin is not None
    if verb == "discard":
        try:
            dsplit = split_for_discard(pending.preview, units)
        except HunkError as exc:
            return _invalid(str(exc))
        if dsplit.covers_all:
            return await _discard(store, pending, reason)
        new = _derived(pending, dsplit.remaining, origin, len(dsplit.remaining_units))
        if new is None:
            return _invalid(whole_only_text(pending.id, pending.label))
        try:
            new = store.replace(pending.id, new)
        except Exception as exc:
            return _failed("discard", pending, reason, str(exc) or type(exc).__name__)
        return ResolveOutcome(
            "discarded",
            partial_discard_text(dsplit, origin.label, reason),
            "discard",
            reason,
            ResolvedAction.of(pending),
            remaining_id=new.id,
            dropped=dsplit.discarded_units,
        )
    if pending.stale:
        return _stale(pending, reason)
    try:
        split = split_for_apply(pending.preview, units)
    except HunkError as exc:
        return _invalid(str(exc))
    if split.covers_all:
        return await _apply(store, pending, reason)
    new = _derived(pending, split.remaining, origin, len(split.remaining_units))
    if new is None or pending.root is None:
        return _invalid(whole_only_text(pending.id, pending.label))
    try:
        receipt = store.write_part(pending, split.selected)
    except Exception as exc:
        return _failed("apply", pending, reason, str(exc) or type(exc).__name__)
    try:
        new = store.replace(pending.id, new)
    except Exception as exc:
        # Written, but the rest could not be kept in place: say so, never hide the write.
        return _failed(
            "apply", pending, reason, f"the selection was written but the rest was lost: {exc}"
        )
    rebased = _rebase(store, pending, split.selected, skip=new.id)
    return ResolveOutcome(
        "applied",
        partial_apply_text(split, origin.label, reason, new.id),
        "apply",
        reason,
        ResolvedAction.of(pending),
        {"entry_id": receipt.entry_id, "files": list(receipt.files)},
        remaining_id=new.id,
        rebased=tuple(rebased),
        written=split.selected,
        parts=f"{len(split.selected_units)} of {split.total} hunks",
    )


def _derived(
    pending: PendingAction, remaining: Preview, origin: Origin, count: int
) -> PendingAction | None:
    """The action keeping the rest of ``pending`` (None: its apply is not the Preview's)."""
    from redline.review.file_action import file_action

    if pending.root is None or not pending.preview_apply:
        return None
    return file_action(
        pending.root,
        remaining,
        label=origin.remaining_label(count),
        source_tool_name=pending.source_tool_name,
        applied_text="",
        repreview=None,
        details=pending.details,
        origin=origin,
    )


def _stale(pending: PendingAction, reason: str) -> ResolveOutcome:
    return ResolveOutcome(
        "failed",
        f"Refused to apply {pending.label}: it is stale ({pending.stale_reason}). "
        "Nothing was written; re-preview it or discard it.",
        "apply",
        reason,
        ResolvedAction.of(pending),
    )


async def _apply(store: PendingActionStore, pending: PendingAction, reason: str) -> ResolveOutcome:
    if pending.stale:
        return _stale(pending, reason)
    try:
        result = coerce_result(await _call(pending.apply, reason, pending))
    except Exception as exc:
        return _failed(
            "apply", pending, reason, f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)
        )
    if result is not None and result.is_error:
        return _failed(
            "apply",
            pending,
            reason,
            result.text or "the apply callback reported an error",
            result.details,
        )
    store.remove(pending.id)
    text = (
        result.text if result is not None and result.text.strip() else f"Applied: {pending.label}."
    )
    rebased = _rebase(store, pending)
    return ResolveOutcome(
        "applied",
        text,
        "apply",
        reason,
        ResolvedAction.of(pending),
        result.details if result else None,
        rebased=tuple(rebased),
        written=pending.preview if pending.preview_apply else None,
    )


async def _discard(
    store: PendingActionStore, pending: PendingAction, reason: str
) -> ResolveOutcome:
    result: ToolResult | None = None
    if pending.reject is not None:
        try:
            result = coerce_result(await _call(pending.reject, reason, pending))
        except Exception as exc:
            return _failed("discard", pending, reason, str(exc) or type(exc).__name__)
        if result is not None and result.is_error:
            return _failed(
                "discard",
                pending,
                reason,
                result.text or "the reject callback reported an error",
                result.details,
            )
    store.remove(pending.id)
    if result is None or not result.text.strip():
        text = f"Discarded: {pending.label}. Reason: {reason}"
    else:
        text = result.text
    return ResolveOutcome(
        "discarded",
        text,
        "discard",
        reason,
        ResolvedAction.of(pending),
        result.details if result else None,
    )


def _failed(
    action: ResolveAction,
    pending: PendingAction,
    reason: str,
    cause: str,
    result_details: Any = None,
) -> ResolveOutcome:
    verb = "Apply" if action == "apply" else "Discard"
    cause = cause.rstrip().rstrip(".")
    return ResolveOutcome(
        "failed",
        f"{verb} failed for {pending.label}: {cause}. The action is still pending.",
        action,
        reason,
        ResolvedAction.of(pending),
        result_details,
    )


EditKind = Literal["edited", "unchanged", "gone", "invalid"]


@dataclass(frozen=True)
class EditOutcome:
    """What a person's edit of one file of a pending action did.

    ``edited``: the action was replaced by ``new_action_id`` (its diff now against the
    person's text; ``warnings`` say e.g. that a ``.py`` file no longer parses).
    ``unchanged``: the text equals the proposal, nothing happened. ``gone``: the action is
    no longer pending (``new_action_id`` names its replacement when known). ``invalid``:
    the action or path cannot be edited (``text`` says why).
    """

    kind: EditKind
    text: str
    action_id: str
    new_action_id: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.kind in ("gone", "invalid")


async def edit_pending(
    store: PendingActionStore, action_id: str, path: str, text: str
) -> EditOutcome:
    """Replace ``path``'s proposed content in ``action_id`` with ``text`` (a person's edit)."""
    from redline.review.file_action import file_action
    from redline.workspace.hunks import HunkError, edit_file

    await _acquire(store)
    try:
        pending = store.get(action_id)
        if pending is None:
            gone = _gone(store, action_id, "apply", "")
            return EditOutcome(
                "gone",
                gone.text.replace("applied or discarded", "edited"),
                action_id,
                gone.top_action_id,
            )
        if pending.preview is None or pending.root is None or not pending.preview_apply:
            return EditOutcome(
                "invalid",
                f"{action_id} ({pending.label}) has no preview of file changes that safe "
                "apply writes; it cannot be edited. Nothing was changed.",
                action_id,
            )
        try:
            edited = edit_file(pending.preview, path, text)
        except HunkError as exc:
            return EditOutcome("invalid", str(exc), action_id)
        if not edited.changed:
            return EditOutcome(
                "unchanged", f"{path} is unchanged; {action_id} stays as it was.", action_id
            )
        origin = pending.origin_or_own()
        assert origin is not None
        new = file_action(
            pending.root,
            edited.preview,
            label=pending.label,
            source_tool_name=pending.source_tool_name,
            applied_text=pending.applied_text,
            repreview=None,
            details=pending.details,
            origin=origin.with_proposal(pending.preview),
        )
        try:
            new = store.replace(pending.id, new)
        except Exception as exc:
            return EditOutcome(
                "invalid", f"Cannot replace {action_id} with the edit: {exc}", action_id
            )
        lines = [*edited.warnings, f"Edited {path}: {action_id} is now {new.id} (edited)."]
        return EditOutcome("edited", "\n".join(lines), action_id, new.id, edited.warnings)
    finally:
        store.resolution_lock.release()


def resolution_event(
    outcome: ResolveOutcome, by: ResolvedBy, *, rule: str | None = None
) -> PendingResolved | ResolutionFailed | None:
    """The event a resolution is logged as: resolved, failed (the action is still pending),
    or none when no action was involved (empty stack, bad arguments, the top changed).
    ``rule`` names the review rule when ``by`` is ``"rule"``."""
    facts, verb = outcome.action, outcome.verb
    if facts is None or verb is None:
        return None
    from redline.review.events import PendingResolved, ResolutionFailed

    if outcome.is_error:
        return ResolutionFailed(
            message=outcome.text,
            action_id=facts.action_id,
            action=verb,
            reason=outcome.reason,
            label=facts.label,
            source_tool_name=facts.source_tool_name,
            by=by,
            rule=rule,
        )
    return PendingResolved(
        action_id=facts.action_id,
        action=verb,
        reason=outcome.reason,
        by=by,
        label=facts.label,
        source_tool_name=facts.source_tool_name,
        result=outcome.to_tool_result(),
        rule=rule,
    )
