"""``redline pending comment`` and ``redline pending viewed``: a review conversation from
the shell (docs/review-conversation.md), and what ``pending show --json`` adds for it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redline.workspace.preview import Preview
    from redline.workspace.queue import QueueRecord, WorkspaceQueue

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure(sub: Any) -> None:
    comment = sub.add_parser(
        "comment",
        help="comment on a line or file of an action (the agent hears it with the decision)",
        description="Comment on a line of the proposed text (PATH:LINE), of the current "
        "text (PATH:-LINE: removed lines, deleted files) or on a whole file (PATH). A "
        "discard carries the comments to the agent with the reason; an apply as notes. "
        "Exit 0 done, 1 the action is not pending or the queue cannot be used, 2 bad input.",
    )
    comment.add_argument("id", metavar="ID")
    comment.add_argument("target", nargs="?", metavar="PATH[:LINE|:-LINE]")
    comment.add_argument("text", nargs="?", metavar="TEXT")
    comment.add_argument("--list", action="store_true", help="list the action's comments")
    comment.add_argument("--json", action="store_true", help="with --list: print one JSON object")
    comment.add_argument("--delete", metavar="c-N", help="delete one comment")
    viewed = sub.add_parser(
        "viewed",
        help="mark an action's files (or one file) viewed",
        description="Mark every file of an action, or PATH, viewed. A mark holds while the "
        "file's change stays the same (a rebase that only moved it keeps it).",
    )
    viewed.add_argument("id", metavar="ID")
    viewed.add_argument("path", nargs="?", metavar="PATH")


def _out(text: str, *, err: bool = False) -> None:
    """Print ``text``; bytes of file names that are not UTF-8 show as ``\\udcXX``."""
    import sys

    from redline.workspace.names import shown

    print(shown(text), file=sys.stderr if err else sys.stdout)


def _bad(text: str) -> int:
    _out(f"redline pending: {text}", err=True)
    return EXIT_BAD_INPUT


def run_comment(queue: WorkspaceQueue, args: argparse.Namespace) -> int:
    from redline.review.comments import CommentError, add_comment, delete_comment, parse_target
    from redline.workspace.queue import QueueError, check_id

    action_id: str = args.id
    try:
        check_id(action_id)
    except QueueError as exc:
        return _bad(str(exc))
    chosen = [bool(args.list), args.delete is not None, args.target is not None]
    if sum(chosen) != 1 or (args.list and args.text is not None):
        return _bad("give PATH[:LINE] TEXT, --list or --delete c-N (one of them)")
    if args.json and not args.list:
        return _bad("--json goes with --list")
    try:
        if args.list:
            return _list(queue, action_id, args.json)
        if args.delete is not None:
            delete_comment(queue, action_id, args.delete)
            _out(f"Deleted {args.delete} of {action_id}.")
            return EXIT_OK
        if args.text is None:
            return _bad("the comment is empty (give its TEXT after the PATH[:LINE])")
        record = queue.get(action_id)
        if record is None:
            _out(f"redline pending: {action_id} is not pending", err=True)
            return EXIT_FAILED
        target = parse_target(args.target, list(record.files))
        made = add_comment(queue, action_id, target, args.text)
    except CommentError as exc:
        return _bad(str(exc))
    except QueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED
    _out(f"Added {made['id']} on {target.shown()} of {action_id}.")
    return EXIT_OK


def _record_and_preview(
    queue: WorkspaceQueue, action_id: str
) -> tuple[QueueRecord | None, Preview | None]:
    from redline.workspace.queue import QueueRecord

    record = queue.get(action_id)
    if record is None:
        resolution = queue.resolution(action_id)
        if resolution is not None and resolution.record is not None:
            record = QueueRecord.from_dict(resolution.record, action_id)
    if record is None:
        return None, None
    return record, queue.preview(record)


def _list(queue: WorkspaceQueue, action_id: str, as_json: bool) -> int:
    from redline.review.comments import comment_line, listed
    from redline.termtext import one_line
    from redline.workspace.names import json_dumps

    record, preview = _record_and_preview(queue, action_id)
    if record is None:
        _out(f"redline pending: no pending or recently resolved action {action_id}", err=True)
        return EXIT_FAILED
    comments = listed(queue, action_id, preview)
    if as_json:
        _out(json_dumps({"comments": comments}))
        return EXIT_OK
    if not comments:
        _out(f"{action_id} has no comments.")
        return EXIT_OK
    for comment in comments:
        who = f" ({one_line(comment['author'])})" if comment["author"] else ""
        first, *more = comment_line(comment).split("\n")
        _out(f"{comment['id']}{who} {one_line(first)}")
        for line in more:
            _out(f"    {one_line(line)}")
    return EXIT_OK


def run_viewed(queue: WorkspaceQueue, args: argparse.Namespace) -> int:
    from redline.review.viewed import ViewedError, mark_viewed
    from redline.workspace.queue import QueueError, check_id

    try:
        check_id(args.id)
    except QueueError as exc:
        return _bad(str(exc))
    try:
        paths = mark_viewed(queue, args.id, args.path)
    except ViewedError as exc:
        return _bad(str(exc))
    except QueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED
    _out(f"Marked viewed in {args.id}: {', '.join(paths)}.")
    return EXIT_OK


def show_json(
    queue: WorkspaceQueue, record: QueueRecord, preview: Preview | None, data: dict[str, Any]
) -> None:
    """What ``pending show --json`` adds: ``comments``, ``files`` entries with ``viewed``,
    and ``revision`` for a revision of a discarded action."""
    from redline.review.comments import listed
    from redline.review.revision_info import revision_info
    from redline.review.viewed import viewed_files
    from redline.workspace.queue import QueueError

    try:
        data["comments"] = listed(queue, record.id, preview)
    except (QueueError, ValueError) as exc:
        data["comments"] = []
        _out(f"redline pending: {exc}", err=True)
    viewed = viewed_files(queue, record.id, preview)
    data["files"] = [{"path": path, "viewed": viewed.get(path, False)} for path in record.files]
    info = revision_info(queue, record, preview)
    if info is not None:
        data["revision"] = info.to_json()


def show_lines(queue: WorkspaceQueue, record: QueueRecord, preview: Preview | None) -> list[str]:
    """What ``pending show`` (text) adds: the revision, the comments, the viewed files."""
    from redline.review.comments import comment_line, listed
    from redline.review.viewed import viewed_files
    from redline.termtext import one_line
    from redline.workspace.queue import QueueError

    lines: list[str] = []
    if record.revision_of is not None:
        lines.append(
            f"  revision: {record.revision} of {one_line(record.revision_of)} "
            "(`pending show --json` has the interdiff)"
        )
    try:
        comments = listed(queue, record.id, preview)
    except (QueueError, ValueError):
        comments = []
    if comments:
        lines.append(f"  comments: {len(comments)}")
        for comment in comments:
            first = comment_line(comment).split("\n")[0]
            lines.append(f"    {one_line(comment['id'])} {one_line(first)}")
    viewed = [path for path, seen in viewed_files(queue, record.id, preview).items() if seen]
    if viewed:
        lines.append(f"  viewed:  {one_line(', '.join(viewed))}")
    return lines
