"""The SDK at the grain of hunks: session.resolve(only=...), session.edit, rebase events."""

from __future__ import annotations

from pathlib import Path

from tests.drivers.model.helpers import ProgrammableProvider, make_session

from redline.review.events import PendingRebased, PendingReplaced
from redline.review.file_action import file_action
from redline.workspace.journal import undo_last
from redline.workspace.preview import FileModify, Preview, sha256_bytes

# Lines 2, 14 and 26 are far enough apart to be hunks (@@ blocks) of their own.
BASE = "".join(f"line {i}\n" for i in range(1, 37))


def changed(*lines: int) -> str:
    out = BASE.splitlines(keepends=True)
    for number in lines:
        out[number - 1] = f"X {number}\n"
    return "".join(out)


def action(root: Path, new: str, label: str) -> object:
    old = (root / "a.txt").read_bytes()
    preview = Preview([FileModify("a.txt", sha256_bytes(old), old.decode(), new)])
    return file_action(
        root, preview, label=label, source_tool_name="edit", applied_text="", repreview=None
    )


def test_session_partial_apply_rebase_edit_and_undo(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(BASE.encode())
    session, events = make_session(tmp_path, ProgrammableProvider([]), resolver="human")
    with session:
        lower = session.store.push(action(tmp_path, changed(2, 12), "Lower"))  # type: ignore[arg-type]
        upper = session.store.push(action(tmp_path, changed(24), "Upper"))  # type: ignore[arg-type]
        outcome = session.resolve("apply", "half", action_id=lower.id, only=["a.txt#1"])
        assert outcome.kind == "applied"
        assert outcome.text.startswith("Applied 1 of 2 hunks: Lower. Reason: half\n")
        assert (tmp_path / "a.txt").read_text() == changed(2)
        rebased = [e for e in events if isinstance(e, PendingRebased)]
        assert [(e.old_action_id, e.onto) for e in rebased] == [(upper.id, lower.id)]
        assert any(isinstance(e, PendingReplaced) and e.old_action_id == upper.id for e in events)
        top = session.store.peek()
        assert top is not None and top.id == rebased[0].action_id
        edit = session.edit(top.id, "a.txt", changed(2, 25))
        assert edit.kind == "edited" and not edit.warnings
        result = session.resolve("apply", "edited", action_id=edit.new_action_id)
        assert result.text.startswith(
            "Applied with your proposal edited by the reviewer: Upper. Reason: edited\n"
        )
        assert (tmp_path / "a.txt").read_text() == changed(2, 25)
        undo_last(tmp_path)
        undo_last(tmp_path)
        assert (tmp_path / "a.txt").read_bytes() == BASE.encode()
