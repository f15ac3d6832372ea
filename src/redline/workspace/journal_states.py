"""What one journaled apply did to one file, as bytes: before and after.

The journal keeps the old bytes of every file an apply changed and only the hash of the
new ones. Undoing one action of a commit that holds several actions' changes to the same
file needs that action's own change, so :func:`own_change` finds its new bytes among
candidates the caller knows (the committed text, the file on disk) or among the old bytes
a later apply of the same file saved.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from redline.workspace import entries
from redline.workspace.entries import CorruptEntry, Entry
from redline.workspace.preview import sha256_bytes

#: An action's change of one file: (bytes before, bytes after); None: no file there.
Change = tuple[bytes | None, bytes | None]


def _entries(root: Path) -> list[Entry]:
    found: list[Entry] = []
    for _folder, loaded in entries.iter_entries(Path(root).resolve()):
        if isinstance(loaded, Entry) and loaded.complete:
            found.append(loaded)
    return found


def own_change(
    root: Path, entry_id: str, path: str, candidates: Iterable[bytes | None] = ()
) -> Change | None:
    """``path``'s bytes before and after the apply ``entry_id`` (a workspace path), or
    None when the journal cannot tell (the entry or its saved bytes are gone)."""
    known = _entries(root)
    entry = next((e for e in known if e.id == entry_id), None)
    if entry is None:
        return None
    op = next((o for o in entry.ops if o.path == path), None)
    if op is None:
        return None
    try:
        before = None if op.before is None else entries.read_blob(entry, op.before.sha256)
    except (OSError, CorruptEntry):
        return None
    if op.after is None:
        return before, None
    wanted = op.after.sha256
    for data in candidates:
        if data is not None and sha256_bytes(data) == wanted:
            return before, data
    # A later apply of the same file saved these bytes as its old contents.
    for later in known:
        if later.id <= entry_id:
            continue
        for other in later.ops:
            if other.path == path and other.before is not None and other.before.sha256 == wanted:
                try:
                    return before, entries.read_blob(later, wanted)
                except (OSError, CorruptEntry):
                    continue
    return None


def action_of(root: Path, entry_id: str) -> str | None:
    """The pending action (``pa-7``) the journaled apply ``entry_id`` came from, if known."""
    try:
        found = next((e for e in _entries(root) if e.id == entry_id), None)
    except OSError:
        return None
    return found.action_id if found is not None else None


__all__ = ["Change", "action_of", "own_change"]
