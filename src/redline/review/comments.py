"""Line comments on a pending action, and how they reach the agent.

A comment sits on a line of the proposed text (``side: "new"``), a line of the current
text (``side: "old"`` — removed lines, deleted files) or a whole file (``line: None``).
Each keeps the text of its line when it was made (its anchor): the comment is ``outdated``
in any later form of the action (an edit, a rebase, a revision) whose line there differs.
They are stored in the action's conversation document
(:mod:`redline.workspace.queue.conversation`), changed only under the action's claim.

:func:`agent_notes` is the one formatter of comments for the agent: a discard carries them
with the reason (one per line, ``PATH:LINE: TEXT``), an apply as notes
(``applied; reviewer notes: …``). Every channel — the model's ``resolve`` result, MCP,
the hooks, ACP and the hooks' late-outcome outbox — uses it.
"""

from __future__ import annotations

import getpass
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from redline.workspace.preview import (
    FileChange,
    FileDelete,
    Preview,
    new_lines,
    old_lines,
)
from redline.workspace.queue import QueueError, QueueRecordError, WorkspaceQueue, iso_utc
from redline.workspace.queue import conversation as store

if TYPE_CHECKING:  # the hunks only where a partial discard splits the comments (issue 49)
    from redline.workspace.hunks import Unit

Side = Literal["new", "old"]
MAX_COMMENT_CHARS = 10_000
APPLIED_NOTES = "applied; reviewer notes:"


class CommentError(ValueError):
    """Bad input: an unknown path, a line out of range, an empty text, an unknown comment."""


@dataclass(frozen=True)
class Target:
    """Where a comment sits: ``line`` None for the whole file."""

    path: str
    line: int | None = None
    side: Side = "new"

    def shown(self) -> str:
        """``PATH``, ``PATH:LINE`` or ``PATH:-LINE`` (a line of the current text)."""
        if self.line is None:
            return self.path
        return f"{self.path}:{'-' if self.side == 'old' else ''}{self.line}"


def parse_target(spec: str, files: Sequence[str]) -> Target:
    """``PATH``, ``PATH:LINE`` or ``PATH:-LINE``: split at the last ``:`` only when the rest
    is digits (``-`` then digits) and PATH is one of ``files`` (``a:1.py`` is a name)."""
    head, colon, rest = spec.rpartition(":")
    digits = rest[1:] if rest.startswith("-") else rest
    numbered = bool(colon) and digits.isdigit() and digits.isascii()
    if numbered and head in files:
        return Target(head, int(digits), "old" if rest.startswith("-") else "new")
    if spec in files:
        return Target(spec)
    shown = ", ".join(files) or "none"
    name = head if numbered else spec
    raise CommentError(f"{name} is not a file of this action (its files: {shown})")


def _change(preview: Preview, path: str) -> FileChange | None:
    for change in preview.changes:
        if path in change.paths:
            return change
    return None


def _lines(change: FileChange | None, side: Side) -> list[str]:
    if change is None:
        return []
    return old_lines(change) if side == "old" else new_lines(change)


def line_text(preview: Preview | None, target: Target) -> str | None:
    """The text of the commented line in ``preview`` (None: no such line there)."""
    if preview is None or target.line is None:
        return None
    lines = _lines(_change(preview, target.path), target.side)
    if 1 <= target.line <= len(lines):
        return lines[target.line - 1].rstrip("\r\n")
    return None


def check_target(preview: Preview, target: Target) -> None:
    """CommentError unless ``target`` names a line (or file) of ``preview``."""
    change = _change(preview, target.path)
    if change is None:
        raise CommentError(f"{target.path} is not a file of this action")
    if target.line is None:
        return
    lines = _lines(change, target.side)
    if target.line < 1 or target.line > len(lines):
        which = "current" if target.side == "old" else "proposed"
        if not lines:
            why = (
                "the file is deleted: comment on a line of the current text with PATH:-LINE"
                if isinstance(change, FileDelete) and target.side == "new"
                else f"the {which} text of {target.path} has no lines"
            )
        else:
            why = f"the {which} text of {target.path} has lines 1-{len(lines)}"
        raise CommentError(f"line {target.line} is out of range: {why}")


