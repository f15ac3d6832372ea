"""Deciding, editing and re-previewing another process's queued action, by id.

:meth:`redline.review.session.ReviewSession.decide` (and ``edit``/``repreview``) route an
action of the session's own store to the in-process path and every other action of the
workspace here: the queue's claim, the same :func:`~redline.review.resolve.resolve_pending`
(through :func:`~redline.review.queued.resolve_queued`), and outcomes of the same types, so
a client (the dashboard, ``serve``) handles every action alike.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from redline.review.rebase import Rebased
from redline.review.resolve import EditOutcome, ResolvedAction, ResolveOutcome
from redline.workspace.queue import (
    ActionDraft,
    ActionGone,
    QueueError,
    QueueRecord,
    WorkspaceQueue,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redline.review.provenance import GitBatch
    from redline.review.result import ToolResult
    from redline.workspace.preview import Preview


async def decide_queued(
    queue: WorkspaceQueue,
    action_id: str,
    verb: Literal["apply", "discard"],
    reason: str,
    *,
    only: Sequence[str] | None = None,
    by: str = "human",
    rule: str | None = None,
    batch: GitBatch | None = None,
    via: str = "sdk",
) -> ResolveOutcome:
    """Resolve another process's action as :func:`resolve_queued` does, as an outcome (the
    fields of a :class:`~redline.review.session.Decision`).

    The queue work (claims, an owner's answer) blocks: it runs on a worker thread, so the
    caller's event loop goes on meanwhile.
    """
    from redline.review.queued import resolve_queued

    resolved_by = {"human": "person"}.get(by, by)
    record = _record(queue, action_id)

    def run() -> Any:
        return asyncio.run(
            resolve_queued(
                queue,
                action_id,
                verb,
                reason,
                resolved_by=resolved_by,
                rule=rule,
                only=only,
                batch=batch,
                via=via,
            )
        )

    result = await asyncio.to_thread(run)
    details = result.details if isinstance(result.details, dict) else {}
    facts = (
        ResolvedAction(record.id, record.label, record.source_tool_name, record.edited)
        if record is not None
        else None
    )
    if result.is_error:
        replaced = details.get("replaced_by")
        if isinstance(replaced, str) and replaced:
            return ResolveOutcome(
                "top_changed",
                result.text,
                verb=verb,
                reason=reason,
                expected_action_id=action_id,
                top_action_id=replaced,
            )
        return ResolveOutcome(
            "failed" if facts is not None else "invalid",
            result.text,
            verb=verb,
            reason=reason,
            action=facts,
        )
    moved = details.get("rebased")
    rebased = (
        tuple(Rebased(str(old), str(new), action_id) for old, new in moved.items())
        if isinstance(moved, dict)
        else ()
    )
    remaining = details.get("remaining_action_id") or ""
    if not remaining and details.get("action") == "replaced":
        remaining = details.get("replaced_by") or ""
    return ResolveOutcome(
        "applied" if verb == "apply" else "discarded",
        result.text,
        verb=verb,
        reason=reason,
        action=facts,
        result_details=details.get("result_details"),
        remaining_id=str(remaining),
        rebased=rebased,
    )


def _record(queue: WorkspaceQueue, action_id: str) -> QueueRecord | None:
    try:
        return queue.get(action_id)
    except QueueError:
        return None


def owned_by_hook(record: QueueRecord) -> bool:
    """A hook's action while its hook waits: an edit stays its owner's (the agent writes
    exactly the edited text)."""
    return record.applied_by == "owner" and record.source.kind == "hook" and not record.orphaned()


def edited_draft(
    record: QueueRecord, proposal: Preview, edited: Preview, origin: Any
) -> ActionDraft:
    """The action that replaces ``record`` after a person's edit (``origin``: the record's)."""
    owner = owned_by_hook(record)
    return ActionDraft(
        label=record.label,
        source=record.source,
        source_tool_name=record.source_tool_name,
        preview=edited,
        details=record.details,
        kind=record.kind,
        applied_by="owner" if owner else "preview",
        applied_text=record.applied_text,
        origin=origin.with_proposal(proposal),
        owner_serves=tuple(record.owner_serves) if owner else (),
    )


def editable_preview(queue: WorkspaceQueue, record: QueueRecord) -> Preview | None:
    """``record``'s Preview when a person may edit it (None: it has none to edit)."""
    if record.applied_by == "preview" or owned_by_hook(record):
        return queue.preview(record)
    return None


async def edit_queued(queue: WorkspaceQueue, action_id: str, path: str, text: str) -> EditOutcome:
    """Replace ``path``'s proposed content in another process's ``action_id`` with ``text``.

    As ``redline pending edit`` does: under the action's claim, a new action in its place
    (new id) whose diff is against the person's text; a hook's action stays its hook's.
    """
    return await asyncio.to_thread(_edit_queued, queue, action_id, path, text)


def _edit_queued(queue: WorkspaceQueue, action_id: str, path: str, text: str) -> EditOutcome:
    from redline.workspace.hunks import HunkError, Origin, edit_file

    try:
        with queue.claim(action_id, wait=2.0) as claim:
            record = claim.record
            preview = editable_preview(queue, record)
            if preview is None:
                return EditOutcome(
                    "invalid",
                    f"{action_id} ({record.label}) has no preview of file changes; it cannot "
                    "be edited. Nothing was changed.",
                    action_id,
                )
            try:
                edited = edit_file(preview, path, text)
            except HunkError as exc:
                return EditOutcome("invalid", str(exc), action_id)
            if not edited.changed:
                return EditOutcome(
                    "unchanged", f"{path} is unchanged; {action_id} stays as it was.", action_id
                )
            origin = queue.origin(record) or Origin.of(record.label, preview)
            new = claim.replace(
                edited_draft(record, preview, edited.preview, origin), resolved_by="person"
            )
    except ActionGone as exc:
        return EditOutcome(
            "gone",
            str(exc).replace("applied or discarded", "edited"),
            action_id,
            exc.replaced_by or "",
        )
    except QueueError as exc:
        return EditOutcome("invalid", f"{exc}. Nothing was edited.", action_id)
    lines = [*edited.warnings, f"Edited {path}: {action_id} is now {new.id} (edited)."]
    return EditOutcome("edited", "\n".join(lines), action_id, new.id, edited.warnings)


