"""What a search produces: per-file results and the report over all files."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.workspace.preview import Preview


@dataclass(frozen=True)
class Match:
    """One match; offsets index the file's text, lines are 1-based, columns 0-based."""

    op: int
    start: int
    end: int
    start_line: int
    start_column: int
    end_line: int
    end_column: int
    text: str
    replacement: str | None = None
    # What is replaced: the span, widened to whole lines when a statement is deleted.
    edit_start: int = 0
    edit_end: int = 0

    @classmethod
    def at(
        cls,
        starts: Sequence[int],
        op: int,
        start: int,
        end: int,
        text: str,
        replacement: str | None = None,
    ) -> Match:
        """The match of ``text[start:end]`` given the offsets each line starts at (its
        lines and columns found by bisection), replacing exactly its span."""
        sl = min(bisect.bisect_right(starts, start) - 1, len(starts) - 1)
        el = min(bisect.bisect_right(starts, end) - 1, len(starts) - 1)
        return cls(
            op,
            start,
            end,
            sl + 1,
            start - starts[sl],
            el + 1,
            end - starts[el],
            text,
            replacement,
            start,
            end,
        )


@dataclass(frozen=True)
class FileResult:
    path: str
    matches: tuple[Match, ...] = ()
    error: str | None = None
    error_kind: str | None = None
    sha256: str = ""
    encoding: str = "utf-8"
    old_text: str | None = None
    new_text: str | None = None
    # Matches left as they were (their rewrite would not parse), one line each.
    skipped: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.new_text is not None and self.new_text != self.old_text


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}{'es' if word.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def splice(text: str, matches: tuple[Match, ...]) -> str:
    out: list[str] = []
    cursor = 0
    for match in sorted(matches, key=lambda m: m.edit_start):
        assert match.replacement is not None
        out.append(text[cursor : match.edit_start])
        out.append(match.replacement)
        cursor = match.edit_end
    out.append(text[cursor:])
    return "".join(out)


@dataclass
class AstEditReport:
    """Every file's outcome, in path order: matches, errors, and the combined preview."""

    rewrite: bool
    files: list[FileResult] = field(default_factory=list)
    errors: list[FileResult] = field(default_factory=list)
    files_searched: int = 0
    limit: int | None = None
    limit_reached: bool = False

    @property
    def total_matches(self) -> int:
        return sum(len(result.matches) for result in self.files)

    @property
    def file_count(self) -> int:
        return len(self.files)

    def preview(self) -> Preview:
        from redline.workspace.preview import FileModify, Preview

        return Preview(
            FileModify(
                path=result.path,
                old_sha256=result.sha256,
                old_text=result.old_text or "",
                new_text=result.new_text or "",
                encoding=result.encoding,
            )
            for result in self.files
            if result.new_text is not None and result.old_text is not None
        )

    def summary_label(self) -> str:
        return (
            f"AST Edit: {plural(self.total_matches, 'replacement')} in "
            f"{plural(self.file_count, 'file')}"
        )
