"""One pending action as ``redline pending list --json`` prints it (also ``list --all``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redline.workspace.queue import QueueRecord, WorkspaceQueue


def action_json(
    queue: WorkspaceQueue, record: QueueRecord, *, pending: bool = True
) -> dict[str, Any]:
    """The ``list --json`` object of one action (the issue's contract, nothing more)."""
    from redline.workspace.queue import iso_utc

    stale = record.stale or (pending and bool(queue.stale_reasons(record)))
    return {
        "id": record.id,
        "label": record.label,
        "source_tool_name": record.source_tool_name,
        "source": {
            "kind": record.source.kind,
            "name": record.source.name,
            "session_id": record.source.session_id,
        },
        "applied_by": record.applied_by,
        "files": list(record.files),
        # Real path -> the path it was asked as, where a symlinked folder made them differ.
        "via": dict(record.via),
        "added": record.added,
        "removed": record.removed,
        "stale": stale,
        "orphaned": pending and record.orphaned(),
        "created_at": iso_utc(record.created_at),
        "edited": record.edited,
    }
