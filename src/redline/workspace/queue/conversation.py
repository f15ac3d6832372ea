"""A review conversation stored beside an action: ``.redline/queue/comments/pa-N.json``.

One signed document per action (purpose ``queue-comments``), as check results are: the
action's own record (and its signature) never changes when a person comments on it or
marks a file viewed. It holds the comments (see :mod:`redline.review.comments`) and the
viewed marks (``{path: hash of the file's changed lines}``). It is written under the
action's claim, moves to the new id when the action is replaced (:func:`move`, called by
:meth:`~redline.workspace.queue.claims.Claim.replace`), stays after the action is
resolved (the agent hears its comments, a revision carries them on) and goes when the
resolved log forgets the action.
"""

from __future__ import annotations

import os
from typing import Any

from redline.workspace.queue import storage
from redline.workspace.queue.base import QueueBase, check_id, record_name
from redline.workspace.queue.records import QueueRecordError, QueueUnavailable, id_number

COMMENTS = "comments"
PURPOSE_COMMENTS = "queue-comments"


def _signed(queue: QueueBase) -> storage.Signed:
    return queue._signed(COMMENTS, PURPOSE_COMMENTS, "review conversation")


def empty(action_id: str) -> dict[str, Any]:
    return {"id": action_id, "next": 1, "comments": [], "viewed": {}}


def read(queue: QueueBase, action_id: str) -> dict[str, Any]:
    """The verified document of ``action_id`` (an empty one when there is none); raises
    :class:`~redline.workspace.queue.QueueRecordError` when it cannot be used."""
    data = _signed(queue).read(record_name(check_id(action_id)), action_id)
    if data is None:
        return empty(action_id)
    if data.get("id") != action_id:
        raise QueueRecordError(
            action_id, f"the review conversation of {action_id} names another action"
        )
    comments, viewed, nxt = data.get("comments"), data.get("viewed"), data.get("next")
    if not isinstance(comments, list) or not all(isinstance(c, dict) for c in comments):
        raise QueueRecordError(action_id, f"the comments of {action_id} are not a list")
    if not isinstance(viewed, dict) or not isinstance(nxt, int):
        raise QueueRecordError(action_id, f"the review conversation of {action_id} is damaged")
    return data


def exists(queue: QueueBase, action_id: str) -> bool:
    return storage.exists(_signed(queue).fd, record_name(check_id(action_id)))


def has_comments(queue: QueueBase, action_id: str) -> bool:
    """Does ``action_id`` have comments (False when its document cannot be used)?"""
    if not exists(queue, action_id):
        return False
    try:
        return bool(read(queue, action_id)["comments"])
    except QueueRecordError:
        return False


def write(queue: QueueBase, action_id: str, document: dict[str, Any]) -> None:
    """Replace ``action_id``'s document atomically (QueueUnavailable on failure). A
    document whose comments were all deleted is kept: comment ids are never reused."""
    _signed(queue).write(record_name(check_id(action_id)), document, action_id, sync_dir=False)


def remove(queue: QueueBase, action_id: str) -> None:
    signed = _signed(queue)
    try:
        storage.unlink(signed.fd, record_name(check_id(action_id)))
    except OSError as exc:
        raise QueueUnavailable(
            f"Cannot remove the review conversation of {action_id}: {storage.error_text(exc)}."
        ) from None


def copy(queue: QueueBase, old_id: str, new_id: str, *, keep: bool) -> None:
    """``old_id``'s conversation becomes ``new_id``'s (removed from ``old_id`` unless
    ``keep``). Nothing happens when ``old_id`` has none."""
    signed = _signed(queue)
    if not storage.exists(signed.fd, record_name(check_id(old_id))):
        return
    data = read(queue, old_id)
    data["id"] = new_id
    write(queue, new_id, data)
    if not keep:
        remove(queue, old_id)


def move(queue: QueueBase, old_id: str, new_id: str) -> None:
    """An action replaced by ``new_id`` (edit, rebase, the rest of a partial resolution):
    its conversation goes with it."""
    copy(queue, old_id, new_id, keep=False)


def forget_except(queue: QueueBase, keep: set[str]) -> None:
    """Remove the conversations of actions neither pending nor kept in the resolved log."""
    fd = _signed(queue).fd
    for name in os.listdir(fd):
        stem = name.removesuffix(".json")
        if name.endswith(".json") and id_number(stem) is not None and stem not in keep:
            storage.unlink(fd, name)
