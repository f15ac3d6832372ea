"""The two hashes a decision is checked against.

- The **patch hash** names exactly what was proposed: the label, who applies it and the
  stored Preview (whose texts are content hashes). A decision carries the patch hash it
  was made on; the follower applies it only if its own record still hashes the same.
- The **base hash** names the file contents the patch was made against.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from redline.workspace.hunks import HUNK_NUMBERING as _HUNK_NUMBERING

if TYPE_CHECKING:
    from redline.workspace.queue import QueueRecord


def _digest(data: Any) -> str:
    from redline.workspace.queue.records import canonical

    return hashlib.sha256(canonical(data)).hexdigest()


def patch_hash(record: QueueRecord) -> str:
    return _digest(
        {
            "id": record.id,
            "label": record.label,
            "applied_by": record.applied_by,
            "tool": record.source_tool_name,
            "preview": record.preview,
        }
    )


def base_hash(record: QueueRecord) -> str:
    bases: list[list[Any]] = []
    preview = record.preview if isinstance(record.preview, dict) else {}
    for change in preview.get("changes", []):
        if isinstance(change, dict):
            path = change.get("old_path") or change.get("path")
            bases.append([str(path), change.get("old_sha256")])
    return _digest(sorted(bases))


#: How the hunks a reviewer picks (``PATH#N``) are numbered
#: (:data:`redline.workspace.hunks.HUNK_NUMBERING`). A reviewer's ``--only`` names hunks by
#: these numbers, so the numbering is part of what a decision binds.
HUNK_NUMBERING = _HUNK_NUMBERING


def view_hash(view: dict[str, Any]) -> str:
    """The hash of exactly what a reviewer is shown of one team action (:func:`view_of`)."""
    return _digest(view)


def view_of(
    *,
    team_id: str,
    workspace: str,
    path: str,
    label: str,
    source: str,
    applied_by: str,
    files: list[str],
    added: int,
    removed: int,
    diff: str,
    hunks: list[str],
    numbering: int,
    proposed: dict[str, str],
) -> dict[str, Any]:
    """What a reviewer is shown, as raw values (before any terminal escaping): the row's
    own text, the workspace's id and path, the mirrored diff with its cut marker, the
    hunks' addresses with their numbering and the proposed texts. The reviewer's client,
    the server and the follower (from its own record) all hash this one shape."""
    return {
        "v": 1,
        "id": team_id,
        "workspace": {"id": workspace, "path": path},
        "label": label,
        "source": source,
        "applied_by": applied_by,
        "files": list(files),
        "added": int(added),
        "removed": int(removed),
        "diff": diff,
        "hunks": {"numbering": int(numbering), "addresses": list(hunks)},
        "proposed": dict(proposed),
    }
