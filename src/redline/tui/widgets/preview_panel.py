"""The selected action in detail: a header, its file list and the diff of one file."""

from __future__ import annotations

import json
import shlex
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static

from redline.review.source import ActionView, WorkspaceRef
from redline.review.store import PendingAction
from redline.termtext import one_line
from redline.tui.agent_ended import ended_note
from redline.tui.diff_model import next_context, previous_context
from redline.tui.widgets.diff_text import diff_lines
from redline.tui.widgets.diff_view import DiffView
from redline.tui.widgets.file_list import FileList
from redline.tui.widgets.pending_stack import action_source, source_badge, workspace_name
from redline.workspace.details import details_to_json
from redline.workspace.hunks import Unit, hunk_units
from redline.workspace.preview import via_lines


def command_line(details: Any) -> str | None:
    """The shell command an agent asks to run, as one line (None: not a command request).

    Agents put it in the permission's tool input: ``{"command": "npm test"}`` (Claude Code,
    Gemini CLI) or ``{"command": ["bash", "-lc", "npm test"]}`` (Codex).
    """
    if not isinstance(details, dict):
        return None
    raw = details.get("raw_input")
    command = raw.get("command") if isinstance(raw, dict) else None
    if isinstance(command, str) and command.strip():
        return command.strip()
    if isinstance(command, list) and command and all(isinstance(part, str) for part in command):
        return shlex.join(command)
    return None


def _details_lines(action: PendingAction) -> list[Content]:
    details: Any = details_to_json(action.details)  # as the queue stores them
    command = command_line(details)
    if command is not None:
        raw = details.get("raw_input") or {}
        lines = [
            Content.styled("The agent asks to run this command:", "italic $text-muted"),
            Content(""),
        ]
        lines.extend(
            Content.assemble(("$ " if index == 0 else "  ", "bold $text-muted"), (line, "bold"))
            for index, line in enumerate(command.splitlines())
        )
        for key, label in (("cwd", "in"), ("description", "why")):
            value = raw.get(key) if isinstance(raw, dict) else None
            if isinstance(value, str) and value.strip():
                lines.append(Content.assemble((f"{label}: ", "$text-muted"), value.strip()))
        return lines
    lines = [
        Content.styled("This action changes no files; what it will do:", "italic $text-muted"),
        Content(""),
    ]
    if details is None:
        lines.append(Content.styled("(no details given)", "$text-muted"))
    else:
        text = details if isinstance(details, str) else json.dumps(details, indent=2, default=str)
        lines.extend(Content(line.expandtabs(4)) for line in text.splitlines())
    return lines


