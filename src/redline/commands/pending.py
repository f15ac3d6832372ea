"""``redline pending``: review the workspace queue from the shell (list, show, apply, ...)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from redline.commands._action_json import action_json
from redline.commands._common import add_workspace_option

if TYPE_CHECKING:
    from redline.workspace.queue import QueueRecord, WorkspaceQueue
    from redline.workspace.queue.listing import Listed, Row

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure(parser: argparse.ArgumentParser) -> None:
    from redline.commands.queue import add_queue_option

    add_workspace_option(parser)
    add_queue_option(parser)
    sub = parser.add_subparsers(dest="pending_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="every pending action, top first")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    listing.add_argument(
        "--all",
        action="store_true",
        help="every known workspace's actions, newest first, with ids pa-N@WSID (see "
        "`redline workspaces list`)",
    )
    listing.add_argument(
        "--workspace",
        metavar="ID",
        default=None,
        help="with --queue: only this workspace's actions (its id, as `redline queue status` "
        "prints)",
    )
    show = sub.add_parser("show", help="one action: label, source, files, full unified diff")
    show.add_argument("id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    add_queue_option(listing)
    add_queue_option(show)
    for name, text in (
        ("apply", "write the actions' changes"),
        ("discard", "drop the actions"),
    ):
        child = sub.add_parser(
            name,
            help=text,
            description=f"{text[0].upper()}{text[1:]}, each in turn with the usual checks; "
            "one line per ID; exit 0 only if every one succeeded, else 1.",
        )
        child.add_argument("ids", nargs="+", metavar="ID")
        child.add_argument("--reason", default="", metavar="TEXT", help="why (the model sees it)")
        child.add_argument(
            "--only",
            action="append",
            metavar="PATH#N",
            help="only these hunks (PATH#N) or files (PATH) of the one ID given; repeatable, "
            "or comma-separated; the rest stays pending under a new id",
        )
        add_queue_option(child)
        if name == "apply":
            child.add_argument(
                "--batch",
                action="store_true",
                help='with [git] on_apply = "commit": one commit for all the IDs, not one each',
            )
    repreview = sub.add_parser(
        "repreview",
        help="propose a stale action again against the current files",
        description="Merge a stale action's change onto the files as they are now: it is "
        "replaced by a fresh action (new id) in its place. Exit 0 re-previewed or not "
        "stale, 1 a conflict (the files are named) or it cannot be re-previewed, 2 a bad "
        "id.",
    )
    repreview.add_argument("ids", nargs="+", metavar="ID")
    repreview.add_argument("--json", action="store_true", help="print one JSON object")
    edit = sub.add_parser("edit", help="edit a file's proposed content in $VISUAL/$EDITOR")
    edit.add_argument("id", metavar="ID")
    edit.add_argument("--file", metavar="PATH", help="which file (needed when it has several)")
    add_queue_option(edit)
    from redline.commands import pending_team

    pending_team.configure_follow(
        sub.add_parser(
            "follow",
            help="mirror this workspace's actions to the team queue and carry out its decisions",
            description="The local side of the team queue (docs/team-queue.md): mirror new "
            "proposals, hear decisions as they are made (catching up after every reconnect), "
            "apply each one here if it matches a proposal this workspace made, and write the "
            "result back. Runs until interrupted.",
        )
    )
    from redline.commands import pending_import

    pending_import.configure(
        sub.add_parser(
            "import",
            help="queue a branch, a worktree or a patch for review, one action per file",
            description="Queue a branch, a worktree or a patch for review: one pending "
            "action per changed file, source import:NAME. Exit 0 all queued, 1 any file "
            "refused, 2 the source cannot be read.",
        )
    )
    check = sub.add_parser(
        "check", help="run the configured checks on an action (or show their results)"
    )
    from redline.commands.pending_check import configure_check

    configure_check(check)
    from redline.commands import pending_comment

    pending_comment.configure(sub)
    clear = sub.add_parser("clear", help="discard every pending action, newest first")
    clear.add_argument("--reason", default="", metavar="TEXT", help="why (the model sees it)")


def _out(text: str, *, err: bool = False) -> None:
    """Print ``text``; bytes of file names that are not UTF-8 show as ``\\udcXX``."""
    import sys

    from redline.workspace.names import shown

    print(shown(text), file=sys.stderr if err else sys.stdout)


def _local_ids(args: argparse.Namespace) -> str:
    """``pa-N@WSID`` ids (docs/inbox.md): the known workspace WSID becomes the workspace and
    the ids its own ``pa-N``. Returns why not ("" when done or there are none)."""
    import os

    single = hasattr(args, "id")
    ids: list[str] = [args.id] if single else list(getattr(args, "ids", None) or [])
    tagged = [i for i in ids if "@" in i]
    if not tagged:
        return ""
    wsids = sorted({i.partition("@")[2] for i in tagged})
    if len(wsids) > 1 or len(tagged) != len(ids):
        return (
            f"the ids {', '.join(ids)} name more than one workspace; decide each "
            "workspace's actions in a command of their own"
        )
    from redline.commands.workspaces import located

    path, why = located(wsids[0])
    if path is None:
        return why
    if getattr(args, "cwd_given", False) and os.path.realpath(args.cwd) != path:
        return f"{tagged[0]} is an action of {path}, but -C names {args.cwd}"
    args.cwd = path
    local = [i.partition("@")[0] for i in ids]
    if single:
        args.id = local[0]
    else:
        args.ids = local
    return ""


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from redline.workspace.queue import QueueError, WorkspaceQueue

    if getattr(args, "all", False):
        from redline.commands import pending_all

        return pending_all.run(args)
    if getattr(args, "queue", None) is not None and args.pending_command != "follow":
        from redline.commands import pending_team

        return pending_team.run_remote(args)  # the team queue: no workspace needed
    if getattr(args, "workspace", None) is not None:
        _out("redline pending: --workspace needs --queue URL (the team queue)", err=True)
        return EXIT_BAD_INPUT
    problem = _local_ids(args)
    if problem:
        _out(f"redline pending: {problem}", err=True)
        return EXIT_BAD_INPUT
    root = Path(args.cwd)
    if not root.is_dir():
        _out(f"redline pending: workspace {root} is not a folder", err=True)
        return EXIT_BAD_INPUT
    if args.pending_command == "follow":
        from redline.commands import pending_team

        return pending_team.run_follow(args)
    if args.pending_command == "import":
        from redline.commands import pending_import

        return pending_import.run(root, args)
    queue = WorkspaceQueue(root)
    command = args.pending_command
    records: list[QueueRecord] = []
    try:
        try:
            if command == "list" and not args.json:
                from redline.workspace.queue.index import collector_paused

                # Every object made lives until the command ends: no cyclic collection
                # walks them (10,000 rows), and they are gone before the collector resumes.
                with collector_paused():
                    try:
                        return _table(queue)  # from each record's remembered row (issue 44)
                    finally:
                        queue.close()
            if command in ("list", "clear"):
                records = queue.list()  # reconciles once (crash leftovers), reads every record
            else:
                queue.ensure_reconciled()  # one action: the others are not read
        except QueueError as exc:
            _out(f"redline pending: {exc}", err=True)
            return EXIT_FAILED
        for message in queue.messages:
            _out(f"redline: {message}", err=True)
        if command == "list":
            return _list_json(queue, records)
        if command == "show":
            return _show(queue, args.id, args.json)
        if command == "clear":
            return _clear(queue, records, args.reason)
        if command == "edit":
            return _edit(queue, args.id, args.file)
        if command == "repreview":
            return _repreview(queue, args.ids, args.json)
        if command == "check":
            from redline.commands.pending_check import run_check

            return run_check(queue, args)
        if command in ("comment", "viewed"):
            from redline.commands import pending_comment

            if command == "comment":
                return pending_comment.run_comment(queue, args)
            return pending_comment.run_viewed(queue, args)
        return _resolve(
            queue, args.ids, command, args.reason, args.only, getattr(args, "batch", False)
        )
    finally:
        queue.close()


def _problems(queue: WorkspaceQueue) -> None:
    for problem in queue.problems:
        _out(f"redline pending: {problem}", err=True)


def _agent_ended(record: QueueRecord) -> str:
    """How an external agent that pushed this action ended (``details.agent_ended``), or ""."""
    from redline.workspace.details import agent_ended, details_from_json

    return agent_ended(details_from_json(record.kind, record.details)) or ""


def _dump(data: Any) -> str:
    from redline.workspace.names import json_dumps

    # The workspace's one escape: bytes of names that are not UTF-8 as \udcXX.
    return json_dumps(data)


def _list_json(queue: WorkspaceQueue, records: list[QueueRecord]) -> int:
    _problems(queue)
    # A record that cannot be used (signed with another key, damaged, a copy of a resolved
    # one) makes the list incomplete: it is named, and the exit status says so.
    status = EXIT_FAILED if queue.problems else EXIT_OK
    cache: dict[str, str | None] = {}
    items = []
    for record in records:
        item = action_json(queue, record, pending=False)
        item["stale"] = record.stale or bool(queue.stale_reasons(record, cache))
        item["orphaned"] = record.orphaned()
        items.append(item)
    queue.remember_hashes()
    data: dict[str, Any] = {"actions": items}
    if queue.problems:
        data["unusable"] = [
            {"file": f".redline/queue/actions/{p.action_id}.json", "why": str(p)}
            for p in queue.problems
        ]
    _out(_dump(data))
    return status


def _table(queue: WorkspaceQueue, listed: list[Listed] | None = None) -> int:
    """The text listing: one row per action, from :meth:`WorkspaceQueue.listing` (a record
    that did not change since a listing is not parsed again, see ``workspace/queue/listing``)."""
    from redline.termtext import one_line
    from redline.workspace.queue import ORPHANED_REASON, QueueError

    if listed is None:
        try:
            listed = queue.listing()  # reconciles once (crash leftovers)
        except QueueError as exc:
            _out(f"redline pending: {exc}", err=True)
            return EXIT_FAILED
        for message in queue.messages:
            _out(f"redline: {message}", err=True)
    _problems(queue)
    # A record that cannot be used (signed with another key, damaged, a copy of a resolved
    # one) makes the list incomplete: it is named, and the exit status says so.
    status = EXIT_FAILED if queue.problems else EXIT_OK
    if not listed:
        if queue.problems:
            _out(
                f"No usable pending actions in {queue.root}; {len(queue.problems)} "
                "record(s) cannot be used (see above)."
            )
        else:
            _out(f"No pending actions in {queue.root}.")
        return status
    orphaned_note = ORPHANED_REASON

    def note(row: Row, reasons: list[str], orphaned: bool) -> str:
        notes = []
        if row.stale or reasons:
            notes.append("stale: " + (row.stale_reason or "; ".join(reasons)))
        if orphaned:
            notes.append(orphaned_note)
        notes.extend(row.notes)
        # Each cell on one line: a label or name holding a newline or an escape cannot
        # print rows of its own (redline.termtext; the row's own cells already are).
        return one_line("; ".join(notes)) if notes else ""

    # 10,000 rows: one pass per column in C where it can be (issue 44), the same text.
    cells = [("ID", "SOURCE", "+/-", "LABEL", "NOTE")]
    cells.extend(
        (
            r[0],
            r[1],
            r[2],
            r[3],
            note(r, reasons, orphaned) if r[4] or reasons or orphaned or r[6] else "",
        )
        for r, reasons, orphaned in listed
    )
    columns = list(zip(*cells, strict=True))
    w0, w1, w2, w3 = (max(map(len, column)) for column in columns[:4])
    line = f"{{:<{w0}}}  {{:<{w1}}}  {{:<{w2}}}  {{:<{w3}}}  {{}}".format
    # One write for the table (10,000 rows printed one by one cost a tenth of a listing).
    lines = list(map(str.rstrip, map(line, *columns)))
    lines.append(f"{len(listed)} pending (top first). Show one with `redline pending show ID`.")
    _out("\n".join(lines))
    return status


def _show(queue: WorkspaceQueue, action_id: str, as_json: bool) -> int:
    from redline.termtext import one_line
    from redline.workspace.preview import display_diff, shown_path
    from redline.workspace.queue import QueueError, QueueRecord, QueueRecordError, check_id

    try:
        check_id(action_id)
    except QueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_BAD_INPUT
    try:
        record = queue.get(action_id)
        resolution = None if record is not None else queue.resolution(action_id)
        if record is None and resolution is not None and resolution.record is not None:
            record = QueueRecord.from_dict(resolution.record, action_id)
        if record is None:
            _out(f"redline pending: no pending or recently resolved action {action_id}", err=True)
            return EXIT_FAILED
        data = action_json(queue, record, pending=resolution is None)
        hunks: list[dict[str, Any]] = []
        described: list[str] = []
        shown_diff, hidden = "", 0
        preview = None
        try:
            preview = queue.preview(record)
            diff = preview.diff() if preview is not None else ""
            if preview is not None and not as_json:
                shown_diff, hidden = display_diff(preview)
            if preview is not None:
                from redline.workspace.hunks import hunk_units

                units = hunk_units(preview)
                hunks = [unit.to_dict() for unit in units]
                described = [unit.describe() for unit in units]
        except QueueRecordError as exc:
            if resolution is None:
                raise
            diff = ""
            _out(f"redline pending: {exc}", err=True)
    except QueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED
    data["diff"] = diff
    data["hunks"] = hunks
    if resolution is not None:
        data["resolution"] = resolution.public()
    if as_json:
        from redline.commands.pending_comment import show_json

        show_json(queue, record, preview, data)
        _out(_dump(data))
        return EXIT_OK
    source = {key: one_line(value) for key, value in data["source"].items()}
    files = ", ".join(one_line(shown_path(f, record.via)) for f in record.files)
    lines = [
        f"{one_line(record.id)}: {one_line(record.label)}",
        f"  source:  {one_line(record.source.canonical)}"
        + (f" (session {source['session_id']})" if source["session_id"] else "")
        + f", tool {one_line(record.source_tool_name)}",
        f"  created: {data['created_at']}",
        f"  applied by: {one_line(APPLIED_BY.get(record.applied_by, record.applied_by))}",
        f"  files:   {files or '(none)'} (+{record.added} -{record.removed})",
    ]
    if record.edited:
        lines.append("  edited:  yes (the diff is against the reviewer's text)")
    if hunks:
        lines.append(f"  hunks:   {len(hunks)} (select with --only PATH#N)")
        lines.extend(
            f"    {one_line(item['address'])}  {one_line(text)}"
            for item, text in zip(hunks, described, strict=True)
        )
    if hidden:
        lines.append(
            f"  hidden:  {hidden} diff line{'s hold' if hidden != 1 else ' holds'} control or "
            "invisible characters, shown as \\xNN or <U+XXXX> (read them before applying)"
        )
    if data["stale"]:
        reasons = record.stale_reason or "; ".join(queue.stale_reasons(record))
        lines.append(f"  stale:   {one_line(reasons)}")
    if data["orphaned"]:
        lines.append("  orphaned: its tool's process has ended; it can only be discarded")
    ended = _agent_ended(record)
    if ended:
        lines.append(f"  agent:   {one_line(ended)}")
    if resolution is not None:
        res = resolution.public()
        by = one_line(res["resolved_by"] + (f" {res['rule']}" if res["rule"] else ""))
        lines.append(f"  resolved: {one_line(res['decision'])} by {by} at {res['time']}")
        if res["reason"]:
            lines.append(f"  reason:  {one_line(res['reason'])}")
        if res["replaced_by"]:
            lines.append(f"  replaced by: {one_line(res['replaced_by'])}")
        if res["result_text"]:
            lines.append(f"  result:  {one_line(res['result_text'])}")
    from redline.commands.pending_comment import show_lines

    lines.extend(show_lines(queue, record, preview))
    if record.details not in (None, "", {}):
        lines.append("  details:")
        lines.extend(details_text(record.details, "    "))
    _out("\n".join(lines))
    if shown_diff:
        _out("")
        _out(shown_diff.rstrip("\n"))
    return EXIT_OK


#: ``applied_by`` as ``pending show`` says it.
APPLIED_BY = {
    "preview": "redline (safe apply)",
    "owner": "the process that proposed it",
}


def details_text(value: object, indent: str) -> list[str]:
    """An action's details as lines of text (``key: value``), not JSON."""

    def one(item: object) -> str:
        if item is None:
            return "-"
        if isinstance(item, bool):
            return "yes" if item else "no"
        if isinstance(item, (str, int, float)):
            return str(item)
        if isinstance(item, list):
            return ", ".join(one(i) for i in item) or "(none)"
        if isinstance(item, dict):
            return ", ".join(f"{k}: {one(v)}" for k, v in item.items()) or "(none)"
        return repr(item)

    if not isinstance(value, dict):
        return [indent + one(value).replace("\n", "\n" + indent)]
    lines = []
    for key, item in value.items():
        text = one(item).replace("\n", "\n" + indent + "  ")
        lines.append(f"{indent}{str(key).replace('_', ' ')}: {text}")
    return lines


