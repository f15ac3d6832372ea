"""The review conversation of one pending action (``m`` in the inbox).

One file at a time, its diff with a line cursor and each comment under its line, in the
unified or split view: ``a`` comments on the cursor's line (a header row: the whole file),
``x`` deletes the comment at the cursor, ``v`` marks the file viewed and goes to the next
unviewed one (viewed files are dimmed in the title), ``[``/``]`` other files. A revision
opens on "since revision N" (the interdiff); ``t`` toggles to the full diff against the
disk, and a hunk key (``}``/``{``) there switches to the full diff first, saying so — hunks
are picked against the files on disk. ``n`` closes the view and discards the action,
labelled "Request changes" while it has comments. Every write goes through the queue's
claim (:mod:`redline.review.comments`, :mod:`redline.review.viewed`) on a thread worker.
"""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from redline.termtext import one_line
from redline.tui.conversation_model import Conversation, Line, Mode
from redline.tui.key_words import describe_keys
from redline.tui.widgets.fitting_footer import FittingFooter
from redline.workspace.queue import WorkspaceQueue

SIGN = {"add": "+", "delete": "-", "context": " ", "hunk": "", "meta": ""}
STYLE = {
    "add": "on $success-muted",
    "delete": "on $error-muted",
    "hunk": "$redline-text-accent",
    "meta": "italic $text-muted",
    "context": "",
}
INTERDIFF_HUNKS = "Showing the full diff: hunks are picked against the files on disk."
REQUEST_CHANGES = "Request changes"


def discard_label(queue: WorkspaceQueue | None, action_id: str | None) -> str:
    """The inbox's discard key: "Request changes" while the action has comments."""
    from redline.workspace.queue import QueueError
    from redline.workspace.queue import conversation as store

    if queue is None or not action_id:
        return "Discard"
    try:
        return REQUEST_CHANGES if store.has_comments(queue, action_id) else "Discard"
    except (QueueError, OSError):
        return "Discard"


