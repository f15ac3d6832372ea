"""The selected action in detail: a header, its file list and the diff of one file."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static

from redline.tools.pending_action import PendingAction
from redline.tui.diff_model import next_context, previous_context
from redline.tui.widgets.diff_view import DiffView
from redline.tui.widgets.file_list import FileList


def _details_lines(action: PendingAction) -> list[Content]:
    lines = [
        Content.styled("This action changes no files; what it will do:", "italic $text-muted"),
        Content(""),
    ]
    details: Any = action.details
    if details is None:
        lines.append(Content.styled("(no details given)", "$text-muted"))
    else:
        text = details if isinstance(details, str) else json.dumps(details, indent=2, default=str)
        lines.extend(Content(line.expandtabs(4)) for line in text.splitlines())
    return lines


class PreviewPanel(Vertical):
    """Shows one pending action; ``[``/``]``, split and context are driven by the app."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.action: PendingAction | None = None
        self.file_index = 0
        self.context = 3
        self.split = False

    def compose(self) -> ComposeResult:
        yield Static(id="preview-header")
        yield FileList(id="file-list")
        yield DiffView(id="diff-view")

    @property
    def diff_view(self) -> DiffView:
        return self.query_one(DiffView)

    @property
    def file_count(self) -> int:
        if self.action is None or self.action.preview is None:
            return 0
        return len(self.action.preview.changes)

    def show_action(self, action: PendingAction | None) -> None:
        same = action is not None and self.action is not None and action.id == self.action.id
        self.action = action
        if not same:
            self.file_index = 0
        self._render_header()
        file_list = self.query_one(FileList)
        if action is None:
            file_list.display = False
            file_list.clear_options()
            self.diff_view.show_text([Content.styled("No pending actions.", "$text-muted")])
            return
        if action.preview is None or not action.preview.changes:
            file_list.display = False
            file_list.clear_options()
            self.diff_view.show_text(_details_lines(action))
            return
        file_list.display = True
        self.file_index = min(self.file_index, self.file_count - 1)
        file_list.show_changes(action.preview.changes, self.file_index)
        self._show_file()

    def _render_header(self) -> None:
        header = self.query_one("#preview-header", Static)
        action = self.action
        # The panel's border already says "Preview"; an empty header would say it twice.
        header.display = action is not None
        if action is None:
            header.update("")
            return
        parts: list[tuple[str, str] | str] = [
            (action.id, "$text-muted"),
            "  ",
            (action.label, "bold"),
            "  ",
            (f"[{action.source_tool_name}]", "$text-secondary"),
        ]
        if action.stale:
            parts.extend(
                [
                    "\n",
                    (" STALE ", "bold $text-error on $error-muted"),
                    " ",
                    (action.stale_reason or "the files changed since the preview", "$text-error"),
                    ("  — re-preview (p) or discard (n)", "$text-muted"),
                ]
            )
        header.update(Content.assemble(*parts))

    def _show_file(self) -> None:
        if self.action is None or self.action.preview is None or not self.action.preview.changes:
            return
        change = self.action.preview.changes[self.file_index]
        self.diff_view.show_change(change, context=self.context, split=self.split)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option_index != self.file_index:
            self.file_index = event.option_index
            self._show_file()

    def step_file(self, delta: int) -> None:
        if self.file_count < 2:
            return
        self.file_index = (self.file_index + delta) % self.file_count
        self.query_one(FileList).highlighted = self.file_index
        self._show_file()

    def toggle_split(self) -> None:
        self.split = not self.split
        self._show_file()

    def change_context(self, more: bool) -> None:
        self.context = next_context(self.context) if more else previous_context(self.context)
        self._show_file()