def _resolve(
    queue: WorkspaceQueue,
    action_ids: list[str],
    decision: str,
    reason: str,
    only: list[str] | None = None,
    batch: bool = False,
) -> int:
    """Apply or discard each id in turn; one line per id (refusals on stderr)."""
    import asyncio

    from redline.commands._common import split_only
    from redline.review.batch import BatchError, check_batch, resolve_queued_many
    from redline.workspace.hunks import HunkError, parse_selection
    from redline.workspace.queue import QueueError, check_id

    try:
        for action_id in action_ids:
            check_id(action_id)
        selection = split_only(only)
        check_batch(action_ids, selection)
    except (QueueError, ValueError, BatchError) as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_BAD_INPUT
    if selection is not None:
        # A selection that does not name parts of the action is bad input: check it first.
        try:
            record = queue.get(action_ids[0])
            preview = queue.preview(record) if record is not None else None
        except QueueError as exc:
            _out(f"redline pending: {exc}", err=True)
            return EXIT_FAILED
        if preview is not None:
            try:
                parse_selection(preview, selection)
            except HunkError as exc:
                _out(f"redline pending: --only: {exc}", err=True)
                return EXIT_BAD_INPUT
    outcomes = asyncio.run(
        resolve_queued_many(queue, action_ids, decision, reason, only=selection, batch=batch)
    )
    if len(outcomes) == 1:  # one id: its result as it always was
        outcome = outcomes[0]
        _out(outcome.text if outcome.ok else f"redline pending: {outcome.text}", err=not outcome.ok)
        return EXIT_OK if outcome.ok else EXIT_FAILED
    for outcome in outcomes:
        _out(
            outcome.line() if outcome.ok else f"redline pending: {outcome.line()}",
            err=not outcome.ok,
        )
    return EXIT_OK if all(outcome.ok for outcome in outcomes) else EXIT_FAILED


