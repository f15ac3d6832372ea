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
from pathlib import Path

from redline.review.store import PendingAction, PendingActionStore
from redline.review.texts import conflict_reason, rebased_text
from redline.workspace.preview import (
    DecodeError,
    FileChange,
    FileModify,
    Preview,
    decode_text,
    sha256_bytes,
)
from redline.workspace.rebase import rebase_preview

log = logging.getLogger(__name__)

__all__ = ["Rebased", "rebase_onto_files", "rebase_others"]


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


def _carry(
    store: PendingActionStore, other: PendingAction, preview: Preview, onto: str
) -> str | None:
    """Replace ``other`` with a file action proposing ``preview``; its new id (None: the
    queue refused the replacement, ``other`` is left in place)."""
    from redline.review.file_action import file_action

    assert other.root is not None
    new = file_action(
        other.root,
        preview,
        label=other.label,
        source_tool_name=other.source_tool_name,
        applied_text=other.applied_text,
        repreview=other.repreview,
        details=other.details,
        origin=other.origin_or_own(),
    )
    try:
        new = store.replace(other.id, new, onto=onto)
    except Exception as exc:  # the queue refused (busy, gone): leave it
        log.warning("could not re-base %s onto %s: %s", other.id, onto, exc)
        return None
    log.info(rebased_text(other.id, new.id, onto))
    return new.id


def as_written(root: Path, preview: Preview, paths: set[str]) -> Preview:
    """What changed under ``preview`` since it was computed, as a Preview of modifies (the
    files of ``paths`` it modifies whose text on disk is no longer its base)."""
    changes: list[FileChange] = []
    for change in preview.changes:
        if not isinstance(change, FileModify) or change.path not in paths:
            continue
        try:
            data = (root / change.path).read_bytes()
            text, encoding = decode_text(data, change.path)
        except (OSError, DecodeError):
            continue  # gone or unreadable: the action stays stale
        if sha256_bytes(data) != change.old_sha256:
            changes.append(
                FileModify(change.path, change.old_sha256, change.old_text, text, encoding)
            )
    return Preview(changes)


def rebase_onto_files(
    store: PendingActionStore, root: Path, paths: set[str], *, onto: str, only: str = ""
) -> list[Rebased]:
    """Carry the actions touching ``paths`` over what those files hold now (after an undo).

    Each file-change action whose base text of one of ``paths`` is no longer on disk is
    merged three ways onto the current text, as after an apply: a clean merge replaces it
    (new id), a conflict marks it stale with the hunks involved. Used by undo, so the rest
    of an undone partial apply proposes its remaining hunks against the restored file.
    ``only``: that action alone (a person's re-preview).
    """
    done: list[Rebased] = []
    for other in store.snapshot():
        if other.preview is None or not other.preview_apply or other.root is None:
            continue
        if only and other.id != only:
            continue
        if not paths & set(other.preview.paths):
            continue
        written = as_written(root, other.preview, paths)
        if not written:
            continue
        result = rebase_preview(other.preview, written, onto=onto)
        if result.status in ("unaffected", "absorbed"):
            continue
        if result.status == "conflict":
            reason = conflict_reason(result)
            store.mark_stale(other.id, reason)
            done.append(Rebased(other.id, onto=onto, stale_reason=reason))
            continue
        new_id = _carry(store, other, result.preview, onto)
        if new_id is not None:
            done.append(Rebased(other.id, new_id, onto))
    return done


def rebase_others(
    store: PendingActionStore, written: Preview, *, onto: str, skip: tuple[str, ...] = ()
) -> list[Rebased]:
    """Re-base or mark stale every action of ``store`` (but ``skip``) that ``written`` touches."""
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
        new_id = _carry(store, other, result.preview, onto)
        if new_id is None:
            reason = f"its files were written by {onto}"
            store.mark_stale(other.id, reason)
            done.append(Rebased(other.id, onto=onto, stale_reason=reason))
            continue
        done.append(Rebased(other.id, new_id, onto))
    return done
