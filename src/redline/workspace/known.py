"""The workspaces redline knows on this machine: one file per workspace in the user's state
folder (``$XDG_STATE_HOME/redline/workspaces/``), for ``redline workspaces`` (docs/inbox.md).

Remembering is on the path of every hook call, so it costs one ``open(O_CREAT|O_EXCL)`` of
a name derived from the workspace's path: an existing entry is never read or rewritten
there, and concurrent processes never share a file they rewrite. Only ``redline workspaces
list`` rewrites an entry (to cache the workspace id, whose computation runs git), by an
atomic rename of that one file. A folder that is gone keeps its entry (shown ``missing``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

FOLDER = "workspaces"
SUFFIX = ".json"

#: Workspaces this process must not remember (the demo's throwaway copy).
_not_remembered: set[str] = set()


def known_dir() -> Path:
    from redline.paths import user_state_dir

    return user_state_dir() / FOLDER


def entry_name(real: str) -> str:
    return hashlib.sha256(os.fsencode(real)).hexdigest()[:32] + SUFFIX


def do_not_remember(root: Path) -> None:
    """Never remember ``root`` in this process (a throwaway copy, e.g. the demo's)."""
    _not_remembered.add(str(Path(root).resolve()))


def remember(root: Path) -> None:
    """Remember the workspace at ``root`` (already resolved). Best effort and silent: a
    state folder that cannot be written never stops a queue."""
    real = str(root)
    if real in _not_remembered:
        return
    try:
        folder = known_dir()
    except OSError:
        return
    path = os.path.join(folder, entry_name(real))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(2):
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            return
        except FileNotFoundError:
            try:  # the state folder itself private too, as the state key makes it
                os.makedirs(folder.parent, mode=0o700, exist_ok=True)
                os.makedirs(folder, mode=0o700, exist_ok=True)
            except OSError:
                return
            continue
        except OSError:
            return
        try:
            os.write(fd, _encode({"path": real}))
        except OSError:
            pass
        finally:
            os.close(fd)
        return


def _encode(data: dict[str, str]) -> bytes:
    import json

    return (json.dumps(data, ensure_ascii=True) + "\n").encode("ascii")


@dataclass(frozen=True)
class Known:
    """One remembered workspace: its path and, once computed, its id."""

    path: str
    id: str | None
    file: Path


def read_all() -> list[Known]:
    """Every remembered workspace, by path. An entry still being written (empty) or not
    redline's is skipped."""
    import json

    folder = known_dir()
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    found: list[Known] = []
    for name in names:
        if name.startswith(".") or not name.endswith(SUFFIX):
            continue
        file = folder / name
        try:
            data = json.loads(file.read_bytes())
        except (OSError, ValueError):
            continue
        path = data.get("path") if isinstance(data, dict) else None
        if not isinstance(path, str) or not os.path.isabs(path) or entry_name(path) != name:
            continue
        ident = data.get("id")
        found.append(Known(path, ident if isinstance(ident, str) and ident else None, file))
    found.sort(key=lambda known: known.path)
    return found


def cache_id(known: Known, ident: str) -> None:
    """Keep ``ident`` in ``known``'s entry (one file, replaced atomically); best effort."""
    if known.id == ident:
        return
    temporary = known.file.with_name(f".{known.file.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(_encode({"path": known.path, "id": ident}))
        os.replace(temporary, known.file)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def forget(known: Known) -> None:
    """Forget ``known`` (its folder is untouched). OSError if the entry cannot be removed."""
    with contextlib.suppress(FileNotFoundError):
        known.file.unlink()


__all__ = ["Known", "cache_id", "do_not_remember", "forget", "known_dir", "read_all", "remember"]
