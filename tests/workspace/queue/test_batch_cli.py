"""`redline pending apply|discard ID ID …`: one line per id, exit 0 only if all succeeded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from redline.cli import main
from redline.review.batch import BatchError, resolve_queued_many
from redline.workspace.queue import WorkspaceQueue

from .helpers import create_draft, edit_draft

BASE = "".join(f"line {i}\n" for i in range(1, 13))


def changed(*lines: int, mark: str = "X") -> str:
    out = BASE.splitlines(keepends=True)
    for number in lines:
        out[number - 1] = f"{mark} {number}\n"
    return "".join(out)


def run(capfd: pytest.CaptureFixture[str], ws: Path, *args: str) -> tuple[int, str, str]:
    code = main(["pending", "-C", str(ws), *args])
    out, err = capfd.readouterr()
    return code, out, err


def test_apply_several_prints_one_line_each(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(create_draft("b.txt", "b\n"))
    queue.push(create_draft("c.txt", "c\n"))
    code, out, err = run(capfd, ws, "apply", "pa-1", "pa-2", "--reason", "both fine")
    assert (code, err) == (0, "")
    assert out.splitlines() == ["pa-1: Applied: Create b.txt.", "pa-2: Applied: Create c.txt."]
    assert (ws / "b.txt").read_text() == "b\n" and (ws / "c.txt").read_text() == "c\n"
    assert queue.list() == []


def test_one_refusal_is_exit_1_and_the_rest_still_run(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws, label="Stale one"))
    queue.push(create_draft("c.txt", "c\n"))
    (ws / "a.txt").write_text("changed meanwhile\n")  # pa-1's base is gone
    code, out, err = run(capfd, ws, "discard", "pa-7", "pa-2", "--reason", "no")
    assert code == 1
    assert out.splitlines() == ["pa-2: Discarded: Create c.txt. Reason: no"]
    assert err.count("\n") == 1 and err.startswith("redline pending: pa-7: ")
    code, out, err = run(capfd, ws, "apply", "pa-1")
    assert code == 1 and "modified since the preview" in err  # the stale check still holds
    assert (ws / "a.txt").read_text() == "changed meanwhile\n"


def test_a_rebase_made_by_the_batch_is_followed(
    ws: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (ws / "a.txt").write_text(BASE)
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws, new=changed(2), label="Lower"))
    queue.push(edit_draft(ws, new=changed(10), label="Upper"))
    code, out, err = run(capfd, ws, "apply", "pa-1", "pa-2")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0] == "pa-1: Applied: Lower.; rebased pa-2 as pa-3 onto pa-1"
    assert lines[1] == "pa-2 (re-based as pa-3): Applied: Upper."
    assert (ws / "a.txt").read_text() == changed(2, 10)


def test_a_replacement_by_an_edit_is_not_followed(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(create_draft("b.txt", "b\n"))
    queue.replace("pa-1", create_draft("b.txt", "edited\n"), resolved_by="person")
    outcomes = asyncio.run(resolve_queued_many(queue, ["pa-1"], "apply", ""))
    assert [o.ok for o in outcomes] == [False]
    assert "replaced by pa-2" in outcomes[0].text
    assert not (ws / "b.txt").exists()


@pytest.mark.parametrize(
    ("args", "cause"),
    [
        (["apply", "pa-1", "pa-2", "--only", "a.txt#1"], "give exactly one ID with it (got 2)"),
        (["discard", "pa-1", "pa-1"], "pa-1 is given twice"),
        (["apply", "pa-1", "banana"], "banana"),
    ],
)
def test_bad_batches_are_exit_2_and_touch_nothing(
    ws: Path, args: list[str], cause: str, capfd: pytest.CaptureFixture[str]
) -> None:
    queue = WorkspaceQueue(ws)
    queue.push(edit_draft(ws))
    queue.push(create_draft("c.txt", "c\n"))
    code, out, err = run(capfd, ws, *args)
    assert code == 2 and out == "" and cause in err and "Traceback" not in err
    assert [r.id for r in queue.list()] == ["pa-2", "pa-1"]


def test_no_id_at_all_is_exit_2(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capfd, ws, "apply")
    assert code == 2 and err.startswith("usage: redline pending apply")
    with pytest.raises(BatchError):
        asyncio.run(resolve_queued_many(WorkspaceQueue(ws), [], "apply", ""))
