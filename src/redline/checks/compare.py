"""New and fixed findings: the proposal's findings against the base tree's.

A finding of the base in a changed file is carried to the proposal's line numbers through
the diff (:func:`redline.workspace.diffing.opcodes`); a base finding and a proposal finding
are the same finding when they agree on path, code and message (for tests: path and test
id; a failing test's message often names values) and, among equals, on the carried line.
What the proposal has unmatched is new (with its proposal line); what the base has
unmatched is fixed (with its base line).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from redline.checks.findings import Finding
from redline.workspace.diffing import opcodes

LineMap = Mapping[int, int]


def line_map(old_text: str, new_text: str) -> dict[int, int]:
    """1-based old line → 1-based new line, for every line the diff leaves unchanged."""
    old = old_text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, _j2 in opcodes(old, new):
        if tag == "equal":
            for offset in range(i2 - i1):
                mapping[i1 + offset + 1] = j1 + offset + 1
    return mapping


def _identity(finding: Finding, fmt: str) -> tuple[str, str, str]:
    if fmt == "pytest":
        return (finding.path, finding.code, "")
    return (finding.path, finding.code, finding.message)


def compare(
    base: Sequence[Finding],
    proposal: Sequence[Finding],
    fmt: str,
    maps: Mapping[str, LineMap],
    renames: Mapping[str, str] | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """``(new, fixed)``. ``maps`` holds the line map of every modified path; a path of the
    base absent from ``maps`` keeps its lines; ``renames`` carries old path → new path."""
    renames = renames or {}
    pool: dict[tuple[str, str, str], list[tuple[int | None, Finding]]] = defaultdict(list)
    for finding in base:
        path = renames.get(finding.path, finding.path)
        carried = finding.line
        mapping = maps.get(finding.path)
        if mapping is not None and finding.line is not None:
            carried = mapping.get(finding.line)  # None: its line was changed
        moved = Finding(path, carried, finding.code, finding.message)
        pool[_identity(moved, fmt)].append((carried, finding))
    new: list[Finding] = []
    unmatched: list[Finding] = []
    # Exact (carried line) matches first, then any remaining equal finding.
    for finding in proposal:
        candidates = pool.get(_identity(finding, fmt))
        hit = None
        if candidates:
            for index, (carried, _orig) in enumerate(candidates):
                if carried == finding.line:
                    hit = index
                    break
        if hit is None:
            unmatched.append(finding)
        else:
            candidates.pop(hit)  # type: ignore[union-attr]
    for finding in unmatched:
        candidates = pool.get(_identity(finding, fmt))
        if candidates:
            candidates.pop(0)
        else:
            new.append(finding)
    fixed = [orig for entries in pool.values() for _carried, orig in entries]
    return new, fixed
