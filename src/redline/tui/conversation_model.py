"""What the dashboard's review-conversation view shows of one action (no Textual here).

One file at a time: its diff (the full diff against the disk, or for a revision the
interdiff "since revision N"), each line's comments right under it, and the file's viewed
mark. Read from the queue: the action's conversation document and, for a revision, the
previous revision's proposal (docs/review-conversation.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from redline.review.comments import Side, Target, listed
from redline.review.revision_info import RevisionInfo, revision_info
from redline.review.viewed import viewed_files
from redline.tui.diff_model import DiffRow, unified_rows
from redline.workspace.preview import FileChange, FileCreate, FileDelete, FileModify, Preview
from redline.workspace.queue import QueueRecord, WorkspaceQueue

Mode = Literal["full", "interdiff"]


@dataclass(frozen=True)
class Line:
    """One row of the view: a diff row, or a comment under the row it is about."""

    kind: Literal["diff", "comment", "note"]
    row: DiffRow | None = None
    comment: dict[str, Any] | None = None
    text: str = ""

    def target(self, path: str) -> Target:
        """Where a comment made on this row sits: a line of the proposed text, a line of
        the current text (a removed line), or the whole file (a header row)."""
        comment = self.comment
        if comment is not None:
            line = comment.get("line")
            side: Side = "old" if comment.get("side") == "old" else "new"
            return Target(path, line if isinstance(line, int) else None, side)
        row = self.row
        if row is None or row.kind in ("hunk", "meta"):
            return Target(path)
        if row.kind == "delete" and row.old_no is not None:
            return Target(path, row.old_no, "old")
        if row.new_no is not None:
            return Target(path, row.new_no, "new")
        return Target(path)


@dataclass
class Conversation:
    """One action's review state as the view shows it (re-read after every change)."""

    action_id: str
    record: QueueRecord
    preview: Preview
    comments: list[dict[str, Any]] = field(default_factory=list)
    viewed: dict[str, bool] = field(default_factory=dict)
    revision: RevisionInfo | None = None

    @classmethod
    def read(cls, queue: WorkspaceQueue, action_id: str) -> Conversation | None:
        record = queue.get(action_id)
        if record is None:
            return None
        preview = queue.preview(record)
        if preview is None:
            return None
        return cls(
            action_id,
            record,
            preview,
            listed(queue, action_id, preview),
            viewed_files(queue, action_id, preview),
            revision_info(queue, record, preview),
        )

    @property
    def paths(self) -> list[str]:
        return [change.path for change in self.preview.changes]

    def next_unviewed(self, after: int) -> int | None:
        """The index of the next file not viewed after ``after`` (wrapping), or None."""
        count = len(self.paths)
        for step in range(1, count + 1):
            index = (after + step) % count
            if not self.viewed.get(self.paths[index], False):
                return index
        return None

    def change(self, index: int) -> FileChange:
        return self.preview.changes[index]

    def lines(self, index: int, mode: Mode, context: int = 3) -> list[Line]:
        """The rows of file ``index``: its diff with each comment under its line; comments
        that have no row here (a file comment, an old-side one in the interdiff) first."""
        change = self.change(index)
        shown = self._interdiff_change(change) if mode == "interdiff" else change
        rows = unified_rows(shown, context) if shown is not None else []
        mine = [c for c in self.comments if c["path"] == change.path]
        placed: set[str] = set()
        body: list[Line] = []
        for row in rows:
            body.append(Line("diff", row))
            for comment in mine:
                if comment["id"] not in placed and _on_row(comment, row, mode):
                    placed.add(comment["id"])
                    body.append(Line("comment", row, comment))
        head = [Line("comment", None, c) for c in mine if c["id"] not in placed]
        if shown is None or not rows:
            note = "no change since the previous revision" if mode == "interdiff" else ""
            return [*head, Line("note", text=note or "no text changes")]
        return [*head, *body]

    def _interdiff_change(self, change: FileChange) -> FileChange | None:
        """The previous revision's proposed text of this file → this one's."""
        info = self.revision
        if info is None or info.previous is None:
            return change
        before = ""
        for old in info.previous.changes:
            if old.path == change.path:
                before = _proposed(old)
        after = _proposed(change)
        return None if before == after else FileModify(change.path, "", before, after)


def _proposed(change: FileChange) -> str:
    if isinstance(change, (FileModify, FileCreate)):
        return change.new_text
    if isinstance(change, FileDelete):
        return ""
    return ""


def _on_row(comment: dict[str, Any], row: DiffRow, mode: Mode) -> bool:
    line = comment.get("line")
    if line is None or row.kind in ("hunk", "meta"):
        return False
    if comment.get("side") == "old":
        # The current text's lines are the old side of the full diff only.
        return mode == "full" and row.kind != "add" and row.old_no == line
    return row.kind != "delete" and row.new_no == line
