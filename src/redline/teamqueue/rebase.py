"""A decided action whose files changed meanwhile: carried over them (three-way merge).

A reviewer approved a patch made against other file contents, so nothing is written. When
every changed file is a text file the proposal modifies, the proposal is carried over the
files as they are now by :func:`redline.workspace.rebase.rebase_preview` — the same merge
that carries queued actions over an apply — and put back in the local queue under a new id
(mirrored as a new team action that waits for its own decision). Otherwise it stays as it
was, marked stale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.workspace.queue import QueueRecord, WorkspaceQueue

ONTO = "the files on disk"


def carry_over_disk(queue: WorkspaceQueue, record: QueueRecord, stale: list[str]) -> str | None:
    """The new local id of ``record`` carried over the files as they are now, or None (then
    it is marked stale with the reasons in ``stale``)."""
    from redline.workspace import fsutil, paths
    from redline.workspace.hunks import Origin
    from redline.workspace.preview import DecodeError, FileModify, Preview, decode_text
    from redline.workspace.queue import ActionDraft, QueueError
    from redline.workspace.rebase import rebase_preview

    why = "; ".join(stale)
    stale_paths = {reason.rsplit(" (", 1)[0] for reason in stale}
    try:
        with queue.claim(record.id) as claim:
            current = claim.record
            preview = queue.preview(current) if current.applied_by == "preview" else None
            written: list[FileModify] = []
            for change in preview.changes if preview is not None else ():
                if not isinstance(change, FileModify) or change.path not in stale_paths:
                    continue
                try:
                    now = fsutil.read_current(paths.resolve_inside(queue.root, change.path))
                    if now.kind != "file" or now.data is None:
                        continue
                    text, _encoding = decode_text(now.data, change.path)
                except (paths.ConfinementError, DecodeError, OSError):
                    continue
                written.append(
                    FileModify(
                        change.path, change.old_sha256, change.old_text, text, change.encoding
                    )
                )
            if preview is None or {change.path for change in written} != stale_paths:
                claim.back_to_pending(stale_reason=why)
                return None
            rebased = rebase_preview(preview, Preview(written), onto=ONTO)
            if rebased.status != "rebased":
                claim.back_to_pending(stale_reason=why)
                return None
            origin = queue.origin(current) or Origin.of(current.label, preview)
            new = claim.replace(
                ActionDraft(
                    label=current.label,
                    source=current.source,
                    source_tool_name=current.source_tool_name,
                    preview=rebased.preview,
                    details=current.details,
                    kind=current.kind,
                    applied_by="preview",
                    origin=origin,
                ),
                resolved_by="rebase",
            )
            return new.id
    except QueueError:
        return None
