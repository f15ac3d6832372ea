"""Who this workspace is: the id the team queue, the decisions log and the
``Redline-Workspace`` trailer share.

Configured (``[queue] workspace_id``) wins; in git it is a hash of the repository's root
commit and the workspace's real path (two clones on one machine differ; the id survives
new commits); otherwise a random id kept in the user's state folder per path.
(:func:`redline.review.provenance.workspace_id_of` reads the configured id for commits.)
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
from pathlib import Path

ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


class WorkspaceIdError(OSError):
    """The id cannot be found or stored; the message names the folder and the way out."""


def workspace_id(root: Path, configured: str | None = None) -> str:
    """A stable id for the workspace at ``root`` (``configured`` wins)."""
    if configured:
        return configured
    real = os.path.realpath(root)
    from redline.workspace.git import GitError, repo_of, run_git

    repo = repo_of(Path(real))
    if repo is not None:
        try:
            done = run_git(repo.top, "rev-list", "--max-parents=0", "HEAD")
        except GitError:
            done = None
        roots = sorted(done.stdout.decode("ascii", "replace").split()) if done else []
        if done is not None and done.returncode == 0 and roots:
            digest = hashlib.sha256(f"{roots[0]}\0{real}".encode()).hexdigest()
            return f"g{digest[:11]}"
    return _stored_id(real)


def _stored_id(real: str) -> str:
    from redline.paths import user_state_dir

    folder = user_state_dir() / "workspace-ids"
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:32]
    path = folder / key
    try:
        text = path.read_text(encoding="ascii").strip()
        if text.startswith("w") and len(text) == 12 and set(text) <= ID_CHARS:
            return text
    except (OSError, UnicodeDecodeError):
        pass
    new = "w" + secrets.token_hex(6)[:11]
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = folder / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
        temporary.write_text(new + "\n", encoding="ascii")
        try:
            os.link(temporary, path)  # first writer wins; a racing one reads the winner's
        except FileExistsError:
            return _stored_id_read(path) or new
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as exc:
        raise WorkspaceIdError(
            f"cannot store this workspace's id in {folder}: {exc.strerror or exc}; "
            "set [queue] workspace_id in your config instead"
        ) from None
    return new


def _stored_id_read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if text.startswith("w") and set(text) <= ID_CHARS else None


__all__ = ["ID_CHARS", "WorkspaceIdError", "workspace_id"]
