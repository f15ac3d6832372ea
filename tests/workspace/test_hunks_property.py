"""Property: for any file, any edit and any subset of its hunks, the parts add up.

Applying a selection and then the remaining action writes exactly the full proposal;
discarding a selection leaves what selecting the complement would write.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.workspace.hunks import hunk_units, split_for_apply, split_for_discard
from redline.workspace.preview import FileModify, Preview, encode_text, sha256_bytes
from redline.workspace.safe_apply import apply_preview, check_preview

ENDINGS = ("\n", "\r\n", "")
WORDS = ("a", "b", "c", "d", "é", "")


@st.composite
def files(draw: st.DrawFn) -> tuple[str, str, str]:
    """(old text, new text, encoding): a few short lines, then a random edit of them."""
    ending = draw(st.sampled_from(ENDINGS[:2]))
    words = st.sampled_from(WORDS)
    old = draw(st.lists(words, max_size=14))
    new = list(old)
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(("insert", "delete", "replace")))
        at = draw(st.integers(0, len(new)))
        if op == "insert":
            new[at:at] = draw(st.lists(words, min_size=1, max_size=3))
        elif new and at < len(new):
            new[at : at + draw(st.integers(1, 3))] = (
                draw(st.lists(words, max_size=3)) if op == "replace" else []
            )
    last_old = draw(st.sampled_from(ENDINGS))
    last_new = draw(st.sampled_from(ENDINGS))
    encoding = draw(st.sampled_from(("utf-8", "utf-8-sig", "latin-1")))

    def text(lines: list[str], last: str) -> str:
        return "".join(line + ending for line in lines[:-1]) + (lines[-1] + last if lines else "")

    return text(old, last_old), text(new, last_new), encoding


def _final(preview: Preview) -> str:
    (change,) = preview.changes
    assert isinstance(change, FileModify)
    return change.new_text


def _check(old: str, new: str, encoding: str, picks: list[bool]) -> None:
    base = sha256_bytes(encode_text(old, encoding))
    preview = Preview([FileModify("f.txt", base, old, new, encoding)])
    units = hunk_units(preview)
    chosen = [unit for unit, pick in zip(units, picks, strict=False) if pick]
    if not chosen:
        return
    split = split_for_apply(preview, chosen)
    if split.covers_all:
        assert split.selected == preview and not split.remaining
        return
    (taken,) = split.selected.changes
    (rest,) = split.remaining.changes
    assert isinstance(taken, FileModify) and isinstance(rest, FileModify)
    # The selection is computed against the same base; the rest against what it writes.
    assert taken.old_sha256 == base and taken.old_text == old
    assert rest.old_text == taken.new_text
    assert rest.old_sha256 == sha256_bytes(encode_text(taken.new_text, encoding))
    assert rest.new_text == new and rest.encoding == taken.encoding == encoding
    assert split.remaining_units, "a partial apply leaves something pending"
    # Discarding the complement leaves exactly the selection.
    others = [unit for unit in units if unit not in chosen]
    kept = split_for_discard(preview, others)
    assert _final(kept.remaining) == taken.new_text
    # And the remaining action can be split again: any part of it, then its rest.
    again = split_for_apply(split.remaining, split.remaining_units[:1])
    if not again.covers_all:
        assert _final(again.remaining) == new


@settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(files(), st.lists(st.booleans(), min_size=12, max_size=12))
def test_any_subset_then_the_rest_is_the_whole_proposal(
    case: tuple[str, str, str], picks: list[bool]
) -> None:
    _check(*case, picks)


@pytest.mark.stress
def test_any_subset_then_the_rest_stress(stress: bool) -> None:
    """5,000 random cases under ``-m stress``; a seeded 40 otherwise."""

    @settings(
        max_examples=5000 if stress else 40,
        derandomize=not stress,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(files(), st.lists(st.booleans(), min_size=12, max_size=12))
    def run(case: tuple[str, str, str], picks: list[bool]) -> None:
        _check(*case, picks)

    run()


@pytest.mark.parametrize("seed", range(12))
def test_on_disk_any_subset_then_the_rest(ws: Path, seed: int) -> None:
    """Through safe apply: the part, then the rest, is byte for byte the proposal."""
    rng = random.Random(seed)
    encoding = rng.choice(("utf-8", "utf-8-sig", "latin-1"))
    ending = rng.choice(("\n", "\r\n"))
    old_lines = [rng.choice(("a", "b", "c", "é", "")) + ending for _ in range(rng.randint(3, 20))]
    new_lines = list(old_lines)
    for _ in range(rng.randint(1, 5)):
        at = rng.randrange(len(new_lines) + 1)
        if rng.random() < 0.5:
            new_lines.insert(at, f"new {at}{ending}")
        elif at < len(new_lines):
            new_lines[at] = f"changed {at}{ending}"
    old, new = "".join(old_lines), "".join(new_lines)
    data = encode_text(old, encoding)
    (ws / "f.txt").write_bytes(data)
    preview = Preview([FileModify("f.txt", sha256_bytes(data), old, new, encoding)])
    units = hunk_units(preview)
    if not units[0].is_hunk:
        return
    chosen = [unit for unit in units if rng.random() < 0.5] or [units[-1]]
    split = split_for_apply(preview, chosen)
    apply_preview(ws, split.selected)
    assert check_preview(ws, split.remaining) == []
    apply_preview(ws, split.remaining)
    assert (ws / "f.txt").read_bytes() == encode_text(new, encoding)
