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
        help="this workspace's id and path, the team queue it uses, and who has which rights",
        description="This workspace's id (what `pending list --queue URL` shows) and path, "
        "the queue URL (password hidden) and where it was set, and the database's state.",
    )
    add_queue_option(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")
    grant = sub.add_parser(
        "grant",
        help="give a database role a right in the team queue (run as the tables' owner)",
        description="Give ROLE (an existing database role: this never creates login roles) "
        "a right in this team queue: --reviewer decides (decisions name it --name/--email, "
        "else `ROLE (team queue role)`); --agent-host registers its workspaces, mirrors "
        "their proposals and writes results back (--workspace pre-assigns an id before its "
        "first mirror). Exit 0 done, 1 refused or unreachable, 2 bad input.",
    )
    grant.add_argument("role", metavar="ROLE")
    which = grant.add_mutually_exclusive_group(required=True)
    which.add_argument("--reviewer", action="store_true", help="may decide actions")
    which.add_argument(
        "--agent-host", action="store_true", help="may register workspaces and mirror into them"
    )
    grant.add_argument("--name", default=None, help="the reviewer's name in decisions")
    grant.add_argument("--email", default=None, help="the reviewer's email in decisions")
    grant.add_argument(
        "--workspace",
        metavar="ID",
        action="append",
        default=[],
        help="an agent host's workspace id, assigned to it now (repeatable)",
    )
    add_queue_option(grant)
    revoke = sub.add_parser(
        "revoke",
        help="take a right from a database role (run as the tables' owner)",
        description="Take ROLE's rights in this team queue (all of them, or the one "
        "named). Revoking a reviewer voids its decisions not yet carried out (back to "
        "pending, noted in the row). Exit 0 done, 1 refused or unreachable, 2 bad input.",
    )
    revoke.add_argument("role", metavar="ROLE")
    what = revoke.add_mutually_exclusive_group()
    what.add_argument("--reviewer", action="store_true", help="only the reviewer right")
    what.add_argument("--agent-host", action="store_true", help="only the agent-host right")
    what.add_argument("--workspace", metavar="ID", default=None, help="only this workspace")
    add_queue_option(revoke)


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
    if args.queue_command in ("grant", "revoke"):
        return _members(args, settings.url)
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
            applied = migrate(conn, say=lambda line: print(f"redline queue init: {line}"))
    except TeamQueueError as exc:
        _err(str(exc))
        return EXIT_FAILED
    shown = redact_url(url)
    if applied:
        print(f"Migrated {shown} to schema version {LATEST} (applied: {applied}).")
    else:
        print(f"{shown} is up to date (schema version {LATEST}).")
    return EXIT_OK


def _members(args: argparse.Namespace, url: str | None) -> int:
    """``queue grant`` / ``queue revoke``: rights in ``redline_members``, as the owner."""
    from redline.teamqueue.db import require_schema, session
    from redline.teamqueue.members import BadMember, grant, revoke
    from redline.teamqueue.settings import TeamQueueError, check_workspace_id

    command = args.queue_command
    if url is None:
        _err("no team queue: pass --queue URL, set $REDLINE_QUEUE_URL or [queue] url")
        return EXIT_BAD_INPUT
    role = args.role.strip()
    try:
        if not role or len(role) > 63 or "\x00" in role:
            raise TeamQueueError(f"{args.role!r} is not a database role name")
        if command == "grant":
            if not args.reviewer and (args.name is not None or args.email is not None):
                raise TeamQueueError("--name and --email name a reviewer: use them with --reviewer")
            if args.reviewer and args.workspace:
                raise TeamQueueError("--workspace assigns a workspace to an --agent-host")
            for value, flag in ((args.name, "--name"), (args.email, "--email")):
                if value is not None and (not value.strip() or not value.isprintable()):
                    raise TeamQueueError(f"{flag} {value!r}: expected printable text")
            for ident in args.workspace:
                check_workspace_id(ident, "--workspace")
        elif args.workspace is not None:
            check_workspace_id(args.workspace, "--workspace")
    except TeamQueueError as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    try:
        with session(url) as conn:
            require_schema(conn)
            if command == "grant":
                said = grant(
                    conn,
                    role,
                    "reviewer" if args.reviewer else "agent-host",
                    workspaces=list(args.workspace),
                    name=args.name.strip() if args.name else None,
                    email=args.email.strip() if args.email else None,
                )
            else:
                what = "reviewer" if args.reviewer else "agent-host" if args.agent_host else "all"
                said = revoke(conn, role, what, workspace=args.workspace)
    except BadMember as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    except TeamQueueError as exc:
        _err(str(exc))
        return EXIT_FAILED
    for line in said:
        print(line)
    return EXIT_OK


def shown_url(url: str) -> str:
    """``url`` with only its password hidden (the user, host and database stay readable)."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    from redline.redaction import REDACTED, redact_url

    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return redact_url(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, sep, _password = userinfo.partition(":")
        netloc = f"{user}:{REDACTED}@{host}" if sep else netloc
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode(
        [(k, REDACTED if k.lower() in ("password", "sslpassword") else v) for k, v in pairs],
        safe="*",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _status(root: Any, settings: Any, as_json: bool) -> int:
    import json

    from redline.teamqueue.db import LATEST, schema_version, session
    from redline.teamqueue.settings import TeamQueueError, workspace_id

    try:
        ident = workspace_id(root, settings.workspace_id)
    except TeamQueueError as exc:
        _err(str(exc))
        return EXIT_FAILED
    data: dict[str, Any] = {
        "workspace": {"id": ident, "path": str(root.resolve())},
        "url": shown_url(settings.url) if settings.url else None,
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
                if version == LATEST:
                    data.update(_rights(conn, ident))
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
    if version > LATEST:
        print(f"database: schema version {version}, newer than this redline ({LATEST}): upgrade")
        return EXIT_FAILED
    counts = ", ".join(f"{n} {state}" for state, n in sorted(data["counts"].items()))
    print(f"database: schema version {version}; this workspace: {counts or 'no actions yet'}")
    print(f"connected as: {data['connected_as']}")
    for member in data["rights"]:
        name = member["shown"] if member["right"] == "reviewer" else ""
        owned = ", ".join(data["workspaces"].get(member["role"], []))
        extra = f" (decisions name {name})" if name else f" (workspaces: {owned})" if owned else ""
        print(f"  {member['role']}: {member['right']}{extra}")
    if not data["rights"]:
        print("  nobody has a right yet: `redline queue grant ROLE --reviewer | --agent-host`")
    for ident in data["unowned"]:
        print(
            f"  workspace {ident}: no owner (`redline queue grant ROLE --agent-host "
            f"--workspace {ident}`)"
        )
    for warning in data["warnings"]:
        print(f"warning: {warning}")
    if data.get("rights_problem"):
        print(f"rights: {data['rights_problem']}")
    return EXIT_OK


def _rights(conn: Any, ident: str) -> dict[str, Any]:
    """This workspace's counts, who has which rights, and the warnings of ``queue status``."""
    import psycopg

    from redline.teamqueue.members import display_name, status

    found: dict[str, Any] = {
        "connected_as": "",
        "rights": [],
        "workspaces": {},
        "unowned": [],
        "warnings": [],
    }
    try:
        rows = conn.execute(
            "SELECT state, count(*) FROM redline_actions WHERE workspace = %s GROUP BY state",
            (ident,),
        ).fetchall()
        conn.commit()
        found["counts"] = {str(state): int(n) for state, n in rows}
        seen = status(conn)
    except psycopg.errors.InsufficientPrivilege:
        conn.rollback()
        row = conn.execute("SELECT session_user::text").fetchone()
        conn.commit()
        found["connected_as"] = str(row[0]) if row else ""
        found["rights_problem"] = (
            f"{found['connected_as']} has no right in this team queue (the owner of the "
            "redline tables grants one: `redline queue grant ROLE --reviewer | --agent-host`)"
        )
        return found
    found["connected_as"] = seen.connected_as
    found["rights"] = [
        {**m, "shown": display_name(m["role"], m["name"], m["email"])} for m in seen.members
    ]
    found["workspaces"] = seen.owners
    found["unowned"] = seen.unowned
    found["warnings"] = seen.warnings
    return found
