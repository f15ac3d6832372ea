"""Property: for any file, any edit and any subset of its hunks, the parts add up.

Applying a selection and then the remaining action writes exactly the full proposal;
discarding a selection leaves what selecting the complement would write.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.workspace.hunks import hunk_units, split_for_apply, split_for_discard
from redline.workspace.preview import FileModify, Preview, encode_text, sha256_bytes

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
def test_any_subset_then_the_rest_stress(request: pytest.FixtureRequest) -> None:
    if "stress" not in str(request.config.getoption("markexpr") or ""):
        pytest.skip("the long run goes with -m stress")

    @settings(max_examples=5000, database=None, deadline=None)
    @given(files(), st.lists(st.booleans(), min_size=12, max_size=12))
    def run(case: tuple[str, str, str], picks: list[bool]) -> None:
        _check(*case, picks)

    run()