def check_text(text: str) -> str:
    body = text.strip("\n")
    if not body.strip():
        raise CommentError("the comment is empty")
    if len(body) > MAX_COMMENT_CHARS:
        raise CommentError(
            f"the comment is too long: {len(body)} characters; the limit is {MAX_COMMENT_CHARS}"
        )
    return body


def _author() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        return ""


def add_comment(
    queue: WorkspaceQueue, action_id: str, target: Target, text: str, *, author: str | None = None
) -> dict[str, Any]:
    """Add a comment to the pending ``action_id`` under its claim; returns it as listed.
    CommentError for bad input; QueueError when the action is not pending or the queue
    cannot be written."""
    body = check_text(text)
    with queue.claim(action_id, wait=2.0) as claim:
        preview = queue.preview(claim.record)
        if preview is None:
            raise CommentError(f"{action_id} has no preview of file changes to comment on")
        check_target(preview, target)
        document = store.read(queue, action_id)
        number = int(document["next"])
        comment = {
            "id": f"c-{number}",
            "path": target.path,
            "line": target.line,
            "side": target.side,
            "text": body,
            "author": _author() if author is None else author,
            "created_at": iso_utc(time.time()),
            "anchor": line_text(preview, target),
        }
        document["next"] = number + 1
        document["comments"] = [*document["comments"], comment]
        store.write(queue, action_id, document)
    return public(comment, preview)


def delete_comment(queue: WorkspaceQueue, action_id: str, comment_id: str) -> None:
    """Remove comment ``c-N`` of the pending ``action_id`` (CommentError: no such comment)."""
    with queue.claim(action_id, wait=2.0):
        document = store.read(queue, action_id)
        kept = [c for c in document["comments"] if c.get("id") != comment_id]
        if len(kept) == len(document["comments"]):
            known = ", ".join(str(c.get("id")) for c in document["comments"]) or "none"
            raise CommentError(f"{action_id} has no comment {comment_id} (its comments: {known})")
        document["comments"] = kept
        store.write(queue, action_id, document)


def public(comment: dict[str, Any], preview: Preview | None) -> dict[str, Any]:
    """One comment as ``--list --json`` prints it; ``outdated``: its line differs now."""
    line = comment.get("line")
    side: Side = "old" if comment.get("side") == "old" else "new"
    target = Target(str(comment.get("path", "")), line if isinstance(line, int) else None, side)
    anchor = comment.get("anchor")
    outdated = False
    if target.line is not None:
        now = line_text(preview, target)
        outdated = now is None or (isinstance(anchor, str) and now != anchor)
    elif preview is not None:
        outdated = _change(preview, target.path) is None
    return {
        "id": str(comment.get("id", "")),
        "path": target.path,
        "line": target.line,
        "side": side,
        "text": str(comment.get("text", "")),
        "author": str(comment.get("author", "")),
        "created_at": str(comment.get("created_at", "")),
        "outdated": outdated,
    }


def stored(queue: WorkspaceQueue, action_id: str) -> list[dict[str, Any]]:
    """The stored comments of ``action_id`` (pending or resolved), [] when none."""
    return list(store.read(queue, action_id)["comments"])


def listed(queue: WorkspaceQueue, action_id: str, preview: Preview | None) -> list[dict[str, Any]]:
    """``action_id``'s comments as listed, ``outdated`` against ``preview``."""
    return [public(c, preview) for c in stored(queue, action_id)]


