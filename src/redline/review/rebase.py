"""Carry the other pending actions over once an action (or part of one) was written.

After an apply, every other pending preview touching the written files was computed
against files that changed. :func:`rebase_others` re-bases each with
:func:`redline.workspace.rebase.rebase_preview`: a clean merge replaces the action (new
id, same label and origin, a ``rebased pa-4 as pa-9 onto pa-6`` line); a conflict or a
change that is already written marks it stale; an action whose apply is code (not the
Preview's safe apply) is marked stale when its files were written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from redline.review.store import PendingActionStore
from redline.review.texts import conflict_reason, rebased_text
from redline.workspace.preview import Preview
from redline.workspace.rebase import rebase_preview

log = logging.getLogger(__name__)

__all__ = ["Rebased", "rebase_others"]


@dataclass(frozen=True)
class Rebased:
    """One other action carried over (``new_id`` set) or marked stale (``stale_reason``)."""

    old_id: str
    new_id: str = ""
    onto: str = ""
    stale_reason: str = ""

    @property
    def text(self) -> str:
        if self.new_id:
            return rebased_text(self.old_id, self.new_id, self.onto)
        return f"{self.old_id} is stale: {self.stale_reason}"


def rebase_others(
    store: PendingActionStore, written: Preview, *, onto: str, skip: tuple[str, ...] = ()
) -> list[Rebased]:
    """Re-base or mark stale every action of ``store`` (but ``skip``) that ``written`` touches."""
    from redline.review.file_action import file_action

    paths = set(written.paths)
    done: list[Rebased] = []
    if not paths:
        return done
    for other in store.snapshot():
        if other.id in skip or other.preview is None:
            continue
        if not paths & set(other.preview.paths):
            continue
        if not other.preview_apply or other.root is None:
            reason = f"its files were written by {onto}"
            store.mark_stale(other.id, reason)
            done.append(Rebased(other.id, onto=onto, stale_reason=reason))
            continue
        result = rebase_preview(other.preview, written, onto=onto)
        if result.status == "unaffected":
            continue
        if result.status == "conflict":
            reason = conflict_reason(result)
        elif result.status == "absorbed":
            reason = f"already written by {onto}"
        else:
            reason = ""
        if reason:
            store.mark_stale(other.id, reason)
            done.append(Rebased(other.id, onto=onto, stale_reason=reason))
            continue
        new = file_action(
            other.root,
            result.preview,
            label=other.label,
            source_tool_name=other.source_tool_name,
            applied_text=other.applied_text,
            repreview=other.repreview,
            details=other.details,
            origin=other.origin_or_own(),
        )
        try:
            store.replace(other.id, new, onto=onto)
        except Exception as exc:  # the queue refused (busy, gone): leave it, mark it stale
            log.warning("could not re-base %s onto %s: %s", other.id, onto, exc)
            reason = f"its files were written by {onto}"
            store.mark_stale(other.id, reason)
            done.append(Rebased(other.id, onto=onto, stale_reason=reason))
            continue
        log.info(rebased_text(other.id, new.id, onto))
        done.append(Rebased(other.id, new.id, onto))
    return done
