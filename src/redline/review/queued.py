"""Resolve an action of the workspace queue by id, from any process.

The texts are :func:`redline.review.resolve.resolve_pending`'s own: the queued action is
resolved through it as the only action of a one-off store, so applying or discarding from
``redline pending`` (or the dashboard, or the SDK) reads exactly as a local resolution.

* ``applied_by == "preview"``: the Preview is written here through safe apply, under the
  action's claim, in the queue's commit order (see :mod:`redline.workspace.queue.core`).
* ``applied_by == "owner"``: the process that pushed the action is asked to run its own
  ``apply``/``reject``; the answer is awaited for ``owner_timeout`` seconds. An owner
  action whose process has ended can only be discarded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redline.review.provenance import Decided, GitBatch, assisted_facts
from redline.review.provenance import record as record_decision
from redline.review.resolve import resolve_pending
from redline.review.result import ToolResult
from redline.review.store import PendingAction, PendingActionStore
from redline.review.texts import (
    applied_edited_text,
    conflict_reason,
    rebased_text,
)
from redline.workspace.details import ActionDetails, details_from_json
from redline.workspace.details import imported as imported_facts
from redline.workspace.hunks import (
    Origin,
)
from redline.workspace.preview import Preview
from redline.workspace.queue import (
    ORPHANED_REASON,
    ActionBusy,
    ActionDraft,
    ActionGone,
    Claim,
    QueueError,
    QueueRecord,
    QueueRecordError,
    Resolution,
    WorkspaceQueue,
)

if TYPE_CHECKING:
    from redline.workspace.safe_apply import ApplyReceipt

log = logging.getLogger(__name__)

# How long a person's command waits for a live owner's answer. A loaded machine can take
# more than a second or two to wake the owner and let it resolve (it was 2 s, and a loaded
# run said "try again" now and then); an owner that has ended is noticed at once.
OWNER_TIMEOUT_SECONDS = 10.0


async def resolve_queued(
    queue: WorkspaceQueue,
    action_id: str,
    decision: str,
    reason: str,
    *,
    resolved_by: str = "person",
    rule: str | None = None,
    owner_timeout: float = OWNER_TIMEOUT_SECONDS,
    only: Sequence[str] | None = None,
    batch: GitBatch | None = None,
    reviewer: str | None = None,
    via: str = "cli",
) -> ToolResult:
    """Apply or discard ``action_id``; every failure is an error result naming the cause.

    ``reviewer`` names the person who decided when it is not this machine's user (the team
    queue's reviewer, as its server recorded them): the decisions log and the commit's
    ``Redline-Reviewer`` trailer say it instead of git's user. ``via`` names the redline
    surface deciding (``cli``, ``dashboard``, ``team``, …) for the decisions log.

    ``only`` selects ``PATH#N`` / ``PATH`` parts of its Preview: those are written (or
    dropped) and the rest stays queued in the same place under a new id. After any apply,
    the other queued previews touching the written files are re-based or marked stale.
    Every decision is logged and ``[git] on_apply`` is done (:mod:`redline.review.provenance`;
    with ``batch`` an apply's commit waits for :func:`~redline.review.provenance.finish_batch`).
    """
    if decision not in ("apply", "discard"):
        return ToolResult.error(f"Invalid decision {decision!r}: expected 'apply' or 'discard'.")
    ask_owner = False
    written: Preview | None = None
    result: ToolResult | None = None
    try:
        with queue.claim(action_id) as claim:
            record = claim.record
            refusal = parts_refusal(record) if only is not None else ""
            if refusal:
                return ToolResult.error(
                    f"{refusal}. Nothing was applied or discarded.",
                    details={"action_id": record.id, "whole_only": True},
                )
            if record.applied_by == "owner" and not record.orphaned():
                if only is not None:
                    problem = _parts_problem(queue, record, decision, only)
                    if problem:
                        return ToolResult.error(problem, details={"action_id": record.id})
                ask_owner = True
            elif record.applied_by == "owner" and decision == "apply":
                return ToolResult.error(
                    f"Cannot apply {record.id} ({record.label}): {ORPHANED_REASON}. "
                    "It can only be discarded.",
                    details={"action_id": record.id, "orphaned": True},
                )
            else:
                result, written = await _resolve_here(
                    queue, claim, decision, reason, resolved_by, rule, only, batch, reviewer, via
                )
        if result is not None:
            return _with_rebase(queue, result, written, action_id)
    except (ActionGone, ActionBusy) as exc:
        details: dict[str, Any] = {"action_id": action_id}
        if isinstance(exc, ActionGone) and exc.replaced_by:
            details["replaced_by"] = exc.replaced_by
        return ToolResult.error(str(exc), details=details)
    except QueueRecordError as exc:
        if decision == "discard":
            # An unusable record (damaged, unsigned, newer format) is never acted on, but a
            # person may always remove it.
            try:
                return ToolResult.text_result(queue.drop_unusable(action_id, reason))
            except QueueError as again:
                return ToolResult.error(str(again), details={"action_id": action_id})
        return ToolResult.error(str(exc), details={"action_id": action_id})
    except QueueError as exc:
        return ToolResult.error(str(exc), details={"action_id": action_id})
    assert ask_owner
    return _ask_owner(
        queue,
        action_id,
        decision,
        reason,
        resolved_by,
        rule,
        owner_timeout,
        tuple(only) if only is not None else None,
        via,
        reviewer or "",
        known=record,
    )


def _parts_problem(
    queue: WorkspaceQueue, record: QueueRecord, decision: str, only: Sequence[str]
) -> str:
    """What the owner would refuse in a request for parts, checked before asking it."""
    from redline.workspace.hunks import HunkError, parse_selection

    preview = queue.preview(record)
    if preview is None:
        return f"{parts_refusal(record)}. Nothing was applied or discarded."
    try:
        parse_selection(preview, only)
    except HunkError as exc:
        return str(exc)
    if decision == "apply":
        reasons = queue.stale_reasons(record)
        if record.stale or reasons:
            why = record.stale_reason or "; ".join(reasons)
            return (
                f"Refused to apply {record.label}: it is stale ({why}). Nothing was written; "
                "discard it, or ask the agent to propose it again."
            )
    return ""


def parts_refusal(record: QueueRecord) -> str:
    """Why ``record`` cannot be applied or discarded in parts (hunks), or "" when it can.

    A Preview the queue applies itself always can; an owner action only when its process
    serves parts (``owner_serves``, written by this redline's hooks) and is still there.
    """
    if not record.has_preview:
        return f"{record.id} ({record.label}) has no file preview: it resolves only as a whole"
    if record.applied_by == "preview":
        return ""
    if record.orphaned():
        return f"{record.id} ({record.label}) can only be discarded as a whole: {ORPHANED_REASON}"
    if "parts" not in record.owner_serves:
        return (
            f"{record.id} ({record.label}) is waiting in its agent's process, which applies or "
            "discards it only as a whole: apply or discard all of it, or edit it"
        )
    return ""


async def serve_parts(
    queue: WorkspaceQueue,
    action_id: str,
    decision: str,
    reason: str,
    only: Sequence[str],
    *,
    resolved_by: str = "person",
    rule: str | None = None,
    via: str = "",
    reviewer: str | None = None,
) -> tuple[ToolResult, Preview | None]:
    """The owner's side of a request for some parts of its action: the action is handed
    over to the queue and resolved here in parts, as any redline-applied one (the picked
    hunks written through safe apply, or dropped; the rest stays pending under a new id,
    applied by redline). Returns (result, what was written); the result's text is logged
    as the resolution the asking process waits for."""
    try:
        with queue.claim(action_id, wait=2.0) as claim:
            result, written = await _resolve_here(
                queue,
                claim,
                decision,
                reason,
                resolved_by,
                rule,
                only,
                reviewer=reviewer,
                via=via,
                owner_parts=True,
            )
    except QueueError as exc:
        return ToolResult.error(str(exc), details={"action_id": action_id}), None
    if not result.is_error:
        try:
            queue.note_result(action_id, result.text)
        except QueueError:
            log.exception("could not log the result of %s", action_id)
    return _with_rebase(queue, result, written, action_id), written


class _ClaimedStore(PendingActionStore):
    """One claimed queue record as a one-action store, for :func:`resolve_pending`.

    Writing goes through the queue's commit order (the record is marked ``applying``
    first, and goes back to pending, stale if the files changed, when the write fails);
    replacing the action (the rest of a partial resolution) replaces the record.
    """

    def __init__(
        self, queue: WorkspaceQueue, claim: Claim, action: PendingAction, resolved_by: str
    ) -> None:
        super().__init__()
        self._stack.append(action)
        self._workspace_queue = queue
        self._claim = claim
        self._replaced_by = resolved_by
        #: What was written (the whole Preview, or the selected part of it).
        self.written: Preview | None = None

    def write_part(self, pending: PendingAction, preview: Preview) -> ApplyReceipt:
        from redline.workspace.safe_apply import StaleError, apply_preview

        self._claim.mark_applying()
        try:
            receipt = apply_preview(
                self._workspace_queue.root,
                preview,
                label=pending.label,
                source_tool_name=pending.source_tool_name,
                action_id=pending.id,
            )
        except StaleError as exc:
            self._claim.back_to_pending(
                stale_reason="; ".join(f"{path} ({cause})" for path, cause in exc.problems)
                or str(exc)
            )
            raise
        except Exception:
            self._claim.back_to_pending()
            raise
        self.written = preview
        return receipt

    def replace(
        self, action_id: str, new_action: PendingAction, *, onto: str = ""
    ) -> PendingAction:
        record = self._claim.record
        assert new_action.preview is not None
        origin = new_action.origin or Origin.of(record.label, new_action.preview)
        new = self._claim.replace(
            _draft(record, new_action.preview, new_action.label, origin),
            resolved_by=self._replaced_by,
        )
        with self._changing():
            stamped = new_action.stamped(id=new.id, created_at=new.created_at)
            self._stack[:] = [stamped]
            self._replaced[action_id] = new.id
        return stamped


async def _resolve_here(
    queue: WorkspaceQueue,
    claim: Claim,
    decision: str,
    reason: str,
    resolved_by: str,
    rule: str | None,
    only: Sequence[str] | None = None,
    batch: GitBatch | None = None,
    reviewer: str | None = None,
    via: str = "cli",
    *,
    owner_parts: bool = False,
) -> tuple[ToolResult, Preview | None]:
    """Resolve the claimed record in this process; (result, what was written).

    ``owner_parts``: an owner action resolved in parts by its own process (its Preview is
    written through safe apply here, the rest is queued as applied by redline)."""
    record = claim.record
    preview: Preview | None = None
    if record.applied_by == "preview" or owner_parts:
        try:
            preview = queue.preview(record)
        except QueueRecordError:
            if decision == "apply":
                raise  # a clear message naming the record; nothing is written
            preview = None  # discarding needs no contents
    origin = queue.origin(record) if preview is not None else None

    def apply(_reason: str) -> ToolResult:
        assert preview is not None
        receipt = store.write_part(action, preview)
        text = record.applied_text or ""
        if origin is not None and origin.proposal is not None:
            text = applied_edited_text(record.label, _reason, origin.proposal, preview)
        return ToolResult.text_result(
            text,
            details={"entry_id": receipt.entry_id, "files": list(receipt.files)},
        )

    def no_apply(_reason: str) -> ToolResult:
        return ToolResult.error(f"{ORPHANED_REASON}; it can only be discarded")

    action = PendingAction(
        label=record.label,
        apply=apply if preview is not None else no_apply,
        source_tool_name=record.source_tool_name,
        preview=preview,
        details=details_from_json(record.kind, record.details),
        origin=origin,
        root=queue.root if preview is not None else None,
        applied_text=record.applied_text or "",
        preview_apply=preview is not None,
        source=record.source,
        kind=record.kind,
        id=record.id,
        created_at=record.created_at,
        stale=record.stale,
        stale_reason=record.stale_reason,
    )
    store = _ClaimedStore(queue, claim, action, resolved_by)
    outcome = await resolve_pending(store, decision, reason, only=only)
    if not outcome.is_error and not claim.finished:
        claim.finish(
            Resolution(record.id, decision, reason, resolved_by, rule, result_text=outcome.text)
        )
    if not outcome.is_error:  # a hook's agent that stopped waiting hears it later
        from redline.review.late import decided

        decided(queue, record, decision, outcome)
    result = outcome.to_tool_result()
    if not outcome.is_error:
        helper, why, imported = assisted_facts(record.source.canonical, action.details)
        notes = record_decision(
            queue.root,
            Decided(
                record.id,
                record.label,
                record.source.canonical,
                decision,
                reason,
                record.edited,
                resolved_by,
                store.written,
                co_authors=_co_authors(action.details),
                reviewer=reviewer,
                via=via,
                rule=rule,
                parts=outcome.parts,
                assisted_by=helper,
                assisted_why=why,
                imported_assisted=imported,
            ),
            batch=batch,
        )
        if notes:
            result = ToolResult.text_result(
                "\n".join([result.text, *notes]), details=result.details, is_error=False
            )
    return result, store.written


def _co_authors(details: ActionDetails) -> tuple[str, ...]:
    """An imported action's original author (its details' ``author``), for Co-authored-by."""
    facts = imported_facts(details)
    author = facts.author if facts is not None else None
    return (author,) if author is not None and author.strip() else ()


def _ask_owner(
    queue: WorkspaceQueue,
    action_id: str,
    decision: str,
    reason: str,
    resolved_by: str,
    rule: str | None,
    timeout: float,
    only: tuple[str, ...] | None = None,
    via: str = "",
    reviewer: str = "",
    known: QueueRecord | None = None,
) -> ToolResult:
    try:
        asked_at = queue.request_owner(
            action_id,
            decision,
            reason,
            resolved_by=resolved_by,
            rule=rule,
            only=only,
            via=via,
            reviewer=reviewer,
            known=known,
        )
        resolution = queue.wait_resolution(action_id, timeout, asked_at)
        if only is not None:
            # A part resolved: the rest was logged as a replacement just before its text.
            deadline = time.monotonic() + timeout
            while (
                resolution is not None
                and resolution.decision == "replaced"
                and not resolution.result_text
                and time.monotonic() < deadline
            ):
                time.sleep(0.02)
                resolution = queue.resolution(action_id)
    except QueueError as exc:
        return ToolResult.error(str(exc), details={"action_id": action_id})
    if resolution is None:
        queue.drop_request(action_id)
        record = queue.get(action_id)
        if record is not None and record.orphaned():
            return ToolResult.error(
                f"Cannot {decision} {action_id} ({record.label}) through its owner: "
                f"{ORPHANED_REASON}. It can only be discarded.",
                details={"action_id": action_id, "orphaned": True},
            )
        return ToolResult.error(
            f"The process that pushed {action_id} did not answer within {timeout:g} s; "
            "nothing was applied or discarded. Try again.",
            details={"action_id": action_id},
        )
    return resolution_result(resolution)


def resolution_result(resolution: Resolution) -> ToolResult:
    """A logged resolution as the ToolResult its resolver produced."""
    return ToolResult.text_result(
        resolution.result_text,
        details={
            "action_id": resolution.id,
            "action": resolution.decision,
            "reason": resolution.reason,
            "resolved_by": resolution.resolved_by,
            "replaced_by": resolution.replaced_by,
        },
        is_error=resolution.is_error,
    )


@dataclass(frozen=True)
class _Carried:
    old_id: str
    new_id: str = ""
    stale_reason: str = ""


def _draft(record: QueueRecord, preview: Preview, label: str, origin: Origin) -> ActionDraft:
    return ActionDraft(
        label=label,
        source=record.source,
        source_tool_name=record.source_tool_name,
        preview=preview,
        details=record.details,
        kind=record.kind,
        applied_by="preview",
        applied_text=record.applied_text if label == record.label else None,
        origin=origin,
    )


def _with_rebase(
    queue: WorkspaceQueue, result: ToolResult, written: Preview | None, onto: str
) -> ToolResult:
    if result.is_error or written is None:
        return result
    try:
        carried = rebase_queued(queue, written, onto=onto)
    except Exception:  # never turn a done apply into a failure
        log.exception("re-basing the queue after %s failed", onto)
        return result
    lines = [
        rebased_text(c.old_id, c.new_id, onto)
        if c.new_id
        else f"{c.old_id} is stale: {c.stale_reason}"
        for c in carried
    ]
    if not lines:
        return result
    details = result.details
    moved = {c.old_id: c.new_id for c in carried if c.new_id}
    if moved and (details is None or isinstance(details, dict)):
        details = {**(details or {}), "rebased": moved}
    return ToolResult.text_result(
        result.text + "\n" + "\n".join(lines), details=details, is_error=False
    )


def rebase_queued(queue: WorkspaceQueue, written: Preview, *, onto: str) -> list[_Carried]:
    """Re-base (or mark stale) every queued action whose files ``written`` touched."""
    from redline.workspace.rebase import rebase_preview

    paths = set(written.paths)
    done: list[_Carried] = []
    # Only the actions touching ``paths``: with a long queue the others are not looked at.
    for record in queue.touching(paths):
        if record.id == onto or record.replaces == onto:
            continue
        try:
            with queue.claim(record.id, wait=0.5) as claim:
                current = claim.record
                if current.applied_by != "preview":
                    reason = f"its files were written by {onto}"
                    claim.back_to_pending(stale_reason=reason)
                    done.append(_Carried(record.id, stale_reason=reason))
                    continue
                preview = queue.preview(current)
                if preview is None:
                    continue
                rebased = rebase_preview(preview, written, onto=onto)
                if rebased.status == "unaffected":
                    continue
                if rebased.status in ("conflict", "absorbed"):
                    reason = (
                        conflict_reason(rebased)
                        if rebased.status == "conflict"
                        else f"already written by {onto}"
                    )
                    claim.back_to_pending(stale_reason=reason)
                    done.append(_Carried(record.id, stale_reason=reason))
                    continue
                origin = queue.origin(current) or Origin.of(current.label, preview)
                new = claim.replace(
                    _draft(current, rebased.preview, current.label, origin),
                    resolved_by="rebase",
                )
                done.append(_Carried(record.id, new.id))
        except QueueError as exc:
            log.warning("could not re-base %s onto %s: %s", record.id, onto, exc)
    return done
