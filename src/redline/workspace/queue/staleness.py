"""A cheap staleness check for listings: compare base hashes with the disk.

Only hashes are compared, so no stored contents are read; the full check (confinement,
encodings, permissions) happens again when an action is applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from redline.workspace import fsutil, paths


def _sha(root: Path, rel: str, cache: dict[str, str | None]) -> str | None:
    """The file's sha256, "" for something that is not a regular file, None if missing."""
    if rel in cache:
        return cache[rel]
    try:
        target = paths.resolve_inside(root, rel)
    except paths.ConfinementError:
        cache[rel] = ""
        return ""
    current = fsutil.read_current(target)
    value: str | None
    if current.kind == "missing":
        value = None
    elif current.kind == "file":
        value = current.sha256 or ""
    else:
        value = ""
    cache[rel] = value
    return value


def quick_stale(root: Path, preview: Any, cache: dict[str, str | None]) -> list[str]:
    """``"path (cause)"`` for each file that changed since the preview; [] when fresh."""
    if not isinstance(preview, dict):
        return []
    reasons: list[str] = []
    for change in preview.get("changes", []):
        if not isinstance(change, dict):
            continue
        kind = change.get("kind")
        if kind in ("modify", "delete", "rename"):
            rel = str(change.get("old_path" if kind == "rename" else "path", ""))
            sha = _sha(root, rel, cache)
            if sha is None:
                reasons.append(f"{rel} (deleted since the preview)")
            elif sha != change.get("old_sha256"):
                reasons.append(f"{rel} (modified since the preview)")
        if kind in ("create", "rename"):
            rel = str(change.get("new_path" if kind == "rename" else "path", ""))
            if _sha(root, rel, cache) is not None:
                reasons.append(f"{rel} (already exists)")
    return reasons