# -- to the agent ----------------------------------------------------------------------
def comment_line(comment: dict[str, Any]) -> str:
    """``PATH:LINE: TEXT`` (``PATH: TEXT`` for a file, ``PATH:-LINE`` for a line of the
    current text); the comment's own further lines indented under it."""
    line = comment.get("line")
    side: Side = "old" if comment.get("side") == "old" else "new"
    where = Target(str(comment.get("path", "")), line if isinstance(line, int) else None, side)
    first, *more = str(comment.get("text", "")).split("\n")
    suffix = " (outdated)" if comment.get("outdated") else ""
    return "\n".join([f"{where.shown()}{suffix}: {first}", *(f"    {m}" for m in more)])


def comment_lines(comments: Sequence[dict[str, Any]]) -> str:
    """One :func:`comment_line` per comment, in order."""
    return "\n".join(comment_line(c) for c in comments)


def notes_text(verb: str, comments: Sequence[dict[str, Any]]) -> str:
    """What a decision adds for the agent: the comment lines for a discard, the
    ``applied; reviewer notes:`` block for an apply ("" without comments)."""
    if not comments:
        return ""
    lines = comment_lines(comments)
    if verb == "apply":
        return f"{APPLIED_NOTES}\n{lines}"
    return lines


def agent_notes(queue: WorkspaceQueue | None, action_id: str, verb: str) -> str:
    """The comments of ``action_id`` formatted for its agent after ``verb`` (``apply`` or
    ``discard``): :func:`notes_text` of its stored comments, "" when it has none or they
    cannot be read. The late-outcome outbox calls this for a decision it delivers."""
    if queue is None:
        return ""
    try:
        comments = stored(queue, action_id)
        if not comments:
            return ""
        # Marked outdated where their line changed (comments carried from a revision).
        return notes_text(verb, [public(c, _preview_of(queue, action_id)) for c in comments])
    except (QueueError, QueueRecordError, ValueError):
        return ""


def _preview_of(queue: WorkspaceQueue, action_id: str) -> Preview | None:
    """The action's Preview, kept in the resolved log or pending (None: not readable).

    The resolved log's copy first: a hook answers once its decision is logged, while the
    process that asked may be removing the record (its id already marked used, the record
    file not yet gone, a read of it is refused as a replay)."""
    from redline.workspace.queue import QueueRecord

    resolution = queue.resolution(action_id)
    if resolution is not None and resolution.record is not None:
        record: QueueRecord | None = QueueRecord.from_dict(resolution.record, action_id)
    else:
        record = queue.get(action_id)
    if record is None:
        return None
    return queue.preview(record)


def with_notes(text: str, notes: str) -> str:
    """``text`` followed by ``notes`` on lines of their own (``text`` alone without)."""
    if not notes or notes in text:
        return text
    return f"{text.rstrip()}\n{notes}" if text.strip() else notes


def _in_unit(comment: dict[str, Any], unit: Unit) -> bool:
    line = comment.get("line")
    if comment.get("path") != unit.path or not isinstance(line, int):
        return False
    old_start, old_end, new_start, new_end = unit.block
    if comment.get("side") == "old":
        return old_start < line <= old_end
    return new_start < line <= new_end


def split_for_discard(
    queue: WorkspaceQueue, old_id: str, new_id: str, dropped: Sequence[Unit]
) -> list[dict[str, Any]]:
    """Some hunks of ``old_id`` were discarded and the rest is ``new_id`` (which took the
    whole conversation): the comments on the dropped hunks go back to ``old_id`` — they
    reach the agent with that discard — and are returned; the rest stay with ``new_id``."""
    try:
        document = store.read(queue, new_id)
        taken = [c for c in document["comments"] if any(_in_unit(c, u) for u in dropped)]
        if not taken:
            return []
        document["comments"] = [c for c in document["comments"] if c not in taken]
        store.write(queue, new_id, document)
        old = store.read(queue, old_id)
        old["comments"] = taken
        store.write(queue, old_id, old)
    except (QueueError, QueueRecordError):
        return []
    return taken
