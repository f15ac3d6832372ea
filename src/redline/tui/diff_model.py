"""The rows a diff view shows, computed from one file change (no Textual here).

Built straight from grouped opcodes (redline.workspace.diffing) rather than parsed back
out of the unified diff text, so every row knows its old and new line numbers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from redline.review.texts import counted
from redline.termtext import diff_line, hides
from redline.workspace.diffing import grouped_opcodes, opcodes
from redline.workspace.hunks import unit_numbers
from redline.workspace.preview import (
    FileChange,
    FileCreate,
    FileDelete,
    FileRename,
    crlf_endings,
    line_stats,
    new_lines,
    old_lines,
)

RowKind = Literal["context", "add", "delete", "hunk", "meta"]

FULL_CONTEXT = 1_000_000
CONTEXT_STEPS = (3, 10, 25, FULL_CONTEXT)


@dataclass(frozen=True, slots=True)
class DiffRow:
    kind: RowKind
    old_no: int | None = None
    new_no: int | None = None
    text: str = ""
    # The hunk this row belongs to (1-based, as ``PATH#N`` numbers them: the ``@@`` blocks
    # at 3 lines of context, whatever context is shown), or None.
    hunk: int | None = None
    # The line held control or invisible characters (now shown as ``\x1b``/``<U+202E>``):
    # the gutter marks it so a reviewer knows to look.
    hidden: bool = False
    # On the first changed row of each hunk: its number, for the gutter's ``#N`` label.
    label: int | None = None


@dataclass(frozen=True, slots=True)
class SplitRow:
    """One side-by-side row: ``left`` from the old file, ``right`` from the new one."""

    left: DiffRow | None
    right: DiffRow | None
    kind: RowKind = "context"


def _row(
    kind: RowKind,
    old_no: int | None,
    new_no: int | None,
    line: str,
    crlf: bool,
    hunk: int | None = None,
) -> DiffRow:
    """One body line as the dashboard draws it: shown by ``redline.termtext`` (a CRLF
    file's ``\r`` dropped, said once in the header), tabs expanded, marked when it held
    something a terminal would hide."""
    body = line[:-1] if line.endswith("\n") else line
    if crlf and body.endswith("\r"):
        body = body[:-1]
    return DiffRow(kind, old_no, new_no, diff_line(body).expandtabs(4), hunk, hides(body))


def unified_rows(change: FileChange, context: int = 3) -> list[DiffRow]:
    if isinstance(change, FileRename):
        return [
            DiffRow("meta", text=f"rename from {change.old_path}"),
            DiffRow("meta", text=f"rename to {change.new_path}"),
            DiffRow("meta", text="(content unchanged)"),
        ]
    if isinstance(change, FileDelete) and change.old_text is None:
        return [DiffRow("meta", text="binary file deleted")]
    old = old_lines(change)
    new = new_lines(change)
    rows: list[DiffRow] = []
    crlf = crlf_endings(change)
    if isinstance(change, FileCreate):
        rows.append(DiffRow("meta", text=f"new file, {counted(len(new), 'line')}"))
    elif isinstance(change, FileDelete):
        rows.append(DiffRow("meta", text=f"deleted file, {counted(len(old), 'line')}"))
    if crlf:
        rows.append(DiffRow("meta", text="CRLF line endings"))
    if not old and not new:
        rows.append(DiffRow("meta", text="(empty file)"))
        return rows
    groups = grouped_opcodes(opcodes(old, new), context)
    if not groups:
        rows.append(DiffRow("meta", text="(no textual change)"))
        return rows
    numbers = unit_numbers(old, new)
    labelled: set[int] = set()
    for group in groups:
        first, last = group[0], group[-1]
        rows.append(
            DiffRow(
                "hunk",
                text=f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@",
            )
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(
                    _row("context", i + 1, j1 + (i - i1) + 1, old[i], crlf) for i in range(i1, i2)
                )
                continue
            number = numbers.get((i1, j1))
            start = len(rows)
            if tag in ("replace", "delete"):
                rows.extend(
                    _row("delete", i + 1, None, old[i], crlf, number) for i in range(i1, i2)
                )
            if tag in ("replace", "insert"):
                rows.extend(_row("add", None, j + 1, new[j], crlf, number) for j in range(j1, j2))
            if number is not None and number not in labelled and start < len(rows):
                labelled.add(number)
                rows[start] = dataclasses.replace(rows[start], label=number)
    return rows


def change_stats(change: FileChange) -> tuple[int, int]:
    """(added, removed) lines of one change, as the preview model counts them."""
    stats = line_stats(change)
    return stats.added, stats.removed


def split_rows(rows: list[DiffRow]) -> list[SplitRow]:
    """Pair deletions with the additions that follow them, like side-by-side tools do."""
    out: list[SplitRow] = []
    deletes: list[DiffRow] = []
    adds: list[DiffRow] = []

    def flush() -> None:
        for index in range(max(len(deletes), len(adds))):
            left = deletes[index] if index < len(deletes) else None
            right = adds[index] if index < len(adds) else None
            out.append(SplitRow(left, right, "delete" if right is None else "add"))
        deletes.clear()
        adds.clear()

    for row in rows:
        if row.kind == "delete":
            if adds:
                flush()
            deletes.append(row)
        elif row.kind == "add":
            adds.append(row)
        else:
            flush()
            if row.kind == "context":
                out.append(SplitRow(row, row, "context"))
            else:
                out.append(SplitRow(row, None, row.kind))
    flush()
    return out


def next_context(context: int) -> int:
    for step in CONTEXT_STEPS:
        if step > context:
            return step
    return context


def previous_context(context: int) -> int:
    for step in reversed(CONTEXT_STEPS):
        if step < context:
            return step
    return 0
