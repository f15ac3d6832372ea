"""``redline queue``: set up the team queue's database and show this workspace's place in it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from redline.commands._common import add_workspace_option

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
QUEUE_HELP = (
    "the team queue's PostgreSQL URL (default: $REDLINE_QUEUE_URL, else [queue] url in the "
    "config; see docs/team-queue.md)"
)


def add_queue_option(parser: argparse.ArgumentParser, *, extra: str = "") -> None:
    parser.add_argument("--queue", metavar="URL", default=None, help=QUEUE_HELP + extra)


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    add_queue_option(parser)
    sub = parser.add_subparsers(dest="queue_command", metavar="ACTION", required=True)
    init = sub.add_parser(
        "init",
        help="create or migrate the team queue's tables (idempotent)",
        description="Create or migrate the team queue's tables in the database of --queue "
        "URL. Safe to run again, and from several places at once.",
    )
    add_queue_option(init)
    status = sub.add_parser(
        "status",
        help="this workspace's id and path, and the team queue it uses",
        description="This workspace's id (what `pending list --queue URL` shows) and path, "
        "the queue URL (password hidden) and where it was set, and the database's state.",
    )
    add_queue_option(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")


def _err(text: str) -> None:
    print(f"redline queue: {text}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from redline.teamqueue.settings import TeamQueueError, queue_settings

    root = Path(args.cwd)
    try:
        settings = queue_settings(root, args.queue)
    except TeamQueueError as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    for warning in settings.warnings:
        _err(f"warning: {warning}")
    if args.queue_command == "init":
        return _init(settings.url)
    return _status(root, settings, args.json)


def _init(url: str | None) -> int:
    from redline.redaction import redact_url
    from redline.teamqueue.db import LATEST, migrate, session
    from redline.teamqueue.settings import TeamQueueError

    if url is None:
        _err("no team queue: pass --queue URL, set $REDLINE_QUEUE_URL or [queue] url")
        return EXIT_BAD_INPUT
    try:
        with session(url) as conn:
            applied = migrate(conn)
    except TeamQueueError as exc:
        _err(str(exc))
        return EXIT_FAILED
    shown = redact_url(url)
    if applied:
        print(f"Migrated {shown} to schema version {LATEST} (applied: {applied}).")
    else:
        print(f"{shown} is up to date (schema version {LATEST}).")
    return EXIT_OK


def _status(root: Any, settings: Any, as_json: bool) -> int:
    import json

    from redline.redaction import redact_url
    from redline.teamqueue.db import LATEST, schema_version, session
    from redline.teamqueue.settings import TeamQueueError, workspace_id

    try:
        ident = workspace_id(root, settings.workspace_id)
    except TeamQueueError as exc:
        _err(str(exc))
        return EXIT_FAILED
    data: dict[str, Any] = {
        "workspace": {"id": ident, "path": str(root.resolve())},
        "url": redact_url(settings.url) if settings.url else None,
        "url_from": settings.origin,
        "reachable": None,
        "schema_version": None,
        "counts": {},
    }
    problem = ""
    if settings.url:
        try:
            with session(settings.url) as conn:
                data["reachable"] = True
                data["schema_version"] = version = schema_version(conn)
                if version >= 1:
                    rows = conn.execute(
                        "SELECT state, count(*) FROM redline_actions WHERE workspace = %s"
                        " GROUP BY state",
                        (ident,),
                    ).fetchall()
                    data["counts"] = {str(state): int(n) for state, n in rows}  # type: ignore[call-overload]
        except TeamQueueError as exc:
            data["reachable"] = False
            problem = str(exc)
    if as_json:
        if problem:
            data["problem"] = problem
        print(json.dumps(data, sort_keys=True))
        return EXIT_OK if data["reachable"] is not False else EXIT_FAILED
    print(f"workspace: {ident}  {data['workspace']['path']}")
    if not settings.url:
        print("team queue: none (the local queue only); see docs/team-queue.md")
        return EXIT_OK
    print(f"team queue: {data['url']} (from {settings.origin})")
    if problem:
        print(f"database: unreachable: {problem}")
        return EXIT_FAILED
    version = data["schema_version"]
    if version < LATEST:
        print(f"database: schema version {version}; run `redline queue init` (needs {LATEST})")
        return EXIT_FAILED
    counts = ", ".join(f"{n} {state}" for state, n in sorted(data["counts"].items()))
    print(f"database: schema version {version}; this workspace: {counts or 'no actions yet'}")
    return EXIT_OK
