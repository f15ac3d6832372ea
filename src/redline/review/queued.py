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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redline.review.resolve import resolve_pending
from redline.review.result import ToolResult
from redline.review.store import PendingAction, PendingActionStore
from redline.review.texts import (
    applied_edited_text,
    conflict_reason,
    partial_apply_text,
    partial_discard_text,
    rebased_text,
    whole_only_text,
)
from redline.workspace.hunks import (
    HunkError,
    Origin,
    parse_selection,
    split_for_apply,
    split_for_discard,
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

log = logging.getLogger(__name__)

OWNER_TIMEOUT_SECONDS = 2.0


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
) -> ToolResult:
    """Apply or discard ``action_id``; every failure is an error result naming the cause.

    ``only`` selects ``PATH#N`` / ``PATH`` parts of its Preview: those are written (or
    dropped) and the rest stays queued in the same place under a new id. After any apply,
    the other queued previews touching the written files are re-based or marked stale.
    """
    if decision not in ("apply", "discard"):
        return ToolResult.error(f"Invalid decision {decision!r}: expected 'apply' or 'discard'.")
    ask_owner = False
    written: Preview | None = None
    result: ToolResult | None = None
    try:
        with queue.claim(action_id) as claim:
            record = claim.record
            if only is not None:
                result, written = _resolve_part(queue, claim, decision, reason, resolved_by, only)
            if result is not None:
                pass
            elif record.applied_by == "owner":
                if not record.orphaned():
                    ask_owner = True
                elif decision == "apply":
                    return ToolResult.error(
                        f"Cannot apply {record.id} ({record.label}): {ORPHANED_REASON}. "
                        "It can only be discarded.",
                        details={"action_id": record.id, "orphaned": True},
                    )
                else:
                    return await _resolve_here(queue, claim, decision, reason, resolved_by, rule)
            else:
                result = await _resolve_here(queue, claim, decision, reason, resolved_by, rule)
                if decision == "apply" and not result.is_error:
                    written = queue.preview(record)
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
    return _ask_owner(queue, action_id, decision, reason, resolved_by, rule, owner_timeout)


async def _resolve_here(
    queue: WorkspaceQueue,
    claim: Claim,
    decision: str,
    reason: str,
    resolved_by: str,
    rule: str | None,
) -> ToolResult:
    record = claim.record
    try:
        preview = queue.preview(record)
    except QueueRecordError:
        if decision == "apply":
            raise  # a clear message naming the record; nothing is written
        preview = None  # discarding needs no contents
    origin = queue.origin(record) if preview is not None else None

    def apply(_reason: str) -> ToolResult:
        from redline.workspace.safe_apply import StaleError, apply_preview

        assert preview is not None
        claim.mark_applying()
        try:
            receipt = apply_preview(
                queue.root,
                preview,
                label=record.label,
                source_tool_name=record.source_tool_name,
                action_id=record.id,
            )
        except StaleError as exc:
            claim.back_to_pending(
                stale_reason="; ".join(f"{path} ({cause})" for path, cause in exc.problems)
                or str(exc)
            )
            raise
        except Exception:
            claim.back_to_pending()
            raise
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
        details=record.details,
    )
    action.id = record.id
    action.created_at = record.created_at
    action.stale, action.stale_reason = record.stale, record.stale_reason
    result = await resolve_pending(PendingActionStore.single(action), decision, reason)
    if not result.is_error:
        claim.finish(
            Resolution(record.id, decision, reason, resolved_by, rule, result_text=result.text)
        )
    return result.to_tool_result()


def _ask_owner(
    queue: WorkspaceQueue,
    action_id: str,
    decision: str,
    reason: str,
    resolved_by: str,
    rule: str | None,
    timeout: float,
) -> ToolResult:
    try:
        queue.request_owner(action_id, decision, reason, resolved_by=resolved_by, rule=rule)
        resolution = queue.wait_resolution(action_id, timeout)
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
        applied_by="preview",
        applied_text=record.applied_text if label == record.label else None,
        origin=origin,
    )


def _resolve_part(
    queue: WorkspaceQueue,
    claim: Claim,
    decision: str,
    reason: str,
    resolved_by: str,
    only: Sequence[str],
) -> tuple[ToolResult | None, Preview | None]:
    """Apply or discard a selection of the claimed record; (result, what was written).

    ``(None, None)``: the selection is every hunk of an apply; apply the whole action.
    """
    from redline.workspace.safe_apply import StaleError, apply_preview

    record = claim.record
    preview = queue.preview(record) if record.applied_by == "preview" else None
    if preview is None:
        return ToolResult.error(whole_only_text(record.id, record.label)), None
    try:
        units = parse_selection(preview, only)
    except HunkError as exc:
        return ToolResult.error(str(exc), details={"action_id": record.id}), None
    origin = queue.origin(record) or Origin.of(record.label, preview)
    if decision == "discard":
        dsplit = split_for_discard(preview, units)
        if dsplit.covers_all:
            claim.finish(Resolution(record.id, "discard", reason, resolved_by))
            return ToolResult.text_result(f"Discarded: {record.label}. Reason: {reason}"), None
        count = len(dsplit.remaining_units)
        new = claim.replace(
            _draft(record, dsplit.remaining, origin.remaining_label(count), origin),
            resolved_by=resolved_by,
        )
        text = partial_discard_text(dsplit, origin.label, reason)
        return ToolResult.text_result(
            text, details={"action_id": record.id, "remaining_action_id": new.id}
        ), None
    if record.stale:
        return ToolResult.error(
            f"Refused to apply {record.label}: it is stale ({record.stale_reason}). "
            "Nothing was written; re-preview it or discard it.",
            details={"action_id": record.id},
        ), None
    split = split_for_apply(preview, units)
    if split.covers_all:
        return None, None  # every hunk: the whole apply
    claim.mark_applying()
    try:
        receipt = apply_preview(
            queue.root,
            split.selected,
            label=record.label,
            source_tool_name=record.source_tool_name,
            action_id=record.id,
        )
    except StaleError as exc:
        claim.back_to_pending(
            stale_reason="; ".join(f"{path} ({cause})" for path, cause in exc.problems) or str(exc)
        )
        return ToolResult.error(f"Apply failed for {record.label}: {exc}"), None
    except Exception as exc:
        claim.back_to_pending()
        return ToolResult.error(f"Apply failed for {record.label}: {exc}"), None
    count = len(split.remaining_units)
    new = claim.replace(
        _draft(record, split.remaining, origin.remaining_label(count), origin),
        resolved_by=resolved_by,
    )
    text = partial_apply_text(split, origin.label, reason, new.id)
    return ToolResult.text_result(
        text,
        details={
            "action_id": record.id,
            "remaining_action_id": new.id,
            "entry_id": receipt.entry_id,
            "files": list(receipt.files),
        },
    ), split.selected


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
    return ToolResult.text_result(
        result.text + "\n" + "\n".join(lines), details=result.details, is_error=False
    )


def rebase_queued(queue: WorkspaceQueue, written: Preview, *, onto: str) -> list[_Carried]:
    """Re-base (or mark stale) every queued action whose files ``written`` touched."""
    from redline.workspace.rebase import rebase_preview

    paths = set(written.paths)
    done: list[_Carried] = []
    for record in queue.list():
        if record.id == onto or record.replaces == onto or not paths & set(record.files):
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