class ConversationScreen(Screen[str | None]):
    """Dismissed with ``"discard"`` when the person requests changes (``n``), else None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "add_comment", "Comment"),
        Binding("x", "delete_comment", "Delete comment"),
        Binding("v", "viewed", "Viewed"),
        Binding("t", "toggle_mode", "Full diff"),
        Binding("n", "request_changes", "Discard"),
        Binding("right_square_bracket", "step_file(1)", "Next file", key_display="]"),
        Binding("left_square_bracket", "step_file(-1)", "Prev file", key_display="["),
        Binding("right_curly_bracket", "hunk(1)", "Next hunk", key_display="}"),
        Binding("left_curly_bracket", "hunk(-1)", "Prev hunk", key_display="{", show=False),
        Binding("s", "toggle_split", "Split"),
        Binding("escape", "close", "Back"),
    ]
    DEFAULT_CSS = """
    ConversationScreen #conversation-title { height: 1; padding: 0 1; }
    ConversationScreen #conversation-lines { height: 1fr; }
    ConversationScreen #conversation-input { dock: bottom; display: none; }
    ConversationScreen #conversation-input.open { display: block; }
    """

    def __init__(self, queue: WorkspaceQueue, action_id: str) -> None:
        super().__init__()
        self.queue = queue
        self.action_id = action_id
        self.state: Conversation | None = None
        self.file_index = 0
        self.mode: Mode = "full"
        self.split = False
        self.lines: list[Line] = []
        self._opened = False

    def compose(self) -> ComposeResult:
        yield Static(id="conversation-title")
        yield OptionList(id="conversation-lines")
        yield Input(placeholder="comment (Enter saves, Escape cancels)", id="conversation-input")
        yield FittingFooter(first=("add_comment", "request_changes", "close"))

    @property
    def options(self) -> OptionList:
        return self.query_one("#conversation-lines", OptionList)

    @property
    def input(self) -> Input:
        return self.query_one("#conversation-input", Input)

    def on_mount(self) -> None:
        self.reload()
        self.options.focus()

    # -- reading --------------------------------------------------------------------
    def reload(self) -> None:
        from redline.workspace.queue import QueueError

        try:
            state = Conversation.read(self.queue, self.action_id)
        except (QueueError, ValueError) as exc:
            self.notify(str(exc), severity="error")
            state = None
        if state is None:
            self.notify(f"{self.action_id} is no longer pending.", severity="warning")
            self.dismiss(None)
            return
        self.state = state
        if not self._opened:
            self._opened = True
            # A revision opens on what changed since the previous one.
            self.mode = "interdiff" if state.revision is not None else "full"
        self.file_index = min(self.file_index, len(state.paths) - 1)
        self.draw()

    def draw(self, keep: int | None = None) -> None:
        state = self.state
        if state is None:
            return
        self.lines = state.lines(self.file_index, self.mode)
        cursor = self.options.highlighted if keep is None else keep
        self.options.clear_options()
        self.options.add_options([Option(self._line_content(line)) for line in self.lines])
        if self.lines:
            self.options.highlighted = min(cursor or 0, len(self.lines) - 1)
        self._title()
        self._labels()

    def _title(self) -> None:
        state = self.state
        assert state is not None
        parts: list[Content] = [Content.styled(f"{self.action_id} ", "bold")]
        for index, path in enumerate(state.paths):
            style = "$text-muted" if state.viewed.get(path) else ""
            if index == self.file_index:
                style = f"{style} reverse".strip()
            mark = " ✓" if state.viewed.get(path) else ""
            parts.append(Content.styled(f" {one_line(path)}{mark} ", style))
        if state.revision is not None:
            info = state.revision
            what = (
                f"since revision {info.number - 1} ({info.of})"
                if self.mode == "interdiff"
                else "full diff against the disk"
            )
            note = "; the files changed under it" if info.base_changed else ""
            parts.append(Content.styled(f"  revision {info.number}: {what}{note}", "italic"))
        self.query_one("#conversation-title", Static).update(Content.assemble(*parts))

    def _labels(self) -> None:
        """The footer says what ``n`` and ``t`` do now."""
        state = self.state
        request = REQUEST_CHANGES if state is not None and state.comments else "Discard"
        toggle = "Full diff" if self.mode == "interdiff" else "Since revision"
        describe_keys(self, (("n", request), ("t", toggle)))

    def _line_content(self, line: Line) -> Content:
        if line.kind == "note":
            return Content.styled(line.text, "italic $text-muted")
        if line.kind == "comment":
            comment = line.comment or {}
            where = "file" if comment.get("line") is None else f"line {comment['line']}"
            if comment.get("side") == "old":
                where += " (current text)"
            flag = " outdated" if comment.get("outdated") else ""
            body = one_line(str(comment.get("text", "")))
            return Content.assemble(
                ("    💬 ", "bold"),
                (f"{comment.get('id')} {where}{flag}: ", "bold $redline-text-accent"),
                body,
            )
        row = line.row
        assert row is not None
        if row.kind in ("hunk", "meta"):
            return Content.styled(one_line(row.text), STYLE[row.kind])
        text = one_line(row.text)
        if self.split:
            half = max((self.options.size.width - 4) // 2, 10)
            left = f"{row.old_no or '':>4} {text}" if row.kind != "add" else ""
            right = f"{row.new_no or '':>4} {text}" if row.kind != "delete" else ""
            return Content.assemble(
                Content.styled(left, STYLE["delete"] if row.kind == "delete" else "").truncate(
                    half, ellipsis=True, pad=True
                ),
                ("│", "$text-muted"),
                Content.styled(right, STYLE["add"] if row.kind == "add" else "").truncate(
                    half, ellipsis=True, pad=True
                ),
            )
        old = f"{row.old_no or '':>4}"
        new = f"{row.new_no or '':>4}"
        return Content.assemble(
            (f"{old} {new} ", "$text-muted"), Content.styled(SIGN[row.kind] + text, STYLE[row.kind])
        )

    # -- keys -----------------------------------------------------------------------
    def _cursor_line(self) -> Line | None:
        index = self.options.highlighted
        if index is None or not 0 <= index < len(self.lines):
            return None
        return self.lines[index]

    def action_add_comment(self) -> None:
        if self._cursor_line() is None or self.state is None:
            self.notify("Nothing to comment on here.", severity="warning")
            return
        self.input.value = ""
        self.input.add_class("open")
        self.input.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        line = self._cursor_line()
        self._close_input()
        if line is None or self.state is None:
            return
        path = self.state.paths[self.file_index]
        self._save_comment(line, path, message.value)

    def on_key(self, event: object) -> None:
        from textual import events

        if isinstance(event, events.Key) and event.key == "escape" and self.input.has_class("open"):
            event.stop()
            self._close_input()

    def _close_input(self) -> None:
        self.input.remove_class("open")
        self.options.focus()

    @work(thread=True, exclusive=True, group="conversation")
    def _save_comment(self, line: Line, path: str, text: str) -> None:
        from redline.review.comments import CommentError, add_comment
        from redline.workspace.queue import QueueError

        target = line.target(path)
        try:
            made = add_comment(self.queue, self.action_id, target, text)
        except (CommentError, QueueError) as exc:
            self.app.call_from_thread(self.notify, str(exc), severity="error")
            return
        self.app.call_from_thread(self._done, f"Added {made['id']} on {target.shown()}.")

    def action_delete_comment(self) -> None:
        line = self._cursor_line()
        comment = line.comment if line is not None else None
        if comment is None and line is not None:
            # On a line: its last comment.
            index = self.options.highlighted or 0
            following = self.lines[index + 1 :]
            mine = []
            for item in following:
                if item.kind != "comment" or item.row is not line.row:
                    break
                mine.append(item)
            comment = mine[-1].comment if mine else None
        if comment is None:
            self.notify("No comment on this line.", severity="warning")
            return
        self._delete_comment(str(comment["id"]))

    @work(thread=True, exclusive=True, group="conversation")
    def _delete_comment(self, comment_id: str) -> None:
        from redline.review.comments import CommentError, delete_comment
        from redline.workspace.queue import QueueError

        try:
            delete_comment(self.queue, self.action_id, comment_id)
        except (CommentError, QueueError) as exc:
            self.app.call_from_thread(self.notify, str(exc), severity="error")
            return
        self.app.call_from_thread(self._done, f"Deleted {comment_id}.")

    def action_viewed(self) -> None:
        if self.state is not None:
            self._mark_viewed(self.state.paths[self.file_index])

    @work(thread=True, exclusive=True, group="conversation")
    def _mark_viewed(self, path: str) -> None:
        from redline.review.viewed import ViewedError, mark_viewed
        from redline.workspace.queue import QueueError

        try:
            mark_viewed(self.queue, self.action_id, path)
        except (ViewedError, QueueError) as exc:
            self.app.call_from_thread(self.notify, str(exc), severity="error")
            return
        self.app.call_from_thread(self._viewed_done, path)

    def _viewed_done(self, path: str) -> None:
        self.reload()
        state = self.state
        if state is None:
            return
        found = state.next_unviewed(self.file_index)
        if found is None:
            self.notify(f"{path} viewed; every file of {self.action_id} is viewed.")
        else:
            self.file_index = found
            self.notify(f"{path} viewed; next unviewed: {state.paths[found]}.")
            self.draw(keep=0)

    def _done(self, text: str) -> None:
        self.notify(text)
        self.reload()

    def action_step_file(self, delta: int) -> None:
        if self.state is None or not self.state.paths:
            return
        self.file_index = (self.file_index + delta) % len(self.state.paths)
        self.draw(keep=0)

    def action_toggle_mode(self) -> None:
        if self.state is None or self.state.revision is None:
            self.notify("This action is not a revision: it has only the full diff.")
            return
        self.mode = "full" if self.mode == "interdiff" else "interdiff"
        self.draw(keep=0)

    def action_hunk(self, delta: int) -> None:
        if self.mode == "interdiff":
            self.mode = "full"
            self.notify(INTERDIFF_HUNKS)
            self.draw(keep=0)
        hunks = [i for i, line in enumerate(self.lines) if line.row and line.row.kind == "hunk"]
        if not hunks:
            return
        current = self.options.highlighted or 0
        after = [i for i in hunks if (i > current if delta > 0 else i < current)]
        target = (after[0] if delta > 0 else after[-1]) if after else hunks[0 if delta > 0 else -1]
        self.options.highlighted = target

    def action_toggle_split(self) -> None:
        self.split = not self.split
        self.draw()

    def action_request_changes(self) -> None:
        self.dismiss("discard")

    def action_close(self) -> None:
        if self.input.has_class("open"):
            self._close_input()
            return
        self.dismiss(None)
