"""What ``pending show --json`` says of a revision: its number, the action it revises, the
interdiff (the previous revision's proposed text to this one's, file by file) and whether
the files under it changed between the two (``base_changed``).

The link itself is made at push (:mod:`redline.workspace.queue.revisions`); the previous
revision's texts are read from the resolved log, which keeps the record of a discarded
action (and the contents it refers to) as long as it keeps the action.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redline.workspace.preview import (
    FileChange,
    FileCreate,
    FileDelete,
    FileModify,
    Preview,
)
from redline.workspace.queue import QueueError, QueueRecord, WorkspaceQueue


@dataclass(frozen=True)
class RevisionInfo:
    number: int
    of: str
    interdiff: str
    base_changed: bool
    #: The previous revision's Preview (None: the resolved log no longer has it).
    previous: Preview | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "of": self.of,
            "interdiff": self.interdiff,
            "base_changed": self.base_changed,
        }


def _proposed(change: FileChange) -> str | None:
    if isinstance(change, (FileModify, FileCreate)):
        return change.new_text
    if isinstance(change, FileDelete):
        return ""
    return None


def _base(change: FileChange) -> str | None:
    if isinstance(change, (FileModify, FileDelete)):
        return change.old_text
    return None


def _texts(preview: Preview, pick: Any) -> dict[str, str | None]:
    return {change.path: pick(change) for change in preview.changes}


def interdiff(previous: Preview, current: Preview, of: str, this: str) -> str:
    """The unified diff, per file, from ``previous``'s proposed text to ``current``'s
    (``--- pa-K/PATH`` / ``+++ pa-N/PATH``); a file only one of them touches shows as
    the whole of its proposed text added or dropped."""
    before = _texts(previous, _proposed)
    after = _texts(current, _proposed)
    out: list[str] = []
    for path in [*after, *(p for p in before if p not in after)]:
        old, new = before.get(path) or "", after.get(path) or ""
        if old == new:
            continue
        change = FileModify(path, "", old, new)
        diff = Preview([change]).file_diff(change)
        if not diff:
            continue
        body = diff.split("\n", 2)[2]
        out.append(f"--- {of}/{path}\n+++ {this}/{path}\n{body}")
    return "".join(out)


def previous_preview(queue: WorkspaceQueue, of: str) -> Preview | None:
    """The Preview the revised action proposed (None: no longer kept or unreadable)."""
    try:
        resolution = queue.resolution(of)
        if resolution is None or resolution.record is None:
            return None
        record = QueueRecord.from_dict(resolution.record, of)
        return queue.preview(record)
    except QueueError:
        return None


def revision_info(
    queue: WorkspaceQueue, record: QueueRecord, preview: Preview | None
) -> RevisionInfo | None:
    """``record``'s revision facts (None: it revises nothing)."""
    if record.revision_of is None:
        return None
    previous = previous_preview(queue, record.revision_of)
    if previous is None or preview is None:
        return RevisionInfo(record.revision, record.revision_of, "", False, previous)
    bases = _texts(previous, _base)
    changed = any(
        path in bases and bases[path] != base for path, base in _texts(preview, _base).items()
    )
    return RevisionInfo(
        record.revision,
        record.revision_of,
        interdiff(previous, preview, record.revision_of, record.id),
        changed,
        previous,
    )