def _edit(queue: WorkspaceQueue, action_id: str, path: str | None) -> int:
    from redline.commands._editor import EditorError, editor_session
    from redline.workspace.hunks import HunkError, edit_file
    from redline.workspace.preview import FileCreate, FileModify
    from redline.workspace.queue import QueueError, check_id

    try:
        check_id(action_id)
    except QueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_BAD_INPUT
    try:
        with queue.claim(action_id) as claim:
            record = claim.record
            # A hook's action is its owner's (the agent writes it) but has a whole-file
            # preview: its edit stays the owner's, so the waiting hook lets the agent write
            # exactly the edited text (docs/agents.md).
            from redline.review.decide import editable_preview

            preview = editable_preview(queue, record)
            if preview is None:
                _out(
                    f"redline pending: {action_id} ({record.label}) has no preview of file "
                    "changes; it cannot be edited.",
                    err=True,
                )
                return EXIT_FAILED
            editable = [
                change.path
                for change in preview.changes
                if isinstance(change, (FileModify, FileCreate))
            ]
            if path is None:
                if len(editable) != 1:
                    shown = ", ".join(editable) or "none"
                    _out(
                        f"redline pending: {action_id} changes several files ({shown}); "
                        "name one with --file PATH",
                        err=True,
                    )
                    return EXIT_BAD_INPUT
                path = editable[0]
            change = next((c for c in preview.changes if c.path == path), None)
            if not isinstance(change, (FileModify, FileCreate)):
                try:
                    edit_file(preview, path, "")  # the clear reason (unknown, deleted, ...)
                except HunkError as exc:
                    _out(f"redline pending: {exc}", err=True)
                return EXIT_BAD_INPUT
            with editor_session(change.new_text, name=path.rsplit("/", 1)[-1]) as session:
                try:
                    text = session.run()
                except EditorError as exc:
                    _out(f"redline pending: {exc}", err=True)
                    return EXIT_FAILED
                if text is None:
                    _out(f"Editor cancelled; {action_id} is unchanged.")
                    return EXIT_OK
                try:
                    edited = edit_file(preview, path, text)
                except HunkError as exc:
                    _out(f"redline pending: {exc}; {session.keep()}", err=True)
                    return EXIT_FAILED
                if not edited.changed:
                    _out(f"{path} is unchanged; {action_id} stays as it was.")
                    return EXIT_OK
                for warning in edited.warnings:
                    _out(f"redline pending: warning: {warning}", err=True)
                from redline.review.decide import edited_draft
                from redline.workspace.hunks import Origin

                origin = queue.origin(record) or Origin.of(record.label, preview)
                new = claim.replace(
                    edited_draft(record, preview, edited.preview, origin), resolved_by="person"
                )
    except QueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED
    _out(f"Edited {path}: {action_id} is now {new.id} (edited).")
    return EXIT_OK


