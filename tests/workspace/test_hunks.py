"""Hunks: units, selections, partial apply and discard, edits, and the texts the model gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.review.texts import (
    applied_edited_text,
    applied_partial_text,
    discarded_partial_text,
    partial_apply_text,
    partial_discard_text,
    remaining_label,
    whole_only_text,
)
from redline.workspace.hunks import (
    EditError,
    HunkError,
    Origin,
    SelectionError,
    edit_file,
    hunk_units,
    parse_selection,
    split_for_apply,
    split_for_discard,
)
from redline.workspace.journal import undo_last
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.safe_apply import apply_preview, check_preview

from .helpers import create, delete, modify, rename, snapshot, write

OLD = "".join(f"line {n}\n" for n in range(1, 37))


def _new() -> str:
    lines = OLD.splitlines(keepends=True)
    lines[32:34] = ["L33\n", "L34\n"]
    del lines[19:21]
    lines.insert(12, "added\n")
    lines[1] = "LINE 2\n"
    return "".join(lines)


# Four hunks (@@ blocks at 3 lines of context): replace 2, insert after 12, delete 20-21,
# replace 33-34.
NEW = _new()


def texts(root: Path) -> dict[str, str]:
    return {rel: data.decode("utf-8") for rel, data in snapshot(root).items()}


def test_units_are_change_blocks_numbered_per_file(ws: Path) -> None:
    write(ws, "a.py", OLD)
    write(ws, "gone.txt", "x\n")
    write(ws, "old.txt", "y\n")
    write(ws, "same.txt", "z\n")
    preview = Preview(
        [
            modify(ws, "a.py", NEW),
            create("new.txt", "n\n"),
            delete(ws, "gone.txt"),
            rename(ws, "old.txt", "moved.txt"),
            modify(ws, "same.txt", "z\n"),
        ]
    )
    units = hunk_units(preview)
    assert [unit.address for unit in units] == [
        "a.py#1",
        "a.py#2",
        "a.py#3",
        "a.py#4",
        "new.txt",
        "gone.txt",
        "moved.txt",
        "same.txt",
    ]
    assert [unit.describe() for unit in units] == [
        "a.py hunk 1 (lines 1–5)",  # the @@ block's lines, context included
        "a.py hunk 2 (lines 10–15)",
        "a.py hunk 3 (lines 17–24)",
        "a.py hunk 4 (lines 30–36)",
        "new.txt (new file)",
        "gone.txt (file deletion)",
        "moved.txt (rename from old.txt)",
        "same.txt (whole file)",
    ]


def test_unit_to_dict(ws: Path) -> None:
    write(ws, "a.py", OLD)
    write(ws, "old.txt", "y\n")
    preview = Preview([modify(ws, "a.py", NEW), rename(ws, "old.txt", "new.txt")])
    hunk, *_, moved = hunk_units(preview)
    assert hunk.to_dict() == {
        "address": "a.py#1",
        "path": "a.py",
        "hunk": 1,
        "kind": "hunk",
        "lines": "1–5",
        "old_path": None,
        "removed": 1,
        "added": 1,
    }
    assert moved.to_dict()["address"] == "new.txt"
    assert moved.to_dict()["old_path"] == "old.txt" and moved.to_dict()["lines"] is None


def test_insertions_at_the_edges_name_the_lines_of_their_block() -> None:
    old = "".join(f"{n}\n" for n in range(1, 21))
    new = "top\n" + old + "end\n"
    preview = Preview([FileModify("f", sha256_bytes(old.encode()), old, new)])
    assert [unit.describe() for unit in hunk_units(preview)] == [
        "f hunk 1 (lines 1–3)",  # @@ -1,3 +1,4 @@, not "lines 0–1"
        "f hunk 2 (lines 18–20)",
    ]
    small = Preview([FileModify("f", sha256_bytes(b"a\nb\n"), "a\nb\n", "top\na\nb\nend\n")])
    assert [unit.describe() for unit in hunk_units(small)] == ["f hunk 1 (lines 1–2)"]
    empty = Preview([FileModify("f", sha256_bytes(b""), "", "one\ntwo\n")])
    assert [unit.describe() for unit in hunk_units(empty)] == ["f hunk 1 (lines 1–2)"]


def test_one_at_at_block_is_one_hunk_whatever_its_change_blocks() -> None:
    old = "".join(f"{n}\n" for n in range(1, 12))
    new = old.replace("5\n", "five\n").replace("7\n", "7\nseven\nand more\n")
    preview = Preview([FileModify("f", sha256_bytes(old.encode()), old, new)])
    assert "@@ -2,9 +2,11 @@" in preview.diff()
    (unit,) = hunk_units(preview)
    assert unit.address == "f#1" and unit.describe() == "f hunk 1 (lines 2–10)"
    assert split_for_apply(preview, [unit]).covers_all


# -- selections ---------------------------------------------------------------


def _preview(*paths: str) -> Preview:
    return Preview(
        [FileModify(path, sha256_bytes(OLD.encode()), OLD, NEW) for path in paths]
        + [create("new.txt", "n\n")]
    )


def _addresses(preview: Preview, *values: str) -> list[str]:
    return [unit.address for unit in parse_selection(preview, values)]


def test_selection_repeated_comma_lists_ranges_and_whole_files() -> None:
    preview = _preview("src/app.py", "b.py")
    assert _addresses(preview, "src/app.py#3", "src/app.py#1") == ["src/app.py#1", "src/app.py#3"]
    assert _addresses(preview, "b.py#4, src/app.py#2,new.txt") == [
        "src/app.py#2",
        "b.py#4",
        "new.txt",
    ]
    assert _addresses(preview, "b.py#2-3") == ["b.py#2", "b.py#3"]
    assert _addresses(preview, "b.py", "b.py#1") == ["b.py#1", "b.py#2", "b.py#3", "b.py#4"]
    assert _addresses(preview, "./new.txt") == ["new.txt"]


def test_selection_with_hash_and_comma_in_file_names() -> None:
    preview = _preview("notes#2", "a,b.py", "a", "c#d.py")
    # An exact path is the whole file; '#N' is split from the right.
    assert len(_addresses(preview, "notes#2")) == 4
    assert _addresses(preview, "notes#2#3") == ["notes#2#3"]
    assert _addresses(preview, "c#d.py#1") == ["c#d.py#1"]
    # The longest comma-joined run naming something wins.
    assert _addresses(preview, "a,b.py#2") == ["a,b.py#2"]
    assert _addresses(preview, "a#1,a,b.py#2") == ["a,b.py#2", "a#1"]
    assert _addresses(preview, "a,b.py") == [f"a,b.py#{n}" for n in range(1, 5)]


def test_selection_of_a_rename_by_either_path(ws: Path) -> None:
    write(ws, "old.txt", "y\n")
    preview = Preview([rename(ws, "old.txt", "new/place.txt")])
    assert _addresses(preview, "old.txt") == ["new/place.txt"]
    assert _addresses(preview, "new/place.txt") == ["new/place.txt"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nope.py", "'nope.py' names no file of this action; it touches src/app.py, new.txt."),
        ("src/app.py#5", "'src/app.py#5': src/app.py has 4 hunks (1–4); there is no hunk 5."),
        ("src/app.py#0", "there is no hunk 0"),
        ("src/app.py#2-9", "there is no hunk 9"),
        ("src/app.py#3-2", "the range 3-2 runs backwards"),
        ("src/app.py#x", "after '#' comes a hunk number"),
        ("new.txt#1", "new.txt (new file) is taken or left as a whole; select it as 'new.txt'"),
        ("src/app.py#1,bad", "'bad' names no file"),
        ("", "The selection is empty"),
        (" , ", "The selection is empty"),
    ],
)
def test_selection_errors_name_the_item(value: str, message: str) -> None:
    with pytest.raises(SelectionError) as caught:
        parse_selection(_preview("src/app.py"), [value])
    assert message in str(caught.value)


def test_no_values_is_an_empty_selection() -> None:
    with pytest.raises(SelectionError, match="empty"):
        parse_selection(_preview("a.py"), [])


# -- partial apply and discard on disk ---------------------------------------


def test_partial_apply_then_undo_restores_bytes(ws: Path) -> None:
    write(ws, "a.py", OLD)
    write(ws, "b.py", OLD)
    preview = Preview([modify(ws, "a.py", NEW), modify(ws, "b.py", NEW), create("c.py", "c\n")])
    before = snapshot(ws)
    split = split_for_apply(preview, parse_selection(preview, ["a.py#1,a.py#3", "c.py"]))
    assert not split.covers_all
    apply_preview(ws, split.selected, label="part")
    after = texts(ws)
    assert after["a.py"] == OLD.replace("line 2\n", "LINE 2\n").replace("line 20\nline 21\n", "")
    assert after["b.py"] == OLD and after["c.py"] == "c\n"
    assert check_preview(ws, split.remaining) == []
    # The remaining action is based on the disk as it is now.
    remaining = split.remaining.changes[0]
    assert isinstance(remaining, FileModify) and remaining.old_text == after["a.py"]
    assert [unit.describe() for unit in split.remaining_units] == [
        "a.py hunk 1 (lines 10–15)",
        "a.py hunk 2 (lines 28–34)",
        "b.py hunk 1 (lines 1–5)",
        "b.py hunk 2 (lines 10–15)",
        "b.py hunk 3 (lines 17–24)",
        "b.py hunk 4 (lines 30–36)",
    ]
    undo_last(ws)
    assert snapshot(ws) == before
    # Apply the part, then the rest: the whole proposal.
    apply_preview(ws, split.selected)
    apply_preview(ws, split.remaining)
    assert texts(ws) == {"a.py": NEW, "b.py": NEW, "c.py": "c\n"}


_MID = ["two", "three", "four", "4b", "4c", "4d", "4e", "4f"]


def _case(
    first: str, last: str, sep: str, encoding: str, upper: tuple[str, str, str]
) -> tuple[bytes, str, str, str]:
    """Change the first and last lines (two hunks) and add one (utf-8-sig adds a BOM)."""
    old = sep.join([first, *_MID, last]) + sep
    new = sep.join([upper[0], *_MID, upper[1], upper[2]]) + sep
    return (old.encode(encoding), encoding, old, new)


@pytest.mark.parametrize(
    ("data", "encoding", "old", "new"),
    [
        pytest.param(
            *_case("one", "five", "\r\n", "utf-8", ("ONE", "FIVE", "six")),
            id="crlf",
        ),
        pytest.param(
            *_case("one", "five", "\n", "utf-8-sig", ("ONE", "FIVE", "six")),
            id="bom",
        ),
        pytest.param(
            *_case("caf\xe9", "na\xefve", "\r\n", "latin-1", ("CAF\xc9", "NA\xcfVE", "six\xb0")),
            id="latin-1-crlf",
        ),
    ],
)
def test_partial_apply_keeps_encoding_and_line_endings(
    ws: Path, data: bytes, encoding: str, old: str, new: str
) -> None:
    write(ws, "f.txt", data)
    assert old.encode(encoding) == data
    preview = Preview([FileModify("f.txt", sha256_bytes(data), old, new, encoding)])
    units = hunk_units(preview)
    assert len(units) == 2
    split = split_for_apply(preview, [units[1]])
    apply_preview(ws, split.selected)
    on_disk = (ws / "f.txt").read_bytes()
    lines = old.splitlines(keepends=True)
    expected = "".join(lines[: len(_MID) + 1]) + "".join(
        new.splitlines(keepends=True)[len(_MID) + 1 :]
    )
    assert on_disk == expected.encode(encoding)
    assert on_disk.startswith(b"\xef\xbb\xbf") == (encoding == "utf-8-sig")
    assert on_disk.count(b"\r\n") == data.count(b"\r\n") + 1 * (b"\r\n" in data)
    assert check_preview(ws, split.remaining) == []
    apply_preview(ws, split.remaining)
    assert (ws / "f.txt").read_bytes() == new.encode(encoding)
    undo_last(ws)
    undo_last(ws)
    assert (ws / "f.txt").read_bytes() == data


def test_selecting_every_hunk_is_the_whole_apply(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    for root in (ws, other):
        write(root, "a.py", OLD)
        write(root, "gone.txt", "bye\n")
    preview = Preview([modify(ws, "a.py", NEW), delete(ws, "gone.txt"), create("n.txt", "n\n")])
    split = split_for_apply(preview, parse_selection(preview, ["a.py", "gone.txt,n.txt"]))
    assert split.covers_all
    assert split.selected == preview and split.remaining == Preview()
    # Hunk by hunk, the same set gives the same preview.
    assert split_for_apply(preview, hunk_units(preview)).selected == preview
    apply_preview(ws, split.selected)
    apply_preview(other, preview)
    assert snapshot(ws) == snapshot(other)


def test_discard_keeps_the_base_and_drops_the_selection(ws: Path) -> None:
    write(ws, "a.py", OLD)
    preview = Preview([modify(ws, "a.py", NEW), create("n.txt", "n\n")])
    dropped = split_for_discard(preview, parse_selection(preview, ["a.py#2", "n.txt"]))
    assert not dropped.covers_all
    (change,) = dropped.remaining.changes
    original = preview.changes[0]
    assert isinstance(change, FileModify) and isinstance(original, FileModify)
    assert change.old_sha256 == original.old_sha256 and change.old_text == OLD
    assert check_preview(ws, dropped.remaining) == []
    assert [unit.address for unit in dropped.remaining_units] == ["a.py#1", "a.py#2", "a.py#3"]
    apply_preview(ws, dropped.remaining)
    assert texts(ws)["a.py"] == NEW.replace("added\n", "")
    everything = split_for_discard(preview, hunk_units(preview))
    assert everything.covers_all and everything.remaining == Preview()


def test_a_unit_from_another_preview_is_refused() -> None:
    preview = _preview("a.py")
    other = Preview(
        [FileModify("a.py", sha256_bytes(b"x\n"), "x\n", "y\n"), create("new.txt", "n\n")]
    )
    with pytest.raises(SelectionError, match=r"a\.py#1 is not a part of this action"):
        split_for_apply(preview, [hunk_units(other)[0]])
    with pytest.raises(SelectionError, match="empty"):
        split_for_discard(preview, [])


def test_a_partial_text_the_encoding_cannot_hold_is_an_error() -> None:
    # Only a broken preview can get here (new text its own encoding cannot write).
    middle = "".join(f"{n}\n" for n in range(10))
    preview = Preview(
        [FileModify("f", "0" * 64, f"a\n{middle}c\n", f"\u20ac\n{middle}C\n", "latin-1")]
    )
    with pytest.raises(HunkError, match="f: the text cannot be encoded as latin-1"):
        split_for_apply(preview, [hunk_units(preview)[0]])


# -- edits --------------------------------------------------------------------


def test_edit_replaces_the_proposal_and_keeps_the_base(ws: Path) -> None:
    write(ws, "a.txt", OLD)
    preview = Preview([modify(ws, "a.txt", NEW), create("n.py", "x = 1\n")])
    edited = edit_file(preview, "a.txt", NEW.replace("added", "# better"))
    assert edited.changed and edited.warnings == ()
    change = edited.preview.changes[0]
    assert isinstance(change, FileModify) and change.old_text == OLD
    assert change.new_text == NEW.replace("added", "# better")
    assert "+# better" in edited.preview.file_diff(change)
    assert check_preview(ws, edited.preview) == []
    assert edit_file(preview, "a.txt", NEW).changed is False
    created = edit_file(preview, "n.py", "x = (\n")
    assert created.warnings == (
        "n.py does not parse as Python after your edit (line 1: '(' was never closed); "
        "it can still be applied.",
    )


def test_edit_keeps_crlf_and_refuses_what_the_encoding_cannot_hold() -> None:
    old = "a\r\nb\r\n"
    preview = Preview(
        [FileModify("f.txt", sha256_bytes(old.encode()), old, "a\r\nB\r\n", "latin-1")]
    )
    edited = edit_file(preview, "f.txt", "a\nBee\n")
    change = edited.preview.changes[0]
    assert isinstance(change, FileModify) and change.new_text == "a\r\nBee\r\n"
    raw = edit_file(preview, "f.txt", "a\nBee\n", keep_line_endings=False).preview.changes[0]
    assert isinstance(raw, FileModify) and raw.new_text == "a\nBee\n"
    with pytest.raises(EditError, match=r"f.txt is written as latin-1.*'€' on line 2"):
        edit_file(preview, "f.txt", "a\n€\n")


def test_edit_errors_name_the_file(ws: Path) -> None:
    write(ws, "gone.txt", "x\n")
    preview = Preview([delete(ws, "gone.txt")])
    with pytest.raises(EditError, match=r"gone\.txt is deleted by this action"):
        edit_file(preview, "gone.txt", "y\n")
    with pytest.raises(EditError, match=r"other\.txt is not changed by this action"):
        edit_file(preview, "other.txt", "y\n")


# -- texts and origins --------------------------------------------------------


def test_whole_only_text() -> None:
    assert whole_only_text("pa-3", "Run migrations") == (
        "pa-3 (Run migrations) has no preview of file changes; it can only be applied or "
        "discarded as a whole. Nothing was applied or discarded."
    )


def test_exact_texts(ws: Path) -> None:
    write(ws, "src/app.py", OLD)
    preview = Preview([modify(ws, "src/app.py", NEW)])
    split = split_for_apply(preview, parse_selection(preview, ["src/app.py#1,src/app.py#4"]))
    origin = Origin.of("Rename foo to bar", preview)
    assert origin.total == 4
    label = origin.remaining_label(len(split.remaining_units))
    assert label == "Rename foo to bar (remaining: 2 of 4 hunks)"
    assert label == remaining_label("Rename foo to bar", 2, 4)
    assert applied_partial_text(
        origin.label,
        "looks right",
        len(split.selected_units),
        split.total,
        "pa-9",
        split.remaining_units,
    ) == (
        "Applied 2 of 4 hunks: Rename foo to bar. Reason: looks right\n"
        "Still pending as pa-9: src/app.py hunk 1 (lines 10–15)\n"
        "Still pending as pa-9: src/app.py hunk 2 (lines 17–24)"
    )
    assert partial_apply_text(split, origin.label, "looks right", "pa-9") == applied_partial_text(
        origin.label,
        "looks right",
        len(split.selected_units),
        split.total,
        "pa-9",
        split.remaining_units,
    )
    dropped = split_for_discard(preview, parse_selection(preview, ["src/app.py#2-3"]))
    assert partial_discard_text(dropped, origin.label, "x") == discarded_partial_text(
        origin.label, "x", dropped.discarded_units, dropped.total
    )
    assert discarded_partial_text(
        origin.label, "not these", dropped.discarded_units, dropped.total
    ) == (
        "Discarded 2 of 4 hunks: Rename foo to bar. Reason: not these\n"
        "src/app.py hunk 2 (lines 10–15)\n"
        "src/app.py hunk 3 (lines 17–24)"
    )
    edited = edit_file(preview, "src/app.py", NEW.replace("added\n", "better\n"))
    assert applied_edited_text(origin.label, "ok", preview, edited.preview) == (
        "Applied with your proposal edited by the reviewer: Rename foo to bar. Reason: ok\n"
        "--- proposed/src/app.py\n"
        "+++ written/src/app.py\n"
        "@@ -10,7 +10,7 @@\n"
        " line 10\n"
        " line 11\n"
        " line 12\n"
        "-added\n"
        "+better\n"
        " line 13\n"
        " line 14\n"
        " line 15\n"
    )


def test_origin_round_trips_and_rejects_bad_records() -> None:
    proposal = Preview([create("a", "1\n")])
    origin = Origin("label", 3, proposal)
    assert origin.edited and Origin.from_dict(origin.to_dict()) == origin
    plain = Origin.of("x", proposal)
    assert not plain.edited and plain.total == 1
    edited = plain.with_proposal(proposal)
    assert edited.proposal is proposal
    assert edited.with_proposal(Preview()).proposal is proposal  # the model's, kept
    for bad in (
        {"label": "", "total": 1},
        {"label": "x", "total": -1},
        {"label": "x", "total": True},
        {"label": "x", "total": 1, "proposal": "no"},
    ):
        with pytest.raises(ValueError, match="origin"):
            Origin.from_dict(bad)


def test_selection_of_names_with_spaces() -> None:
    preview = _preview(" lead.py", "mid dle.py")
    assert _addresses(preview, " lead.py#1") == [" lead.py#1"]
    assert _addresses(preview, "mid dle.py#2, mid dle.py#3") == ["mid dle.py#2", "mid dle.py#3"]


def test_python_warning_ignores_syntax_warnings() -> None:
    preview = Preview([create("r.py", "x = 1\n")])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        edited = edit_file(preview, "r.py", 'pattern = "\\d+"\n')
    assert edited.changed and edited.warnings == ()


def test_labels_stay_flat_over_repeated_partial_applies(ws: Path) -> None:
    write(ws, "a.py", OLD)
    preview = Preview([modify(ws, "a.py", NEW)])
    origin = Origin.of("Tidy a.py", preview)
    first = split_for_apply(preview, [hunk_units(preview)[0]])
    second = split_for_apply(first.remaining, [first.remaining_units[-1]])
    assert (
        origin.remaining_label(len(first.remaining_units)) == "Tidy a.py (remaining: 3 of 4 hunks)"
    )
    assert origin.remaining_label(len(second.remaining_units)) == (
        "Tidy a.py (remaining: 2 of 4 hunks)"
    )
    apply_preview(ws, first.selected)
    apply_preview(ws, second.selected)
    apply_preview(ws, second.remaining)
    assert texts(ws)["a.py"] == NEW


def test_a_last_line_without_newline(ws: Path) -> None:
    middle = "".join(f"{n}\n" for n in range(8))
    write(ws, "a.txt", f"one\n{middle}three")
    preview = Preview([modify(ws, "a.txt", f"ONE\n{middle}three\nfour")])
    _, last = hunk_units(preview)
    assert last.describe() == "a.txt hunk 2 (lines 7–10)"
    split = split_for_apply(preview, [last])
    apply_preview(ws, split.selected)
    assert (ws / "a.txt").read_bytes() == f"one\n{middle}three\nfour".encode()
    assert [unit.describe() for unit in split.remaining_units] == ["a.txt hunk 1 (lines 1–4)"]
    apply_preview(ws, split.remaining)
    assert (ws / "a.txt").read_bytes() == f"ONE\n{middle}three\nfour".encode()
