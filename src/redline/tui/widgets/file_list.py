"""The files of the selected action: change kind, path (or old -> new) and +/- lines."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from redline.termtext import one_line
from redline.tui.diff_model import change_stats
from redline.workspace.preview import FileChange, change_title

KIND_STYLE = {
    "M": "$redline-text-warning",
    "A": "$redline-text-success",
    "D": "$text-error",
    "R": "$redline-text-accent",
}


class FileList(OptionList):
    """Highlighting a file here shows it in the diff view (``[`` and ``]`` step through)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._changes: tuple[FileChange, ...] = ()
        self._marked: set[int] = set()

    def _prompt(self, position: int, change: FileChange) -> Content:
        title = change_title(change)
        letter, _, rest = title.partition(" ")
        added, removed = change_stats(change)
        mark = ("● ", "bold $redline-text-accent") if position in self._marked else ""
        return Content.assemble(
            mark,
            (letter, f"bold {KIND_STYLE.get(letter, '')}"),
            " ",
            one_line(rest),
            "  ",
            (f"+{added}", "$redline-text-success"),
            " ",
            (f"-{removed}", "$text-error"),
        )

    def mark(self, positions: set[int]) -> None:
        """Mark the files with units in the person's selection."""
        if positions == self._marked:
            return
        changed = positions ^ self._marked
        self._marked = set(positions)
        for position in changed:
            if position < len(self._changes):
                self.replace_option_prompt_at_index(
                    position, self._prompt(position, self._changes[position])
                )

    def show_changes(self, changes: tuple[FileChange, ...], index: int = 0) -> None:
        self._changes = changes
        self._marked = set()
        options = []
        for position, change in enumerate(changes):
            options.append(Option(self._prompt(position, change), id=f"file-{position}"))
        self.set_options(options)
        if options:
            self.highlighted = index
