"""The rows a diff view shows, computed from one file change (no Textual here).

Built straight from difflib's grouped opcodes rather than parsed back out of the
unified diff text, so every row knows its old and new line numbers.
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass
from typing import Literal

from redline.workspace.preview import (
    FileChange,
    FileCreate,
    FileDelete,
    FileRename,
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


@dataclass(frozen=True, slots=True)
class SplitRow:
    """One side-by-side row: ``left`` from the old file, ``right`` from the new one."""

    left: DiffRow | None
    right: DiffRow | None
    kind: RowKind = "context"


def _clean(line: str) -> str:
    return line.rstrip("\r\n").expandtabs(4)


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
    if isinstance(change, FileCreate):
        rows.append(DiffRow("meta", text=f"new file, {len(new)} lines"))
    elif isinstance(change, FileDelete):
        rows.append(DiffRow("meta", text=f"deleted file, {len(old)} lines"))
    if not old and not new:
        rows.append(DiffRow("meta", text="(empty file)"))
        return rows
    groups = grouped_opcodes(opcodes(old, new), context)
    if not groups:
        rows.append(DiffRow("meta", text="(no textual change)"))
        return rows
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
                    DiffRow("context", i + 1, j1 + (i - i1) + 1, _clean(old[i]))
                    for i in range(i1, i2)
                )
                continue
            if tag in ("replace", "delete"):
                rows.extend(DiffRow("delete", i + 1, None, _clean(old[i])) for i in range(i1, i2))
            if tag in ("replace", "insert"):
                rows.extend(DiffRow("add", None, j + 1, _clean(new[j])) for j in range(j1, j2))
    return rows


Opcode = tuple[str, int, int, int, int]

# Below this many line pairs a region without unique anchors is left to difflib.
_DIFFLIB_BUDGET = 250_000


def _match(
    a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int, out: list[tuple[int, int]]
) -> None:
    """Patience diff: anchor on lines unique to both sides, recurse between anchors.

    difflib alone is quadratic when a big file has many small changes (a rename used on
    every other line takes about a second for 5,000 lines); anchoring keeps it near-linear.
    """
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        out.append((alo, blo))
        alo += 1
        blo += 1
    tail: list[tuple[int, int]] = []
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
        ahi -= 1
        bhi -= 1
        tail.append((ahi, bhi))
    if alo < ahi and blo < bhi:
        _match_middle(a, alo, ahi, b, blo, bhi, out)
    out.extend(reversed(tail))


def _match_middle(
    a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int, out: list[tuple[int, int]]
) -> None:
    count_a: dict[str, int] = {}
    for i in range(alo, ahi):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    where_b: dict[str, int] = {}
    count_b: dict[str, int] = {}
    for j in range(blo, bhi):
        count_b[b[j]] = count_b.get(b[j], 0) + 1
        where_b[b[j]] = j
    anchors = [
        (i, where_b[a[i]]) for i in range(alo, ahi) if count_a[a[i]] == 1 and count_b.get(a[i]) == 1
    ]
    if not anchors:
        if (ahi - alo) * (bhi - blo) <= _DIFFLIB_BUDGET:
            matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
            for i, j, size in matcher.get_matching_blocks():
                out.extend((alo + i + k, blo + j + k) for k in range(size))
        return
    prev_i, prev_j = alo, blo
    for i, j in _longest_increasing(anchors):
        _match(a, prev_i, i, b, prev_j, j, out)
        out.append((i, j))
        prev_i, prev_j = i + 1, j + 1
    _match(a, prev_i, ahi, b, prev_j, bhi, out)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (sorted by i) whose j also increases (patience sort)."""
    tails: list[int] = []
    tail_index: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        position = bisect.bisect_left(tails, j)
        if position == len(tails):
            tails.append(j)
            tail_index.append(index)
        else:
            tails[position] = j
            tail_index[position] = index
        back[index] = tail_index[position - 1] if position else -1
    result: list[tuple[int, int]] = []
    index = tail_index[-1] if tail_index else -1
    while index != -1:
        result.append(pairs[index])
        index = back[index]
    result.reverse()
    return result


def opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib-style opcodes (equal/replace/delete/insert) from a patience diff."""
    pairs: list[tuple[int, int]] = []
    _match(a, 0, len(a), b, 0, len(b), pairs)
    pairs.append((len(a), len(b)))
    codes: list[Opcode] = []
    i = j = 0
    for ai, bj in pairs:
        if ai > i or bj > j:
            tag = "replace" if ai > i and bj > j else ("delete" if ai > i else "insert")
            codes.append((tag, i, ai, j, bj))
        if ai < len(a) and bj < len(b):
            if codes and codes[-1][0] == "equal":
                tag, i1, _, j1, _ = codes[-1]
                codes[-1] = ("equal", i1, ai + 1, j1, bj + 1)
            else:
                codes.append(("equal", ai, ai + 1, bj, bj + 1))
        i, j = ai + 1, bj + 1
    return codes


def grouped_opcodes(codes: list[Opcode], context: int = 3) -> list[list[Opcode]]:
    """Hunks with ``context`` lines around each change (difflib's grouping rule)."""
    if not codes or all(code[0] == "equal" for code in codes):
        return []
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    span = context + context
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > span:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def change_stats(change: FileChange) -> tuple[int, int]:
    """(added, removed) lines of one change, with the same fast diff the view uses."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in opcodes(old_lines(change), new_lines(change)):
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


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
