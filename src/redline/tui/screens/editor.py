"""Edit one file's proposed new content before it lands (``e`` in the dashboard).

A full screen with a ``TextArea`` (line numbers; syntax colour when Textual's tree-sitter
extras are installed, plain text otherwise). ``ctrl+s`` saves (the screen is dismissed with
the new text), ``escape`` cancels (dismissed with None). Saving a ``.py`` file that does not
parse asks first: the edit is allowed, but the person should know.

``E`` edits outside instead: :func:`edit_outside` runs ``$VISUAL`` / ``$EDITOR``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path, PurePath
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static, TextArea

from redline.termtext import one_line
from redline.tui.screens.confirm import ConfirmScreen
from redline.workspace.hunks import python_warning

# File suffixes (lower case) to the tree-sitter languages textual[syntax] brings.
LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".sh": "bash",
    ".bash": "bash",
    ".sql": "sql",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".xml": "xml",
    ".svg": "xml",
}


def language_for(path: str, available: set[str]) -> str | None:
    """The TextArea language for ``path`` by its suffix (any case), or None when it cannot
    be highlighted here (an unknown suffix, or textual[syntax] lacks the language)."""
    language = LANGUAGES.get(PurePath(path).suffix.lower())
    return language if language in available else None


class EditorScreen(Screen[str | None]):
    """The proposed text of ``path`` in an editor; dismissed with the saved text or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel", priority=True),
    ]

    def __init__(self, action_id: str, path: str, text: str) -> None:
        super().__init__()
        self.action_id = action_id
        self.path = path
        self.original = text

    def compose(self) -> ComposeResult:
        with Vertical(id="editor-body"):
            yield Static(
                Content.assemble(
                    ("Editing ", "bold"),
                    (one_line(self.path), "bold $redline-text-accent"),
                    (f" of {self.action_id}", "$text-muted"),
                    ("  — ctrl+s saves as an edited action, escape cancels", "$text-muted"),
                ),
                id="editor-title",
            )
            area = TextArea.code_editor(self.original, id="editor-area")
            language = language_for(self.path, area.available_languages)
            if language is not None:
                area.language = language
            yield area
        yield Footer(compact=True)

    @property
    def area(self) -> TextArea:
        return self.query_one("#editor-area", TextArea)

    def on_mount(self) -> None:
        self.area.focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_save(self) -> None:
        text = self.area.text
        if text == self.original:
            self.dismiss(None)
            return
        warning = python_warning(self.path, text)
        if warning is None:
            self.dismiss(text)
            return

        def answered(keep: bool | None) -> None:
            if keep:
                self.dismiss(text)

        self.app.push_screen(
            ConfirmScreen(f"{warning} Save anyway?", yes="Save", no="Keep editing"), answered
        )


def edit_outside(app: App[Any], path: str, text: str) -> str | None:
    """Let ``$VISUAL`` / ``$EDITOR`` change a scratch copy of ``text`` while the app is
    suspended; the edited text, or None (with a note) when there is nothing to save."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        app.notify("Set $VISUAL or $EDITOR to edit outside the dashboard (e edits here).")
        return None
    suffix = PurePath(path).suffix
    with tempfile.TemporaryDirectory(prefix="redline-edit-") as folder:
        scratch = Path(folder) / f"proposal{suffix}"
        scratch.write_text(text, encoding="utf-8")
        try:
            with app.suspend():
                subprocess.run([*shlex.split(editor), str(scratch)], check=False)
        except Exception as exc:
            app.notify(f"Could not run {editor}: {exc}", severity="error")
            return None
        new_text = scratch.read_text(encoding="utf-8", errors="surrogateescape")
    if new_text == text:
        app.notify("No change: the action stays as it was.")
        return None
    warning = python_warning(path, new_text)
    if warning is not None:
        app.notify(warning, title="Edited file does not parse", severity="warning")
    return new_text
