"""``redline workspaces``: the workspaces redline knows on this machine (docs/inbox.md)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.commands._common import add_workspace_option

if TYPE_CHECKING:
    from redline.workspace.known import Known
    from redline.workspace.queue import QueueRecord, WorkspaceQueue

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)  # marks the current workspace in the text list
    sub = parser.add_subparsers(dest="workspaces_command", metavar="ACTION", required=True)
    listing = sub.add_parser(
        "list",
        help="every workspace whose queue redline opened here: id, path, pending, stale",
        description="Every workspace whose review queue redline created or opened on this "
        "machine (remembered in the user's state folder, $XDG_STATE_HOME/redline/workspaces), "
        "with its id, path and pending and stale actions. A folder that is gone is listed "
        "as missing; two paths with one id as conflict. Exit 0, or 1 if any is missing or in "
        "conflict.",
    )
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    forget = sub.add_parser(
        "forget",
        help="stop listing a workspace (by path or id; its folder is untouched)",
        description="Forget the known workspace at PATH or with id ID (default: this "
        "workspace). Its folder and queue are untouched; redline remembers it again when "
        "its queue is next opened. Exit 0 forgotten, 2 not known.",
    )
    forget.add_argument("which", metavar="PATH|ID", nargs="?", default=None)


@dataclass
class Row:
    known: Known
    id: str | None
    missing: bool
    pending: int | None
    stale: int | None
    conflict: bool = False
    problem: str = ""
    stale_ids: frozenset[str] = frozenset()
    #: The live dashboards and followers watching it (workspace/presence.py).
    watched_by: list[dict[str, object]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "path": self.known.path,
            "pending": self.pending,
            "stale": self.stale,
            "watched_by": self.watched_by,
            "missing": self.missing,
            "conflict": self.conflict,
        }
        if self.problem:
            data["problem"] = self.problem
        return data


def _ident(known: Known, root: Path) -> str:
    """The team queue's id of the workspace (a configured one wins; else cached, else
    computed -- which runs git -- and cached): the inbox's own
    (``review.all_workspaces.workspace_ident``). OSError when it cannot be found."""
    from redline.review.all_workspaces import workspace_ident

    return workspace_ident(known, root)


#: Called with each listed workspace's row, its open queue and its pending records.
Visit = Callable[[Row, "WorkspaceQueue", "list[QueueRecord]"], None]


def _row(known: Known, visit: Visit | None = None) -> Row:
    from redline.workspace.presence import watchers
    from redline.workspace.queue import QueueError, WorkspaceQueue

    root = Path(known.path)
    if not os.path.isdir(root):
        return Row(known, known.id, True, None, None)
    row = Row(known, known.id, False, 0, 0)
    # Listing is where a killed dashboard's leftover presence file is removed.
    row.watched_by = [p.to_json() for p in watchers(root, prune=True)]
    try:
        row.id = _ident(known, root)
    except OSError as exc:
        row.problem = str(exc)
    if not os.path.isdir(root / ".redline" / "queue"):
        return row  # its queue was removed: never create it again just to count
    try:
        with WorkspaceQueue(root) as queue:
            records = queue.list()
            cache: dict[str, str | None] = {}
            row.pending = len(records)
            row.stale_ids = frozenset(
                r.id for r in records if r.stale or bool(queue.stale_reasons(r, cache))
            )
            row.stale = len(row.stale_ids)
            queue.remember_hashes()
            if visit is not None:
                visit(row, queue, records)
    except QueueError as exc:
        row.problem = str(exc)
        row.pending = row.stale = None
    return row


def located(wsid: str) -> tuple[str | None, str]:
    """The path of the known workspace with id ``wsid``, or None and why not (reads no
    queue; runs git only for an id not yet cached)."""
    from redline.workspace.known import read_all

    found: list[str] = []
    gone: list[str] = []
    for known in read_all():
        if not os.path.isdir(known.path):
            if known.id == wsid:
                gone.append(known.path)
            continue
        try:
            ident = _ident(known, Path(known.path))
        except OSError:
            continue
        if ident == wsid:
            found.append(known.path)
    if len(found) > 1:
        return None, (
            f"workspace id {wsid} is shared by {' and '.join(found)} (a conflict; see "
            "`redline workspaces list`): give one of them its own [queue] workspace_id"
        )
    if found:
        return found[0], ""
    if gone:
        return None, f"workspace {wsid} ({gone[0]}) is missing: its folder is gone"
    return None, f"unknown workspace {wsid} here; for the team queue add --queue URL"


def rows(visit: Visit | None = None) -> list[Row]:
    """Every known workspace's row; ``visit`` sees each one's pending records (after its id
    is found, before conflicts are marked)."""
    from redline.workspace.known import read_all

    found = [_row(known, visit) for known in read_all()]
    seen: dict[str, int] = {}
    for row in found:
        if row.id:
            seen[row.id] = seen.get(row.id, 0) + 1
    for row in found:
        row.conflict = bool(row.id) and seen[row.id or ""] > 1
    return found


def run(args: argparse.Namespace) -> int:
    from redline.paths import UserDirError
    from redline.workspace.known import known_dir

    try:
        folder = known_dir()
        if args.workspaces_command == "forget":
            return _forget(args)
        return _list(args, folder)
    except UserDirError as exc:
        print(f"redline workspaces: {exc}", file=sys.stderr)
        return EXIT_FAILED


def _list(args: argparse.Namespace, folder: Path) -> int:
    import json

    found = rows()
    status = EXIT_FAILED if any(r.missing or r.conflict for r in found) else EXIT_OK
    if args.json:
        print(json.dumps({"workspaces": [r.to_json() for r in found]}))
        return status
    notifier = _notifier(args)
    from redline.termtext import one_line

    print(f"Known workspaces (from {folder}):")
    if not found:
        print("  none yet: redline remembers a workspace when its queue is first opened")
        print(f"notify: {one_line(notifier)}")
        return status
    here = str(Path(args.cwd).resolve()) if args.cwd else ""
    for row in found:
        mark = "*" if row.known.path == here else " "
        if row.missing:
            what = "missing (the folder is gone; `redline workspaces forget` drops it)"
        else:
            what = f"{row.pending} pending, {row.stale} stale"
        notes = [what]
        if row.conflict:
            notes.append(f"conflict: another known path has the id {row.id}")
        if row.problem:
            notes.append(one_line(row.problem))
        if row.watched_by:
            notes.append("watched by " + ", ".join(_watcher_text(w) for w in row.watched_by))
        print(f"{mark} {row.id or '-':<13} {one_line(row.known.path)}  ({'; '.join(notes)})")
    print(f"notify: {one_line(notifier)}")
    return status


def _watcher_text(watcher: dict[str, object]) -> str:
    kind = {"all": "redline --all", "team": "team dashboard"}.get(str(watcher["kind"]))
    return f"{kind or watcher['kind']} (pid {watcher['pid']})"


def _notifier(args: argparse.Namespace) -> str:
    """What tells the person of an action no dashboard watches, from here (the user's
    ``[notify]``, and this workspace's when it is trusted)."""
    from redline.config import ConfigError, notify_settings
    from redline.notify import availability

    here = Path(args.cwd).resolve() if args.cwd else None
    try:
        config = notify_settings(here if here is not None and here.is_dir() else None)
    except ConfigError as exc:
        return f"none available ({exc})"
    return availability(config)


def _forget(args: argparse.Namespace) -> int:
    from redline.workspace.known import forget, read_all

    which = args.which if args.which is not None else args.cwd
    entries = read_all()
    as_path = os.path.realpath(os.path.abspath(which))
    chosen = [k for k in entries if k.path in (which, as_path, os.path.abspath(which))]
    if not chosen:
        chosen = [k for k in entries if k.id == which]
    if not chosen:
        print(
            f"redline workspaces forget: {which!r} is neither the path nor the id of a known "
            "workspace (see `redline workspaces list`)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    for known in chosen:
        try:
            forget(known)
        except OSError as exc:
            print(
                f"redline workspaces forget: cannot remove {known.file}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return EXIT_FAILED
        print(f"Forgot {known.path} (its folder and queue are untouched).")
    return EXIT_OK
