"""Revisions: a new proposal linked to the discarded action it redoes.

A proposal is a revision of ``pa-K`` when its proposer names it (``ActionDraft.revises``),
or — without a name — when it comes from the same source (kind, name and an agent-issued
session id) as ``pa-K``, touches one of ``pa-K``'s files, and ``pa-K`` is that session's
newest action discarded with comments or a reason and not yet revised. Each discarded
action is revised at most once.

Layout (``.redline/queue/revisions/``):

* ``S-<hash of kind, name, session id>.json`` — signed (purpose ``queue-revisions``): the
  session's newest action discarded with a reason or comments, its files and its revision
  number. Written by the discard (:func:`note_discard`, under the action's claim); read by
  the push — one read of one small file, so the hook's queueing path stays cheap.
* ``taken-pa-K`` — made with ``O_EXCL`` by the one push that revises ``pa-K``; it holds the
  reviser's id.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from typing import TYPE_CHECKING, Any

from redline.workspace.queue import storage
from redline.workspace.queue.base import QueueBase, check_id
from redline.workspace.queue.records import (
    QueueError,
    QueueRecord,
    QueueUnavailable,
    Resolution,
    Source,
)

if TYPE_CHECKING:
    from redline.workspace.queue.contents import ActionDraft

REVISIONS = "revisions"
PURPOSE_REVISIONS = "queue-revisions"
#: Sources whose actions are never linked without ``revises`` (no agent session behind them).
UNLINKED_KINDS = ("import",)
#: Who may discard an action so that its session's next proposal revises it.
LINKING_DECIDERS = ("person", "rule")


class RevisionError(ValueError):
    """``revises`` names no action this proposal can revise (the reason says why)."""


def _signed(queue: QueueBase) -> storage.Signed:
    return queue._signed(REVISIONS, PURPOSE_REVISIONS, "revision link")


def session_key(source: Source) -> str | None:
    """The file name of ``source``'s session entry (None: no agent session to link by)."""
    if not source.session_id or source.kind in UNLINKED_KINDS:
        return None
    raw = "\0".join((source.kind, source.name, source.session_id)).encode("utf-8", "replace")
    return f"S-{hashlib.sha256(raw).hexdigest()[:32]}.json"


def note_discard(
    queue: QueueBase, record: QueueRecord, resolution: Resolution, *, commented: bool
) -> None:
    """``record`` was discarded: remember it as its session's newest discarded action
    when a reason or comments came with it (its session's next proposal may revise it)."""
    if resolution.decision != "discard" or resolution.resolved_by not in LINKING_DECIDERS:
        return
    if not (resolution.reason.strip() or commented):
        return
    name = session_key(record.source)
    if name is None:
        return
    document = {
        "id": record.id,
        "files": list(record.files),
        "number": max(record.revision, 1),
        "time": time.time(),
    }
    _signed(queue).write(name, document, record.id, sync_dir=False)


def _taken_name(action_id: str) -> str:
    return f"taken-{action_id}"


def revised_by(queue: QueueBase, action_id: str) -> str | None:
    """The id of the action that revises ``action_id`` (None: none yet)."""
    try:
        raw, _st = storage.read_file_stat(_signed(queue).fd, _taken_name(action_id), 64)
    except FileNotFoundError:
        return None
    except OSError:
        return None
    return raw.decode("ascii", "replace").strip() or None


def _take(queue: QueueBase, action_id: str, by: str) -> bool:
    """Mark ``action_id`` revised by ``by``; False when another proposal revised it first."""
    fd = _signed(queue).fd
    try:
        handle = os.open(
            _taken_name(action_id),
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=fd,
        )
    except FileExistsError:
        return False
    except OSError as exc:
        raise QueueUnavailable(
            f"Cannot link the revision of {action_id}: {storage.error_text(exc)}."
        ) from None
    try:
        os.write(handle, by.encode("ascii"))
    finally:
        os.close(handle)
    return True


def check_named(queue: Any, draft: ActionDraft) -> int:
    """The revision number a proposal naming ``draft.revises`` gets; RevisionError when
    that action cannot be revised (before anything is queued)."""
    target = draft.revises
    assert target is not None
    try:
        check_id(target)
    except QueueError as exc:
        raise RevisionError(f"revises: {exc}") from None
    if queue.get(target) is not None:
        raise RevisionError(
            f"revises: {target} is still pending; a revision follows a discarded action "
            "(wait for the review, or propose without revises)"
        )
    resolution = queue.resolution(target)
    if resolution is None:
        raise RevisionError(f"revises: no recently resolved action {target} in this workspace")
    if resolution.decision != "discard":
        done = {"apply": "applied", "replaced": f"replaced by {resolution.replaced_by}"}
        raise RevisionError(
            f"revises: {target} was {done.get(resolution.decision, resolution.decision)}, "
            "not discarded; only a discarded action can be revised"
        )
    by = revised_by(queue, target)
    if by is not None:
        raise RevisionError(f"revises: {target} was already revised by {by}")
    number = (resolution.record or {}).get("revision", 0)
    return (number if isinstance(number, int) and number > 0 else 1) + 1


def link(queue: QueueBase, draft: ActionDraft, record: QueueRecord, number: int | None) -> None:
    """Set ``record``'s revision fields before it is first written: the action named by
    ``draft.revises`` (``number`` from :func:`check_named`), else its session's newest
    discarded action when the rules above hold. Comments and viewed marks of the revised
    action are carried to the revision."""
    target: str | None = None
    if draft.revises is not None and number is not None:
        if not _take(queue, draft.revises, record.id):
            by = revised_by(queue, draft.revises) or "another proposal"
            raise RevisionError(f"revises: {draft.revises} was already revised by {by}")
        target = draft.revises
    elif draft.implicit_revision and record.files:
        name = session_key(record.source)
        if name is None:
            return
        try:
            entry = _signed(queue).read(name, record.id)
        except QueueError:
            return  # a damaged entry only loses the link
        if not entry or not isinstance(entry.get("id"), str):
            return
        files = entry.get("files")
        if not isinstance(files, list) or not set(record.files) & {str(f) for f in files}:
            return
        if not _take(queue, entry["id"], record.id):
            return
        target = entry["id"]
        found = entry.get("number")
        number = (found if isinstance(found, int) and found > 0 else 1) + 1
    if target is None or number is None:
        return
    record.revision_of, record.revision = target, number
    from redline.workspace.queue import conversation

    with contextlib.suppress(QueueError):  # the revision stands without them
        conversation.copy(queue, target, record.id, keep=True)


def links(queue: QueueBase) -> dict[str, str]:
    """Every revision link the queue knows: reviser id → the id it revises."""
    fd = _signed(queue).fd
    found: dict[str, str] = {}
    for name in os.listdir(fd):
        if name.startswith("taken-pa-"):
            by = revised_by(queue, name.removeprefix("taken-"))
            if by is not None:
                found[by] = name.removeprefix("taken-")
    return found


def chains(revises: dict[str, str]) -> dict[str, tuple[str, int]]:
    """Each reviser → (the first action of its chain, its revision number)."""
    found: dict[str, tuple[str, int]] = {}
    for start in revises:
        current, number, seen = start, 1, {start}
        while current in revises and revises[current] not in seen:
            current = revises[current]
            seen.add(current)
            number += 1
        found[start] = (current, number)
    return found


def forget_except(queue: QueueBase, keep: set[str]) -> None:
    """Remove the revision markers of actions the queue no longer keeps."""
    fd = _signed(queue).fd
    for name in os.listdir(fd):
        if name.startswith("taken-pa-") and name.removeprefix("taken-") not in keep:
            storage.unlink(fd, name)