class PreviewPanel(Vertical):
    """Shows one pending action; the inbox screen's keys step files and hunks, pick hunks
    (``space``), switch the split view and the context, and edit the shown file."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.action: PendingAction | None = None
        self.file_index = 0
        self.context = 3
        self.split = False
        # The person's selection of the shown action: unit addresses (``PATH#N``, ``PATH``).
        self.selected: set[str] = set()
        self.units: tuple[Unit, ...] = ()
        # Over a review source: the workspace of the shown action (said in the header when
        # the source spans several) and the id whose view (Preview or diff) is on screen.
        self.workspace: WorkspaceRef | None = None
        self.shown_id: str | None = None

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

    def show_action(
        self,
        action: PendingAction | None,
        *,
        listed: int = 0,
        view: ActionView | None = None,
        note: str = "",
        workspace: WorkspaceRef | None = None,
        empty: str = "No pending actions.",
    ) -> None:
        """Show ``action``; with None, say that nothing is pending (``empty``; or ``note``)
        or, when ``listed`` actions are, that none of them is selected.

        Over a review source: ``view`` is the loaded view (its unified ``diff`` is shown
        when there is no Preview), ``note`` what to say while it loads or why it cannot be
        read, ``workspace`` the action's workspace."""
        # The same action as shown (its selection kept), unless its Preview arrived since
        # (a review source reads it after the row is listed).
        same = (
            action is not None
            and self.action is not None
            and action.id == self.action.id
            and (self.action.preview is not None or action.preview is None)
        )
        self.action = action
        self.workspace = workspace
        if not same:
            self.file_index = 0
            self.selected = set()
            self.units = hunk_units(action.preview) if action is not None and action.preview else ()
        self._render_header()
        file_list = self.query_one(FileList)
        if action is None:
            file_list.display = False
            file_list.clear_options()
            self.shown_id = None
            text = note or (
                f"Nothing is selected ({listed} pending): pick an action with j / k (g: the top)."
                if listed
                else empty
            )
            self.diff_view.show_text([Content.styled(text, "$text-muted")])
            return
        if action.preview is None and (note or (view is not None and view.diff is not None)):
            # A source without file contents (the team queue): its mirrored diff as text.
            file_list.display = False
            file_list.clear_options()
            if view is not None and view.diff is not None and not note:
                self.shown_id = action.id
                lines = diff_lines(view.diff) or [Content("(no diff was mirrored)")]
            else:
                self.shown_id = None
                lines = [Content.styled(one_line(note), "$text-muted")]
            self.diff_view.show_text(lines)
            return
        self.shown_id = action.id
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
        parts: list[tuple[str, str] | str | Content] = [
            (one_line(action.id), "$text-muted"),
            "  ",
            (one_line(action.label), "bold"),
            "  ",
            (f"[{one_line(action.source_tool_name)}]", "$text-secondary"),
            "  ",
            source_badge(action_source(action)),
        ]
        if self.workspace is not None:
            parts.extend(
                [
                    "\n",
                    ("workspace ", "$text-muted"),
                    (f"⌂ {one_line(workspace_name(self.workspace))}", "bold $text-primary"),
                    "  ",
                    one_line(self.workspace.id),
                    "  ",
                    one_line(self.workspace.path),
                ]
            )
        # A path reached through a symlinked folder: say where it really writes.
        for line in via_lines(action.preview.via if action.preview is not None else {}):
            parts.extend(["\n", (" SYMLINK ", "bold $redline-text-warning on $warning-muted")])
            parts.extend([" ", (one_line(line), "$redline-text-warning")])
        ended = ended_note(action.details)
        if ended is not None:
            parts.extend(
                [
                    "\n",
                    (" AGENT ENDED ", "bold $redline-text-warning on $warning-muted"),
                    " ",
                    (f"the agent {one_line(ended)}", "$redline-text-warning"),
                    ("  — it will not hear the outcome", "$text-muted"),
                ]
            )
        if action.stale:
            parts.extend(
                [
                    "\n",
                    (" STALE ", "bold $text-error on $error-muted"),
                    " ",
                    (
                        one_line(action.stale_reason or "the files changed since the preview"),
                        "$text-error",
                    ),
                    ("  — re-preview (p) or discard (n)", "$text-muted"),
                ]
            )
        header.update(Content.assemble(*parts))

    def _show_file(self) -> None:
        if self.action is None or self.action.preview is None or not self.action.preview.changes:
            return
        change = self.action.preview.changes[self.file_index]
        self.diff_view.show_change(change, context=self.context, split=self.split)
        self._mark_file()

    # -- the selection ------------------------------------------------------------------
    @property
    def selectable(self) -> bool:
        """Whether the shown action can be resolved in parts (it has a Preview)."""
        return bool(self.units)

    def selection(self) -> list[str]:
        """The selected addresses in preview order (empty: the whole action)."""
        return [unit.address for unit in self.units if unit.address in self.selected]

    def _file_units(self) -> list[Unit]:
        return [unit for unit in self.units if unit.change_index == self.file_index]

    def _mark_file(self) -> None:
        marked = frozenset(
            unit.number
            for unit in self._file_units()
            if unit.number is not None and unit.address in self.selected
        )
        self.diff_view.set_marked(marked)
        self.query_one(FileList).mark(
            {unit.change_index for unit in self.units if unit.address in self.selected}
        )

    def step_hunk(self, delta: int) -> None:
        self.diff_view.step_hunk(delta)

    def toggle_part(self, *, whole_file: bool) -> bool:
        """Pick or drop the hunk under the cursor (``whole_file``: every hunk of the shown
        file); False, with a note, when the action resolves only as a whole."""
        if not self.selectable:
            self.notify("This action has no file preview: it resolves only as a whole.")
            return False
        if whole_file:
            self.toggle_file()
        else:
            self.toggle_hunk()
        return True

    def toggle_hunk(self) -> str | None:
        """Toggle the hunk under the cursor (or the whole file when it has no hunks)."""
        units = self._file_units()
        if not units:
            return None
        hunks = [unit for unit in units if unit.number is not None]
        if not hunks:
            return self.toggle_file()
        if self.diff_view.hunk_cursor is None:
            self.diff_view.step_hunk(1)
        number = self.diff_view.hunk_cursor
        unit = next((unit for unit in hunks if unit.number == number), hunks[0])
        self.selected ^= {unit.address}
        self._mark_file()
        return unit.address

    def toggle_file(self) -> str | None:
        """Toggle every unit of the shown file: all in when any is out, else all out."""
        units = self._file_units()
        if not units:
            return None
        addresses = {unit.address for unit in units}
        if addresses <= self.selected:
            self.selected -= addresses
        else:
            self.selected |= addresses
        self._mark_file()
        return units[0].path

    def edit_target(self) -> tuple[str, str, str] | None:
        """The shown action's id, the shown file and its proposed text, to edit; None (with
        a note) when there is no proposed text."""
        action = self.action
        if action is None or action.preview is None or not action.preview.changes:
            self.notify("Only an action with a file preview can be edited.", severity="warning")
            return None
        change = action.preview.changes[self.file_index]
        text = getattr(change, "new_text", None)
        if not isinstance(text, str):
            self.notify(f"{change.path} has no text to edit (deleted or renamed).")
            return None
        return action.id, change.path, text

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