RepreviewKind = Literal["repreviewed", "not_stale", "conflict", "refused", "gone"]


@dataclass(frozen=True)
class RepreviewOutcome:
    """What re-previewing one queued action did: ``repreviewed`` (``new_id`` replaces it),
    ``not_stale`` (nothing to do), ``conflict`` (``conflict`` names the files; it stays
    stale), ``refused`` (it cannot be re-previewed here: ``text`` says why) or ``gone``."""

    kind: RepreviewKind
    text: str
    action_id: str
    new_id: str = ""
    conflict: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.kind in ("conflict", "refused", "gone")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.action_id}
        if self.kind == "conflict":
            data["conflict"] = list(self.conflict)
        elif self.kind in ("refused", "gone"):
            data["error"] = self.text
        else:
            data["new_id"] = self.new_id or None
        return data


def hook_waiting_text(action_id: str) -> str:
    return (
        f"{action_id} is waiting in its agent's hook: ask the agent to propose again, or discard it"
    )


def repreview_queued(queue: WorkspaceQueue, action_id: str) -> RepreviewOutcome:
    """Re-preview a stale queued action against the files as they are now.

    Its proposal is merged three ways onto the current text of each file that changed
    under it (as after an apply): a clean merge replaces it (new id, the same place), a
    conflict leaves it stale and names the files. An owner action cannot be re-previewed
    here: its process proposed it (a hook: the agent proposes again).
    """
    from redline.review.queued import _draft
    from redline.review.rebase import as_written
    from redline.workspace.hunks import Origin
    from redline.workspace.rebase import rebase_preview

    try:
        with queue.claim(action_id, wait=2.0) as claim:
            record = claim.record
            if record.applied_by == "owner":
                if owned_by_hook(record):
                    return RepreviewOutcome("refused", hook_waiting_text(action_id), action_id)
                return RepreviewOutcome(
                    "refused",
                    f"{action_id} ({record.label}) is applied by the process that queued it; "
                    "it cannot be re-previewed: discard it and ask the agent again",
                    action_id,
                )
            preview = queue.preview(record)
            if preview is None:
                return RepreviewOutcome(
                    "refused", f"{action_id} ({record.label}) has no file preview", action_id
                )
            changed = as_written(queue.root, preview, set(preview.paths))
            stale = record.stale or bool(queue.stale_reasons(record))
            if not stale:
                return RepreviewOutcome(
                    "not_stale", f"{action_id} is not stale; nothing to do", action_id
                )
            onto = "a change made since the preview"
            result = rebase_preview(preview, changed, onto=onto) if changed else None
            if result is None or result.status == "unaffected":
                problems = queue.stale_reasons(record)
                if problems:  # changed in a way a merge cannot carry (deleted, created)
                    files = _files_of(problems, preview)
                    return RepreviewOutcome(
                        "conflict",
                        f"{action_id} cannot be re-previewed: {'; '.join(problems)}",
                        action_id,
                        conflict=files,
                    )
                claim.clear_stale()  # the files match it again
                return RepreviewOutcome(
                    "not_stale", f"{action_id} is not stale; nothing to do", action_id
                )
            if result.status == "conflict":
                files = tuple(dict.fromkeys(c.path for c in result.conflicts))
                return RepreviewOutcome(
                    "conflict",
                    f"{action_id} cannot be re-previewed: its change conflicts with the files "
                    f"as they are now ({result.describe()}); discard it",
                    action_id,
                    conflict=files,
                )
            if result.status == "absorbed":
                return RepreviewOutcome(
                    "conflict",
                    f"{action_id} cannot be re-previewed: the files already hold its change; "
                    "discard it",
                    action_id,
                    conflict=tuple(preview.paths),
                )
            origin = queue.origin(record) or Origin.of(record.label, preview)
            draft = _draft(record, result.preview, record.label, origin)
            new = claim.replace(draft, resolved_by="person")
    except ActionGone as exc:
        return RepreviewOutcome(
            "gone", str(exc).replace(" Nothing was applied or discarded.", ""), action_id
        )
    except QueueError as exc:
        return RepreviewOutcome("refused", str(exc), action_id)
    return RepreviewOutcome("repreviewed", f"{action_id} is now {new.id}", action_id, new.id)


def _files_of(problems: list[str], preview: Preview) -> tuple[str, ...]:
    """The files of ``preview`` that ``problems`` (stale reasons) name."""
    named = [path for path in preview.paths if any(path in problem for problem in problems)]
    return tuple(named or preview.paths)


def repreview_any(queue: WorkspaceQueue, action_id: str) -> ToolResult:
    """:func:`repreview_queued` as a client's result (an error when nothing was done)."""
    from redline.review.result import ToolResult

    outcome = repreview_queued(queue, action_id)
    if outcome.kind == "repreviewed":
        return ToolResult.text_result(
            f"Re-previewed {outcome.text}.",
            details={"action_id": action_id, "new_id": outcome.new_id},
        )
    return ToolResult.error(outcome.text, details=outcome.to_json())
