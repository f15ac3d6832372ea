"""The two hashes a decision is checked against.

- The **patch hash** names exactly what was proposed: the label, who applies it and the
  stored Preview (whose texts are content hashes). A decision carries the patch hash it
  was made on; the follower applies it only if its own record still hashes the same.
- The **base hash** names the file contents the patch was made against.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

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
