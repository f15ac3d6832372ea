"""Viewed marks: a person marks a file of an action viewed.

A mark is kept as the hash of the file's changed lines — its hunks' ``-``/``+`` lines
without line numbers or context — so a rebase that only moved the change keeps the mark,
and any change to the agent's edit of that file clears it. Stored in the action's
conversation document (:mod:`redline.workspace.queue.conversation`) under its claim.
"""

from __future__ import annotations

import hashlib

from redline.workspace.preview import FileChange, Preview
from redline.workspace.queue import QueueError, QueueRecordError, WorkspaceQueue
from redline.workspace.queue import conversation as store


class ViewedError(ValueError):
    """Bad input: a path that is not a file of the action."""


def change_hash(preview: Preview, change: FileChange) -> str:
    """The hash of one file's changed lines (``-``/``+`` lines of its diff, in order)."""
    digest = hashlib.sha256(change.kind.encode("ascii") + b"\0")
    for line in preview.file_diff(change, context=0).splitlines(keepends=True):
        if line.startswith(("---", "+++", "@@")):
            continue
        if line.startswith(("-", "+", "rename ", "Binary ")):
            digest.update(line.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _path(change: FileChange) -> str:
    return change.path


def mark_viewed(queue: WorkspaceQueue, action_id: str, path: str | None = None) -> list[str]:
    """Mark ``path`` (default: every file) of the pending ``action_id`` viewed under its
    claim; returns the paths marked. ViewedError for a path that is not one of its files."""
    with queue.claim(action_id, wait=2.0) as claim:
        preview = queue.preview(claim.record)
        if preview is None:
            raise ViewedError(f"{action_id} has no preview of file changes to mark viewed")
        changes = [c for c in preview.changes if path is None or path in c.paths]
        if not changes:
            files = ", ".join(preview.paths) or "none"
            raise ViewedError(f"{path} is not a file of {action_id} (its files: {files})")
        document = store.read(queue, action_id)
        viewed = dict(document["viewed"])
        for change in changes:
            viewed[_path(change)] = change_hash(preview, change)
        document["viewed"] = viewed
        store.write(queue, action_id, document)
    return [_path(c) for c in changes]


def viewed_files(queue: WorkspaceQueue, action_id: str, preview: Preview | None) -> dict[str, bool]:
    """Each file of ``preview`` → whether it is viewed (its mark matches its change now)."""
    if preview is None:
        return {}
    try:
        marks = store.read(queue, action_id)["viewed"]
    except (QueueError, QueueRecordError):
        marks = {}
    return {
        _path(change): marks.get(_path(change)) == change_hash(preview, change)
        for change in preview.changes
    }
