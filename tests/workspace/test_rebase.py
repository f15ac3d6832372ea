"""Rebase: a pending preview carried over onto what an out-of-order apply wrote."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from redline.review.texts import conflict_reason, rebased_text
from redline.workspace.hunks import hunk_units, parse_selection, split_for_apply
from redline.workspace.preview import FileModify, FileRename, Preview, sha256_bytes
from redline.workspace.rebase import rebase_preview
from redline.workspace.safe_apply import StaleError, apply_preview, check_preview

from .helpers import create, delete, modify, rename, write

BASE = "".join(f"line {n}\n" for n in range(1, 21))


def edit(text: str, **changes: str) -> str:
    lines = text.splitlines(keepends=True)
    for key, value in changes.items():
        lines[int(key.removeprefix("l")) - 1] = value
    return "".join(lines)


def test_disjoint_hunks_rebase_and_apply_after_the_other_action(ws: Path) -> None:
    write(ws, "a.py", BASE)
    lower = Preview([modify(ws, "a.py", edit(BASE, l3="LOWER 3\n", l18="LOWER 18\n"))])
    upper = Preview([modify(ws, "a.py", edit(BASE, l10="UPPER 10\n"))])
    apply_preview(ws, upper)
    with pytest.raises(StaleError):
        apply_preview(ws, lower)
    result = rebase_preview(lower, upper, onto="pa-2")
    assert result.status == "rebased" and result.conflicts == ()
    assert check_preview(ws, result.preview) == []
    assert [unit.describe() for unit in hunk_units(result.preview)] == [
        "a.py hunk 1 (lines 1–6)",
        "a.py hunk 2 (lines 15–20)",
    ]
    apply_preview(ws, result.preview)
    assert (ws / "a.py").read_text() == edit(
        BASE, l3="LOWER 3\n", l10="UPPER 10\n", l18="LOWER 18\n"
    )


def test_overlapping_hunks_conflict_and_name_them(ws: Path) -> None:
    write(ws, "a.py", BASE)
    lower = Preview([modify(ws, "a.py", edit(BASE, l2="LOWER 2\n", l12="LOWER 12\n"))])
    upper = Preview([modify(ws, "a.py", edit(BASE, l12="UPPER 12\n"))])
    result = rebase_preview(lower, upper, onto="pa-6")
    assert result.status == "conflict" and result.preview == lower
    (conflict,) = result.conflicts
    assert [unit.address for unit in conflict.hunks] == ["a.py#2"]
    assert conflict_reason(result) == (
        "conflicts with a change applied out of order: "
        "a.py hunk 2 (lines 9–15): overlaps what pa-6 wrote to a.py"
    )


def test_adjacent_changes_conflict(ws: Path) -> None:
    write(ws, "a.py", BASE)
    lower = Preview([modify(ws, "a.py", edit(BASE, l5="LOWER 5\n"))])
    upper = Preview([modify(ws, "a.py", edit(BASE, l6="UPPER 6\n"))])
    assert rebase_preview(lower, upper).status == "conflict"


def test_insertions_at_one_point_conflict_but_elsewhere_merge(ws: Path) -> None:
    write(ws, "a.py", BASE)
    lines = BASE.splitlines(keepends=True)
    here = Preview([modify(ws, "a.py", "".join([*lines[:4], "mine\n", *lines[4:]]))])
    there = Preview([modify(ws, "a.py", "".join([*lines[:4], "theirs\n", *lines[4:]]))])
    far = Preview([modify(ws, "a.py", "".join([*lines[:15], "far\n", *lines[15:]]))])
    assert rebase_preview(here, there).status == "conflict"
    merged = rebase_preview(far, there)
    assert merged.status == "rebased"
    (change,) = merged.preview.changes
    assert isinstance(change, FileModify)
    assert change.new_text == "".join([*lines[:4], "theirs\n", *lines[4:15], "far\n", *lines[15:]])


def test_other_files_are_unaffected(ws: Path) -> None:
    write(ws, "a.py", BASE)
    write(ws, "b.py", BASE)
    lower = Preview([modify(ws, "b.py", "x\n"), create("new.txt", "n\n")])
    upper = Preview([modify(ws, "a.py", "y\n")])
    result = rebase_preview(lower, upper)
    assert result.status == "unaffected" and result.preview is lower


def test_a_preview_already_on_top_of_the_write_is_unaffected(ws: Path) -> None:
    write(ws, "a.py", BASE)
    upper = Preview([modify(ws, "a.py", edit(BASE, l1="one\n"))])
    apply_preview(ws, upper)
    lower = Preview([modify(ws, "a.py", edit(BASE, l1="one\n", l2="two\n"))])
    assert rebase_preview(lower, upper).status == "unaffected"


def test_rebase_onto_a_partial_apply(ws: Path) -> None:
    write(ws, "a.py", BASE)
    action = Preview([modify(ws, "a.py", edit(BASE, l2="A2\n", l12="A12\n"))])
    other = Preview([modify(ws, "a.py", edit(BASE, l7="B7\n", l12="B12\n"))])
    split = split_for_apply(action, parse_selection(action, ["a.py#1"]))
    apply_preview(ws, split.selected)
    # The other action's hunk 2 overlaps nothing written yet (only hunk 1 landed).
    result = rebase_preview(other, split.selected, onto="pa-3")
    assert result.status == "rebased"
    apply_preview(ws, result.preview)
    assert (ws / "a.py").read_text() == edit(BASE, l2="A2\n", l7="B7\n", l12="B12\n")
    # The remainder of the first action now conflicts with what was written (line 12).
    again = rebase_preview(split.remaining, result.preview, onto="pa-4")
    assert again.status == "conflict"
    assert [unit.address for unit in again.conflicts[0].hunks] == ["a.py#1"]


def test_crlf_and_bom_survive_a_rebase(ws: Path) -> None:
    base = BASE.replace("\n", "\r\n")
    write(ws, "w.txt", b"\xef\xbb\xbf" + base.encode())
    lower = Preview([modify(ws, "w.txt", edit(base, l2="two\r\n"))])
    upper = Preview([modify(ws, "w.txt", edit(base, l19="nineteen\r\n"))])
    apply_preview(ws, upper)
    result = rebase_preview(lower, upper)
    assert check_preview(ws, result.preview) == []
    apply_preview(ws, result.preview)
    expected = edit(base, l2="two\r\n", l19="nineteen\r\n")
    assert (ws / "w.txt").read_bytes() == b"\xef\xbb\xbf" + expected.encode()


def test_whole_file_changes(ws: Path) -> None:
    write(ws, "a.py", BASE)
    write(ws, "b.py", BASE)
    upper = Preview([modify(ws, "a.py", "changed\n"), create("c.py", "c\n")])
    # A creation where a file now exists, a deletion of a changed file: conflicts.
    made = rebase_preview(Preview([create("c.py", "other\n")]), upper, onto="pa-1")
    assert made.status == "conflict"
    assert made.describe() == "c.py: pa-1 created c.py meanwhile"
    dropped = rebase_preview(Preview([delete(ws, "a.py")]), upper, onto="pa-1")
    assert dropped.describe() == "a.py: deleting it would drop what pa-1 wrote"
    # A rename follows the new contents.
    moved = rebase_preview(Preview([rename(ws, "a.py", "d.py")]), upper)
    assert moved.status == "rebased"
    (change,) = moved.preview.changes
    assert isinstance(change, FileRename)
    assert change.old_sha256 == sha256_bytes(b"changed\n")
    apply_preview(ws, upper)
    apply_preview(ws, moved.preview)
    assert (ws / "d.py").read_text() == "changed\n"
    # A modify of a file the other action deleted conflicts.
    gone = Preview([delete(ws, "b.py")])
    edit_b = Preview([modify(ws, "b.py", "x\n")])
    assert rebase_preview(edit_b, gone, onto="pa-2").describe() == (
        "b.py: pa-2 deleted or moved b.py"
    )


def test_a_preview_on_another_base_conflicts(ws: Path) -> None:
    write(ws, "a.py", BASE)
    upper = Preview([modify(ws, "a.py", edit(BASE, l1="one\n"))])
    stale = Preview([FileModify("a.py", sha256_bytes(b"older\n"), "older\n", "newer\n")])
    result = rebase_preview(stale, upper, onto="pa-5")
    assert result.status == "conflict"
    assert "computed against another version of a.py than the one pa-5 changed" in (
        result.describe()
    )


def test_rebased_activity_text() -> None:
    assert rebased_text("pa-4", "pa-9", "pa-6") == "rebased pa-4 as pa-9 onto pa-6"


def _random_edit(rng: random.Random, lines: list[str], lo: int, hi: int, tag: str) -> list[str]:
    """``lines`` with a few changes (unique new lines) inside ``[lo, hi)`` only."""
    out = list(lines)
    spots = sorted(rng.sample(range(lo, hi), k=min(hi - lo, rng.randint(1, 3))), reverse=True)
    for n, at in enumerate(spots):
        op = rng.choice(("replace", "insert", "delete"))
        fresh = [f"{tag} {at} {n} {k}\n" for k in range(rng.randint(1, 3))]
        if op == "replace":
            out[at : at + 1] = fresh
        elif op == "insert":
            out[at:at] = fresh
        else:
            del out[at]
    return out


@pytest.mark.parametrize("seed", range(60))
def test_disjoint_random_edits_always_merge_to_both(seed: int) -> None:
    rng = random.Random(seed)
    base = [f"base {n}\n" for n in range(rng.randint(6, 40))]
    cut = rng.randint(2, len(base) - 3)
    # Changes stay two untouched lines apart: [0, cut - 1) and [cut + 1, n).
    ours = _random_edit(rng, base, 0, cut - 1, "ours")
    theirs = _random_edit(rng, base, cut + 1, len(base), "theirs")
    if rng.random() < 0.5:
        ours, theirs = theirs, ours
    text = "".join(base)
    sha = sha256_bytes(text.encode())
    written = Preview([FileModify("f", sha, text, "".join(ours))])
    pending = Preview([FileModify("f", sha, text, "".join(theirs))])
    result = rebase_preview(pending, written)
    assert result.status == "rebased", result.describe()
    (change,) = result.preview.changes
    assert isinstance(change, FileModify)
    assert change.old_text == "".join(ours)
    # Both edits, each in its own region.
    mine = {line for line in ours if not line.startswith("base")}
    other = {line for line in theirs if not line.startswith("base")}
    merged = change.new_text.splitlines(keepends=True)
    assert mine | other == {line for line in merged if not line.startswith("base")}
    kept = [line for line in base if line in ours and line in theirs]
    assert [line for line in merged if line.startswith("base")] == kept


def test_a_change_already_written_is_absorbed(ws: Path) -> None:
    write(ws, "a.py", BASE)
    write(ws, "b.py", BASE)
    same = edit(BASE, l4="FOUR\n")
    written = Preview([modify(ws, "a.py", same)])
    twin = rebase_preview(Preview([modify(ws, "a.py", same)]), written)
    assert twin.status == "absorbed" and twin.preview == Preview()
    both = Preview([modify(ws, "a.py", same), modify(ws, "b.py", "b\n")])
    partly = rebase_preview(both, written)
    assert partly.status == "rebased"
    assert [change.path for change in partly.preview.changes] == ["b.py"]


def test_a_written_text_its_encoding_cannot_hold_is_a_conflict_not_a_crash(ws: Path) -> None:
    write(ws, "a.txt", "x\n")
    broken = Preview([FileModify("a.txt", sha256_bytes(b"x\n"), "x\n", "\u20ac\n", "latin-1")])
    pending = Preview([modify(ws, "a.txt", "y\n")])
    result = rebase_preview(pending, broken, onto="pa-1")
    assert result.status == "conflict"
    assert "another version of a.txt" in result.describe()


def test_three_actions_applied_bottom_first_all_land(ws: Path) -> None:
    write(ws, "a.py", BASE)
    actions = {
        "pa-1": Preview([modify(ws, "a.py", edit(BASE, l2="ONE\n"))]),
        "pa-2": Preview([modify(ws, "a.py", edit(BASE, l9="TWO\n"))]),
        "pa-3": Preview([modify(ws, "a.py", edit(BASE, l16="THREE\n"))]),
    }
    for applied in ("pa-1", "pa-3", "pa-2"):
        written = actions.pop(applied)
        apply_preview(ws, written)
        for other, preview in list(actions.items()):
            result = rebase_preview(preview, written, onto=applied)
            assert result.status == "rebased", result.describe()
            assert check_preview(ws, result.preview) == []
            actions[other] = result.preview
    assert (ws / "a.py").read_text() == edit(BASE, l2="ONE\n", l9="TWO\n", l16="THREE\n")
