"""Check results stored beside an action: ``.redline/queue/checks/pa-N.json``.

A separate signed document per action (purpose ``queue-checks``), so the action's own record
(and its signature) never changes when a check finishes, and every process (dashboard,
``redline pending``, MCP) reads the same results. Like every queue file it is written
atomically and verified before it is read; a document that does not verify is reported,
never shown as results. What it holds is up to :mod:`redline.checks.results`.
"""

from __future__ import annotations

from typing import Any

from redline.workspace.queue import storage
from redline.workspace.queue.base import QueueBase, check_id, record_name
from redline.workspace.queue.records import QueueUnavailable

CHECKS = "checks"
PURPOSE_CHECKS = "queue-checks"


def _signed(queue: QueueBase) -> storage.Signed:
    return queue._signed(CHECKS, PURPOSE_CHECKS, "check results")


def read_check_results(queue: QueueBase, action_id: str) -> dict[str, Any] | None:
    """The verified document of ``action_id`` (None when there is none); raises
    :class:`~redline.workspace.queue.QueueRecordError` when it cannot be used."""
    return _signed(queue).read(record_name(check_id(action_id)), action_id)


def write_check_results(queue: QueueBase, action_id: str, document: dict[str, Any]) -> None:
    """Replace ``action_id``'s document atomically (QueueUnavailable on failure)."""
    _signed(queue).write(record_name(check_id(action_id)), document, action_id, sync_dir=False)


def remove_check_results(queue: QueueBase, action_id: str) -> None:
    signed = _signed(queue)
    try:
        storage.unlink(signed.fd, record_name(check_id(action_id)))
    except OSError as exc:
        raise QueueUnavailable(
            f"Cannot remove the check results of {action_id}: {storage.error_text(exc)}."
        ) from None


def checked_ids(queue: QueueBase) -> list[str]:
    """The ids that have a results document (verified or not)."""
    import os

    from redline.workspace.queue.records import id_number

    names = os.listdir(_signed(queue).fd)
    return [
        n.removesuffix(".json")
        for n in names
        if n.endswith(".json") and id_number(n.removesuffix(".json")) is not None
    ]
