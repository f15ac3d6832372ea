"""``redline pending … --queue URL`` and ``redline pending follow``: the team queue's side
of ``redline pending`` (docs/team-queue.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure_follow(parser: argparse.ArgumentParser) -> None:
    from redline.commands.queue import add_queue_option

    add_queue_option(parser)
    parser.add_argument(
        "--once",
        action="store_true",
        help="mirror and carry out the waiting decisions once, then exit (1 if offline)",
    )


def _out(text: str, *, err: bool = False) -> None:
    from redline.workspace.names import shown

    print(shown(text), file=sys.stderr if err else sys.stdout)


def run_remote(args: argparse.Namespace) -> int:
    """``pending list|show|apply|discard --queue URL`` across the team's workspaces."""
    from redline.commands._common import split_only
    from redline.teamqueue.db import require_schema, session
    from redline.teamqueue.settings import (
        TeamQueueError,
        check_url,
        check_workspace_id,
        split_team_id,
    )

    command = args.pending_command
    only: list[str] | None = None
    try:
        url = check_url(args.queue.strip(), "--queue")
        wanted = getattr(args, "workspace", None)
        if wanted is not None:
            check_workspace_id(wanted, "--workspace")
        if command in ("apply", "discard"):
            only = split_only(args.only)
            if only is not None and len(args.ids) != 1:
                raise TeamQueueError("--only picks parts of one action: give exactly one ID")
        if command == "edit":
            split_team_id(args.id)
    except (TeamQueueError, ValueError) as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_BAD_INPUT
    if command in ("apply", "discard", "edit"):
        from redline.teamqueue.settings import queue_settings, reviewer_warning

        try:
            warning = reviewer_warning(queue_settings(None).reviewer)
        except TeamQueueError:
            warning = None
        if warning:
            _out(f"redline pending: {warning}", err=True)
    try:
        with session(url) as conn:
            require_schema(conn)
            if command == "list":
                return _list(conn, wanted, args.json)
            if command == "show":
                return _show(conn, args.id, args.json)
            if command == "edit":
                return _edit(conn, args.id, args.file)
            return _decide(conn, args.ids, command, args.reason, only)
    except TeamQueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED


