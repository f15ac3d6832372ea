"""Resolving at the grain of hunks: any action by id, part of it, edits, rebases (SDK)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from redline.review.file_action import file_action
from redline.review.resolve import edit_pending, resolve_pending
from redline.review.store import PendingAction, PendingActionStore, StoreEvent
from redline.workspace.hunks import hunk_units
from redline.workspace.journal import undo_last
from redline.workspace.preview import FileModify, Preview, sha256_bytes

# Lines 2, 14 and 26 are far enough apart to be hunks (@@ blocks) of their own.
BASE = "".join(f"line {i}\n" for i in range(1, 37))


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def edit_action(root: Path, new: str, name: str = "a.txt", label: str = "Edit a.txt") -> Any:
    old = (root / name).read_bytes()
    preview = Preview([FileModify(name, sha256_bytes(old), old.decode(), new)])
    return file_action(
        root,
        preview,
        label=label,
        source_tool_name="edit",
        applied_text=f"Applied: {label}.",
        repreview=None,
    )


def changed(*lines: int, text: str = BASE, mark: str = "X") -> str:
    out = text.splitlines(keepends=True)
    for number in lines:
        out[number - 1] = f"{mark} {number}\n"
    return "".join(out)


def test_partial_apply_then_undo_restores_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(BASE.encode())
    store = PendingActionStore()
    action = store.push(edit_action(tmp_path, changed(2, 14, 26)))
    outcome = run(
        resolve_pending(store, "apply", "ok", action_id=action.id, only=["a.txt#1", "a.txt#3"])
    )
    assert outcome.kind == "applied" and outcome.remaining_id == "pa-2"
    assert outcome.text == (
        "Applied 2 of 3 hunks: Edit a.txt. Reason: ok\n"
        "Still pending as pa-2: a.txt hunk 1 (lines 11\u201317)"
    )
    assert (tmp_path / "a.txt").read_text() == changed(2, 26)
    remaining = store.peek()
    assert remaining is not None and remaining.id == "pa-2"
    assert remaining.label == "Edit a.txt (remaining: 1 of 3 hunks)"
    undo_last(tmp_path)
    assert (tmp_path / "a.txt").read_bytes() == BASE.encode()


def test_partial_apply_of_the_remainder_completes_the_proposal(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(BASE.encode())
    store = PendingActionStore()
    action = store.push(edit_action(tmp_path, changed(2, 14, 26)))
    run(resolve_pending(store, "apply", "first", action_id=action.id, only=["a.txt#2"]))
    rest = store.peek()
    assert rest is not None
    # The label is built from the original, never nested.
    run(resolve_pending(store, "apply", "more", action_id=rest.id, only=["a.txt#1"]))
    last = store.peek()
    assert last is not None and last.label == "Edit a.txt (remaining: 1 of 3 hunks)"
    outcome = run(resolve_pending(store, "apply", "rest", action_id=last.id))
    assert outcome.kind == "applied" and store.count == 0
    assert (tmp_path / "a.txt").read_text() == changed(2, 14, 26)


def test_partial_discard_and_bad_selections(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(BASE.encode())
    store = PendingActionStore()
    action = store.push(edit_action(tmp_path, changed(2, 14, 26)))
    bad = run(resolve_pending(store, "apply", "r", action_id=action.id, only=["a.txt#7"]))
    assert bad.kind == "invalid" and "a.txt" in bad.text and store.peek() is action
    outcome = run(resolve_pending(store, "discard", "no", action_id=action.id, only=["a.txt#2"]))
    assert outcome.kind == "discarded"
    assert (
        outcome.text
        == "Discarded 1 of 3 hunks: Edit a.txt. Reason: no\na.txt hunk 2 (lines 11\u201317)"
    )
    assert (tmp_path / "a.txt").read_text() == BASE
    rest = store.peek()
    assert rest is not None and rest.label == "Edit a.txt (remaining: 2 of 3 hunks)"
    assert len(hunk_units(rest.preview or Preview())) == 2


def test_a_selection_of_an_action_without_preview_is_refused() -> None:
    store = PendingActionStore()
    action = store.push(PendingAction(label="Run it", apply=lambda r: "done"))
    outcome = run(resolve_pending(store, "apply", "r", action_id=action.id, only=["a.txt"]))
    assert outcome.kind == "invalid" and "only be applied or discarded as a whole" in outcome.text


def test_lower_action_first_rebases_the_upper_one(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(BASE.encode())
    store = PendingActionStore()
    events: list[StoreEvent] = []
    store.subscribe(events.append)
    lower = store.push(edit_action(tmp_path, changed(2), label="Lower"))
    upper = store.push(edit_action(tmp_path, changed(10), label="Upper"))
    outcome = run(resolve_pending(store, "apply", "first", action_id=lower.id))
    assert outcome.kind == "applied"
    assert [r.text for r in outcome.rebased] == [f"rebased {upper.id} as pa-3 onto {lower.id}"]
    replaced = [e for e in events if e.kind == "replace"]
    assert replaced and replaced[-1].onto == lower.id and replaced[-1].previous is upper
    top = store.peek()
    assert top is not None and top.id == "pa-3" and top.label == "Upper" and not top.stale
    assert not run(resolve_pending(store, "apply", "then", action_id="pa-3")).is_error
    assert (tmp_path / "a.txt").read_text() == changed(2, 10)


def test_overlapping_hunks_go_stale_naming_them(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(BASE.encode())
    store = PendingActionStore()
    lower = store.push(edit_action(tmp_path, changed(5), label="Lower"))
    upper = store.push(edit_action(tmp_path, changed(5, mark="Y"), label="Upper"))
    run(resolve_pending(store, "apply", "first", action_id=lower.id))
    upper = store.get(upper.id)  # the stale copy the store holds now
    assert upper is not None and upper.stale and "a.txt hunk 1" in upper.stale_reason
    assert store.peek() is upper


def test_edit_then_apply_reports_the_diff_from_the_proposal(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    store = PendingActionStore()
    old = (tmp_path / "a.py").read_bytes()
    preview = Preview([FileModify("a.py", sha256_bytes(old), "x = 1\n", "x = 2\n")])
    action = store.push(
        file_action(
            tmp_path,
            preview,
            label="Edit a.py",
            source_tool_name="edit",
            applied_text="Applied: Edit a.py.",
            repreview=lambda: action,
        )
    )
    same = run(edit_pending(store, action.id, "a.py", "x = 2\n"))
    assert same.kind == "unchanged" and store.peek() is action
    broken = run(edit_pending(store, action.id, "a.py", "x = (\n"))
    assert broken.kind == "edited" and broken.warnings and "does not parse" in broken.warnings[0]
    edited = store.peek()
    assert edited is not None and edited.edited and edited.repreview is None
    again = run(edit_pending(store, edited.id, "a.py", "x = 3\n"))
    assert again.kind == "edited"
    gone = run(edit_pending(store, action.id, "a.py", "x = 4\n"))
    assert gone.kind == "gone" and f"replaced by {again.new_action_id}" in gone.text
    outcome = run(resolve_pending(store, "apply", "fine", action_id=again.new_action_id))
    assert outcome.kind == "applied"
    assert outcome.text.startswith(
        "Applied with your proposal edited by the reviewer: Edit a.py. Reason: fine\n"
    )
    assert "--- proposed/a.py" in outcome.text and "-x = 2" in outcome.text
    assert "+x = 3" in outcome.text
    assert (tmp_path / "a.py").read_text() == "x = 3\n"


def test_take_340_of_349_ast_edit_replacements(tmp_path: Path) -> None:
    from redline.tools.ast_edit.tool import AstEditParams, build_action, run_preview

    counts = [23] * 14 + [27]
    for index, count in enumerate(counts):
        # Seven lines between replacements: each is a hunk (@@ block) of its own.
        body = "".join(
            f"a{j} = old_name({j})\n" + "".join(f"b{j}_{k} = {k}\n" for k in range(7))
            for j in range(count)
        )
        (tmp_path / f"m{index:02d}.py").write_text(body)
    params = AstEditParams.model_validate({"ops": [{"pat": "old_name($X)", "out": "new_name($X)"}]})
    store = PendingActionStore()
    action = store.push(build_action(tmp_path, params, run_preview(tmp_path, params)))
    units = hunk_units(action.preview or Preview())
    assert len(units) == 349
    only = [unit.address for unit in units[:340]]
    outcome = run(resolve_pending(store, "apply", "good ones", action_id=action.id, only=only))
    assert outcome.kind == "applied"
    lines = outcome.text.splitlines()
    assert lines[0] == f"Applied 340 of 349 hunks: {action.label}. Reason: good ones"
    assert len(lines) == 10 and all(
        line.startswith("Still pending as pa-2: m14.py hunk") for line in lines[1:]
    )
    rest = store.peek()
    assert rest is not None and rest.label == f"{action.label} (remaining: 9 of 349 hunks)"
    assert len(hunk_units(rest.preview or Preview())) == 9
    text = (tmp_path / "m14.py").read_text()
    assert text.count("new_name(") == 18 and text.count("old_name(") == 9
