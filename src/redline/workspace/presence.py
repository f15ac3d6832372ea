"""Who is watching: the dashboards and followers running now (docs/inbox.md).

Each dashboard of a workspace (``redline``, a team dashboard started in one) and each
``redline pending follow`` writes ``.redline/presence/<pid>.json`` while it runs; a
dashboard over every known workspace (``redline --all``) writes the same file in the user's
state folder (``$XDG_STATE_HOME/redline/presence/``), since it watches them all. A file
holds the pid and the process's start time, checked the way the queue checks an action's
owner (:mod:`redline.workspace.procs`): a file whose process has ended — killed, so it
could not remove it — is ignored, and removed by the next ``redline workspaces list``.

:func:`watched` is on the path of every proposal that may notify (a hook call), so it
reads two small folders and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from redline.workspace.procs import is_alive, process_start_time

FOLDER = "presence"
SUFFIX = ".json"

#: What a presence is: a workspace's dashboard, a team dashboard started in the
#: workspace, a team queue follower, or a dashboard over every known workspace.
PresenceKind = Literal["dashboard", "team", "follower", "all"]
KINDS: tuple[str, ...] = ("dashboard", "team", "follower", "all")


class Presence:
    """One watching process (a plain class: no dataclass code generation on the hook's
    path)."""

    __slots__ = ("file", "kind", "pid", "since", "start_time")

    def __init__(
        self, pid: int, start_time: int | None, kind: str, since: float, file: Path
    ) -> None:
        self.pid = pid
        self.start_time = start_time
        self.kind = kind
        self.since = since
        self.file = file

    def __repr__(self) -> str:
        return f"Presence(pid={self.pid}, kind={self.kind!r})"

    def alive(self) -> bool:
        return is_alive(self.pid, self.start_time)

    def to_json(self) -> dict[str, object]:
        """What ``redline workspaces list --json`` shows in ``watched_by``."""
        from datetime import UTC, datetime

        return {
            "pid": self.pid,
            "kind": self.kind,
            "since": datetime.fromtimestamp(self.since, UTC).isoformat(timespec="seconds"),
        }


def workspace_folder(root: Path) -> Path:
    """``.redline/presence`` of the workspace at ``root``."""
    from redline.workspace.state import state_dir

    return state_dir(root) / FOLDER


def user_folder() -> Path:
    """The user's presence folder (dashboards over every known workspace)."""
    from redline.paths import user_state_dir

    return user_state_dir() / FOLDER


def _read(folder: Path) -> list[Presence]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found: list[Presence] = []
    for name in names:
        if name.startswith(".") or not name.endswith(SUFFIX):
            continue
        file = folder / name
        try:
            data = json.loads(file.read_bytes())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        pid, start, kind, since = (data.get(k) for k in ("pid", "start_time", "kind", "since"))
        if (
            not isinstance(pid, int)
            or isinstance(pid, bool)
            or name != f"{pid}{SUFFIX}"
            or not (start is None or (isinstance(start, int) and not isinstance(start, bool)))
            or kind not in KINDS
            or not isinstance(since, int | float)
        ):
            continue
        found.append(Presence(pid, start, str(kind), float(since), file))
    found.sort(key=lambda p: (p.since, p.pid))
    return found


def watchers(root: Path, *, prune: bool = False) -> list[Presence]:
    """The live processes watching the workspace at ``root``: its own presence files and
    the user's ``all`` ones. ``prune``: remove the files of processes that have ended."""
    found: list[Presence] = []
    for folder in (workspace_folder(root), _user_folder_or_none()):
        if folder is None:
            continue
        for presence in _read(folder):
            if presence.alive():
                found.append(presence)
            elif prune:
                with contextlib.suppress(OSError):
                    presence.file.unlink()
    return found


def watched(root: Path) -> bool:
    """Whether any live dashboard or follower watches ``root`` (or every workspace)."""
    for folder in (workspace_folder(root), _user_folder_or_none()):
        if folder is not None and any(p.alive() for p in _read(folder)):
            return True
    return False


def _user_folder_or_none() -> Path | None:
    try:
        return user_folder()
    except Exception:  # no usable home or state folder: nobody can watch from there
        return None


def _folder_fd(root: Path | None) -> tuple[int, Path]:
    """A descriptor of the presence folder to write in (made private when missing)."""
    if root is not None:
        from redline.workspace.state import open_state_dir

        # Every component checked: a symlinked .redline never redirects the write.
        return open_state_dir(root, FOLDER), workspace_folder(root)
    folder = user_folder()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), folder


def _write(root: Path | None, kind: str) -> Path:
    """This process's presence file, written whole (a rename): readers never see half."""
    fd, folder = _folder_fd(root)
    try:
        pid = os.getpid()
        data = {
            "pid": pid,
            "start_time": process_start_time(pid),
            "kind": kind,
            "since": time.time(),
        }
        name, temporary = f"{pid}{SUFFIX}", f".{pid}{SUFFIX}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(temporary, flags, 0o600, dir_fd=fd)
        try:
            os.write(out, (json.dumps(data) + "\n").encode("ascii"))
        finally:
            os.close(out)
        os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)
    return folder / name


def _remove(file: Path) -> None:
    """Remove ``file`` if it is still this process's (a pid reused later writes its own)."""
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(file.read_bytes())
        if isinstance(data, dict) and data.get("pid") == os.getpid():
            file.unlink()


@contextlib.contextmanager
def present(root: Path | None, kind: PresenceKind) -> Iterator[Path | None]:
    """This process watches ``root`` (None with ``kind="all"``: every known workspace)
    while the block runs; the file is removed on the way out. Best effort: a presence that
    cannot be written never stops a dashboard (yields None then)."""
    if kind not in KINDS:
        raise ValueError(f"unknown presence kind {kind!r}: expected one of {KINDS}")
    if (kind == "all") != (root is None):
        raise ValueError("a presence of kind 'all' has no workspace; every other kind has one")
    file: Path | None = None
    try:
        file = _write(root, kind)
    except Exception:
        file = None
    try:
        yield file
    finally:
        if file is not None:
            _remove(file)


__all__ = [
    "KINDS",
    "Presence",
    "PresenceKind",
    "present",
    "user_folder",
    "watched",
    "watchers",
    "workspace_folder",
]