def _list(conn: Any, workspace: str | None, as_json: bool) -> int:
    import json

    from redline.teamqueue.remote import list_actions
    from redline.termtext import one_line

    actions = list_actions(conn, workspace)
    if as_json:
        _out(json.dumps({"actions": actions}))
        return EXIT_OK
    if not actions:
        _out("No pending actions in the team queue" + (f" for {workspace}." if workspace else "."))
        return EXIT_OK
    rows = [("ID", "SOURCE", "+/-", "LABEL", "WORKSPACE")]
    for item in actions:
        note = "" if item["state"] == "pending" else f" [{item['state']}]"
        rows.append(
            (
                one_line(item["id"]),
                one_line(item["source"]),
                f"+{item['added']} -{item['removed']}",
                one_line(item["label"]) + note,
                one_line(item["workspace"]["path"]),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        _out("  ".join([row[i].ljust(widths[i]) for i in range(4)] + [row[4]]).rstrip())
    _out(f"{len(actions)} pending in the team queue (newest first).")
    return EXIT_OK


def _show(conn: Any, team_id: str, as_json: bool) -> int:
    import json

    from redline.teamqueue.remote import show_action
    from redline.teamqueue.settings import TeamQueueError
    from redline.termtext import one_line

    try:
        data = show_action(conn, team_id)
    except TeamQueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED
    if as_json:
        _out(json.dumps(data))
        return EXIT_OK
    lines = [
        f"{one_line(data['id'])}: {one_line(data['label'])}",
        f"  workspace: {data['workspace']['id']}  {data['workspace']['path']}",
        f"  source:  {data['source']}",
        f"  proposed: {data['created_at']}",
        f"  files:   {', '.join(data['files']) or '(none)'} (+{data['added']} -{data['removed']})",
        f"  state:   {data['state']}",
    ]
    if data["decision"]:
        lines.append(
            f"  decided: {data['decision']} by {data['decided_by']} at {data['decided_at']}"
        )
    elif data.get("closed_by"):
        lines.append(f"  closed:  by {data['closed_by']} in its workspace")
    if data["reason"]:
        lines.append(f"  reason:  {one_line(data['reason'])}")
    if data["result"]:
        lines.append(f"  result:  {data['result']}")
    if len(data["hunks"]) > 1:
        lines.append(f"  hunks:   {', '.join(data['hunks'])} (select with --only PATH#N)")
    if data["editable"]:
        lines.append(f"  editable: {', '.join(data['editable'])} (`redline pending edit`)")
    _out("\n".join(lines))
    if data["diff"]:
        _out("")
        _out(data["diff"].rstrip("\n"))
    return EXIT_OK


def _edit(conn: Any, team_id: str, path: str | None) -> int:
    """Edit a file's proposed text in $VISUAL/$EDITOR; the decision carries the text to
    the workspace, which replaces its proposal with the edited one (hash-checked)."""
    from redline.commands._editor import EditorError, editor_session
    from redline.teamqueue.remote import decide, proposed_text, show_action
    from redline.teamqueue.settings import TeamQueueError

    try:
        shown = show_action(conn, team_id)  # the edit binds the view it started from
        path, text = proposed_text(conn, team_id, path)
    except TeamQueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED
    with editor_session(text, name=path.rsplit("/", 1)[-1]) as edit:
        try:
            edited = edit.run()
        except EditorError as exc:
            _out(f"redline pending: {exc}", err=True)
            return EXIT_FAILED
        if edited is None:
            _out(f"Editor cancelled; {team_id} is unchanged.")
            return EXIT_OK
        if edited == text:
            _out(f"{path} is unchanged; {team_id} stays as it was.")
            return EXIT_OK
        try:
            decided = decide(
                conn, team_id, "edit", edit=(path, edited), view_hash=shown["view_hash"]
            )
        except TeamQueueError as exc:
            _out(f"redline pending: {exc}; {edit.keep()}", err=True)
            return EXIT_FAILED
        if not decided.won:
            _out(f"redline pending: {decided.text}; {edit.keep()}", err=True)
            return EXIT_FAILED
    _out(decided.text)
    return EXIT_OK


def _decide(
    conn: Any, ids: list[str], verb: str, reason: str, only: list[str] | None = None
) -> int:
    from redline.teamqueue.remote import BadDecision, decide
    from redline.teamqueue.settings import TeamQueueError, split_team_id

    try:
        for team_id in ids:
            split_team_id(team_id)
    except TeamQueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_BAD_INPUT
    failed = False
    for team_id in ids:
        try:
            decided = decide(conn, team_id, verb, reason=reason, only=only)
        except BadDecision as exc:
            _out(f"redline pending: {exc}", err=True)
            return EXIT_BAD_INPUT
        except TeamQueueError as exc:
            _out(f"redline pending: {exc}", err=True)
            failed = True
            continue
        if not decided.won:
            failed = True
        _out(
            decided.text if decided.won else f"redline pending: {decided.text}", err=not decided.won
        )
    return EXIT_FAILED if failed else EXIT_OK


def run_follow(args: argparse.Namespace) -> int:
    """``redline pending follow``: mirror and carry out decisions until interrupted."""
    import signal
    import threading
    from pathlib import Path

    from redline.redaction import redact_url
    from redline.teamqueue.db import connect, require_schema
    from redline.teamqueue.follower import TeamFollower
    from redline.teamqueue.settings import TeamQueueError, queue_settings, workspace_id

    root = Path(args.cwd).resolve()
    try:
        settings = queue_settings(root, args.queue)
        for warning in settings.warnings:
            _out(f"redline pending: warning: {warning}", err=True)
        if settings.url is None:
            raise TeamQueueError(
                "no team queue: pass --queue URL, set $REDLINE_QUEUE_URL or [queue] url "
                "(docs/team-queue.md)"
            )
        ident = workspace_id(root, settings.workspace_id)
    except TeamQueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_BAD_INPUT

    def log(line: str) -> None:
        _out(f"redline pending follow: {line}", err=True)

    follower = TeamFollower(root, settings.url, ident, log=log)
    if args.once:
        try:
            conn = connect(settings.url, autocommit=True)
            try:
                require_schema(conn)
                report = follower.step(conn)
            finally:
                conn.close()
        except TeamQueueError as exc:
            _out(f"redline pending: {exc}", err=True)
            return EXIT_FAILED
        _out(
            f"Mirrored {len(report.mirrored)}, closed {len(report.closed)}, carried out "
            f"{len(report.outcomes)} decision(s) for {ident}."
        )
        return EXIT_OK
    stop = threading.Event()

    def _stop(_signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    _out(f"Following {redact_url(settings.url)} for {ident} ({root}); Ctrl-C stops.")
    from redline.workspace.presence import present

    try:
        with present(root, "follower"):
            follower.run(stop)
    except TeamQueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED
    return EXIT_OK
