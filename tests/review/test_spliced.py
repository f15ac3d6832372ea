"""``spliced``: a long list with a few rows left out or replaced, found by identity from
the top (the dashboard's stack after a decision, issue 44)."""

from __future__ import annotations

from redline.review.workspace_source import spliced


class Row:
    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:  # equal rows are still different rows
        return isinstance(other, Row) and other.name == self.name

    __hash__ = object.__hash__


def names(rows: list[Row] | None) -> list[str] | None:
    return None if rows is None else [row.name for row in rows]


def test_rows_left_out_and_replaced_in_their_places() -> None:
    rows = [Row(n) for n in "abcde"]
    new = Row("C")
    got = spliced(rows, {id(rows[0]): None, id(rows[2]): new, id(rows[4]): None})
    assert names(got) == ["b", "C", "d"]
    assert got is not None and got[1] is new and got[0] is rows[1]
    assert names(rows) == list("abcde")  # the given list is not changed


def test_nothing_to_change_is_a_copy() -> None:
    rows = [Row("a"), Row("b")]
    got = spliced(rows, {})
    assert got == rows and got is not rows


def test_a_row_looked_for_by_identity_not_equality() -> None:
    rows = [Row("a"), Row("b")]
    stranger = Row("a")  # equal to rows[0], not it
    assert spliced(rows, {id(stranger): None}) is None
