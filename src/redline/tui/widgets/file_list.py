"""The files of the selected action: change kind, path (or old -> new) and +/- lines."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

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

    def show_changes(self, changes: tuple[FileChange, ...], index: int = 0) -> None:
        options = []
        for position, change in enumerate(changes):
            title = change_title(change)
            letter, _, rest = title.partition(" ")
            added, removed = change_stats(change)
            prompt = Content.assemble(
                (letter, f"bold {KIND_STYLE.get(letter, '')}"),
                " ",
                rest,
                "  ",
                (f"+{added}", "$redline-text-success"),
                " ",
                (f"-{removed}", "$text-error"),
            )
            options.append(Option(prompt, id=f"file-{position}"))
        self.set_options(options)
        if options:
            self.highlighted = index
