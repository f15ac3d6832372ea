"""The durable review queue of a workspace (``.redline/queue/``); see docs/queue.md."""

from redline.workspace.queue.core import (
    ActionDraft,
    Claim,
    QueueWatcher,
    RecordSummary,
    SessionView,
    WorkspaceQueue,
    check_id,
)
from redline.workspace.queue.records import (
    FORMAT_VERSION,
    ORPHANED_REASON,
    ActionBusy,
    ActionGone,
    OwnerRequest,
    QueueError,
    QueueRecord,
    QueueRecordError,
    QueueUnavailable,
    ReplayedRecord,
    Resolution,
    Source,
    iso_utc,
)

__all__ = [
    "FORMAT_VERSION",
    "ORPHANED_REASON",
    "ActionBusy",
    "ActionDraft",
    "ActionGone",
    "Claim",
    "OwnerRequest",
    "QueueError",
    "QueueRecord",
    "QueueRecordError",
    "QueueUnavailable",
    "QueueWatcher",
    "RecordSummary",
    "ReplayedRecord",
    "Resolution",
    "SessionView",
    "Source",
    "WorkspaceQueue",
    "check_id",
    "iso_utc",
]
