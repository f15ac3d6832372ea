"""The diff view numbers hunks as ``PATH#N`` does (the @@ blocks at 3 lines of context),
labels them in the gutter when it shows more context, and marks only really cut lines."""

from __future__ import annotations

from textual.app import App, ComposeResult

from redline.tui.diff_model import unified_rows
from redline.tui.palette import readable_variables
from redline.tui.widgets.diff_view import DiffView
from redline.workspace.hunks import hunk_units
from redline.workspace.preview import FileModify, Preview, sha256_bytes

OLD = "".join(f"line {n}\n" for n in range(1, 31))


def _change(new: str) -> FileModify:
    return FileModify("a.py", sha256_bytes(OLD.encode()), OLD, new)


def _edited(*numbers: int, text: str = "X") -> str:
    lines = OLD.splitlines(keepends=True)
    for number in numbers:
        lines[number - 1] = f"{text} {number}\n"
    return "".join(lines)


def test_rows_carry_the_hunk_numbers_of_the_at_at_blocks_at_any_context() -> None:
    # Lines 5 and 7 share one @@ block (hunk 1); line 20 is hunk 2.
    change = _change(_edited(5, 7, 20))
    assert [u.address for u in hunk_units(Preview([change]))] == ["a.py#1", "a.py#2"]
    for context in (3, 10, 1_000_000):
        rows = unified_rows(change, context)
        changed = [(row.kind, row.text, row.hunk) for row in rows if row.kind in ("add", "delete")]
        assert changed == [
            ("delete", "line 5", 1),
            ("add", "X 5", 1),
            ("delete", "line 7", 1),
            ("add", "X 7", 1),
            ("delete", "line 20", 2),
            ("add", "X 20", 2),
        ]
        assert [row.label for row in rows if row.label] == [1, 2]
    assert sum(row.kind == "hunk" for row in unified_rows(change, 3)) == 2
    assert sum(row.kind == "hunk" for row in unified_rows(change, 10)) == 1


class _Viewer(App[None]):
    def get_css_variables(self) -> dict[str, str]:
        variables = super().get_css_variables()
        return {**variables, **readable_variables(variables)}

    def compose(self) -> ComposeResult:
        yield DiffView(id="diff")


def _text(view: DiffView, y: int) -> str:
    return "".join(segment.text for segment in view.render_line(y))


async def test_wider_context_labels_each_hunk_in_the_gutter() -> None:
    change = _change(_edited(5, 20))
    app = _Viewer()
    async with app.run_test(size=(80, 60)) as pilot:
        view = app.query_one(DiffView)
        view.show_change(change, context=3, split=False)
        await pilot.pause()
        assert not any("#1" in line for line in view.plain_lines())
        view.show_change(change, context=25, split=False)
        await pilot.pause()
        lines = view.plain_lines()
        first = next(line for line in lines if "line 5" in line)
        second = next(line for line in lines if "line 20" in line)
        assert first.lstrip().startswith("#1 ") and second.lstrip().startswith("#2 ")
        assert sum(line.lstrip().startswith("#") for line in lines) == 2
        view.show_change(change, context=25, split=True)
        await pilot.pause()
        halves = [line for line in view.plain_lines() if "#1 " in line or "#2 " in line]
        assert len(halves) == 2 and "line 5" in halves[0] and "line 20" in halves[1]


async def test_an_ellipsis_only_on_lines_that_are_really_cut() -> None:
    long = "y" * 120
    change = _change(_edited(5, text="short").replace("line 8\n", f"{long}\n"))
    app = _Viewer()
    async with app.run_test(size=(60, 30)) as pilot:
        view = app.query_one(DiffView)
        view.show_change(change, context=3, split=False)
        await pilot.pause()
        shown = [_text(view, y) for y in range(view.row_count)]
        short = next(line for line in shown if "short 5" in line)
        cut = next(line for line in shown if "+yyyy" in line or "+ yyyy" in line)
        assert not short.rstrip().endswith("…")  # padded to the widest, not cut
        assert cut.endswith("…")