def _repreview(queue: WorkspaceQueue, action_ids: list[str], as_json: bool) -> int:
    """``pending repreview ID``: one stale action merged onto the files as they are now."""
    from redline.review.decide import repreview_queued
    from redline.workspace.queue import QueueError, check_id

    if len(action_ids) != 1:
        _out(
            f"redline pending repreview: one ID at a time ({len(action_ids)} given: "
            f"{' '.join(action_ids)})",
            err=True,
        )
        return EXIT_BAD_INPUT
    action_id = action_ids[0]
    try:
        check_id(action_id)
    except QueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_BAD_INPUT
    outcome = repreview_queued(queue, action_id)
    if outcome.kind == "gone" and queue.resolution(action_id) is None:
        # Never queued here (not a resolved one): a bad id, as for the other commands.
        _out(f"redline pending: {outcome.text}", err=True)
        return EXIT_BAD_INPUT
    if as_json:
        _out(_dump(outcome.to_json()))
    elif outcome.is_error:
        _out(f"redline pending: {outcome.text}", err=True)
    else:
        _out(outcome.text)
    return EXIT_FAILED if outcome.is_error else EXIT_OK


def _clear(queue: WorkspaceQueue, records: list[QueueRecord], reason: str) -> int:
    import asyncio

    from redline.review.queued import resolve_queued

    _problems(queue)
    if not records:
        _out(f"No pending actions in {queue.root}.")
        return EXIT_OK
    failed = 0
    for record in records:
        result = asyncio.run(resolve_queued(queue, record.id, "discard", reason))
        if result.is_error:
            failed += 1
            _out(f"redline pending: {result.text}", err=True)
        else:
            _out(result.text)
    return EXIT_FAILED if failed else EXIT_OK
