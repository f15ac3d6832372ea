"""A remote reviewer's edit, carried out in the workspace that made the proposal.

The same replacement as ``redline pending edit`` in the workspace: the proposal's file gets
the reviewer's text (against the same base, so safe apply's stale check still holds) and
the action is replaced by the edited one under a new id, which is mirrored and waits for a
decision of its own. Nothing is written to the workspace's files here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from redline.teamqueue.settings import team_id

if TYPE_CHECKING:
    from redline.workspace.queue import QueueRecord, WorkspaceQueue


#: The longest edited text a follower takes from the team queue (characters).
MAX_EDIT_CHARS = 10_000_000


def edit_record(
    queue: WorkspaceQueue, record: QueueRecord, workspace: str, path: str, text: str
) -> tuple[str, str]:
    """``("gone", what replaced it)`` when edited, else ``("refused", why)``."""
    from redline.workspace.hunks import HunkError, Origin, edit_file
    from redline.workspace.queue import ActionDraft, QueueError

    if len(text) > MAX_EDIT_CHARS:
        return "refused", f"the edited text of {path} is longer than {MAX_EDIT_CHARS} characters"
    try:
        with queue.claim(record.id) as claim:
            current = claim.record
            if current.applied_by != "preview":
                return "refused", f"{current.id} ({current.label}) has no editable preview"
            preview = queue.preview(current)
            if preview is None:
                return "refused", f"{current.id} ({current.label}) has no preview of file changes"
            try:
                edited = edit_file(preview, path, text)
            except HunkError as exc:
                return "refused", f"the edit cannot be used: {exc}"
            if not edited.changed:
                return "refused", f"the edit leaves {path} as proposed: nothing to replace"
            origin = queue.origin(current) or Origin.of(current.label, preview)
            new = claim.replace(
                ActionDraft(
                    label=current.label,
                    source=current.source,
                    source_tool_name=current.source_tool_name,
                    preview=edited.preview,
                    details=current.details,
                    kind=current.kind,
                    applied_by="preview",
                    applied_text=current.applied_text,
                    origin=origin.with_proposal(preview),
                ),
                resolved_by="person",
            )
    except QueueError as exc:
        return "refused", f"the local record cannot be edited: {exc}"
    notes = "".join(f"; warning: {w}" for w in edited.warnings)
    return "gone", (
        f"edited {path}: replaced by {team_id(workspace, new.id)}, which waits for its own "
        f"decision{notes}"
    )
