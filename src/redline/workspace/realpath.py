"""Where a change really writes: the real path of each file, and the path it was asked as.

A repository may ship a symlinked folder (``tests -> src``). An edit asked for
``tests/app.py`` writes ``src/app.py``; so every Preview names the real path, and keeps
the path asked for in ``Preview.via``. Rules, filters and displays see the real path, so a
rule scoped to ``tests/**`` never reaches ``src/`` through the link (docs/safety.md).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from redline.workspace import paths
from redline.workspace.preview import FileChange, FileModify, FileRename, Preview


def real_relative(root: Path, rel: str, *, follow: bool) -> str:
    """The workspace-relative path ``rel`` really names: every folder on the way resolved,
    and with ``follow`` the file itself when it is a symlink (a modify writes the target;
    a create, delete or rename acts on the link itself). Both the path asked for and the
    real one must be allowed; raises :class:`~redline.workspace.paths.ConfinementError`."""
    root = Path(root).resolve()
    lexical = paths.resolve_inside(root, rel)
    try:
        if follow and lexical.is_symlink():
            physical = lexical.resolve(strict=False)
        else:
            physical = Path(os.path.realpath(lexical.parent)) / lexical.name
        real = paths.relative_to_root(root, physical)
    except RuntimeError:
        raise paths.ConfinementError(f"{rel}: symlink loop") from None
    except (OSError, ValueError) as exc:
        raise paths.ConfinementError(f"{rel}: cannot resolve path: {exc}") from None
    if real != rel:  # ``rel`` itself was checked above: only another path needs it
        paths.resolve_inside(root, real)
    return real


def _real(root: Path, rel: str, follow: bool) -> str:
    try:
        return real_relative(root, rel, follow=follow)
    except paths.ConfinementError:
        return rel  # left as asked: safe apply refuses it with the reason


def canonical_preview(root: Path, preview: Preview) -> Preview:
    """``preview`` with each path replaced by the real path it writes; what was asked
    goes to ``via`` (kept from an earlier canonicalisation). Unchanged when no path
    differs; a path that is not allowed is left as asked (safe apply refuses it)."""
    via = dict(preview.via)
    changes: list[FileChange] = []
    moved = False
    for change in preview.changes:
        follow = isinstance(change, FileModify)
        new: FileChange
        if isinstance(change, FileRename):
            old_real = _real(root, change.old_path, False)
            new_real = _real(root, change.new_path, False)
            new = dataclasses.replace(change, old_path=old_real, new_path=new_real)
            pairs = [(change.old_path, old_real), (change.new_path, new_real)]
        else:
            real = _real(root, change.path, follow)
            new = dataclasses.replace(change, path=real)
            pairs = [(change.path, real)]
        for asked, real in pairs:
            if asked != real:
                moved = True
                via[real] = via.pop(asked, asked)
        changes.append(new)
    if not moved:
        return preview
    return Preview(changes, via=via)
