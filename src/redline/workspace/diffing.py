"""A fast line diff: patience anchoring, falling back to difflib between anchors.

difflib alone is quadratic when a big file has many small changes (5,000 lines with every
other line changed takes about a second); anchoring on lines unique to both sides keeps
it near-linear. The preview model's diffs and line counts and the dashboard's diff view
all use these opcodes, so their numbers always agree.
"""

from __future__ import annotations

import bisect

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
            import difflib  # here: a new file's line counts (a hook's push) never need it

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
