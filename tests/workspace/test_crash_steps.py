"""Crash safety, deterministically: stop the process at every numbered step.

The step hook raises SimulatedCrash, which the transaction lets through without any
cleanup (like a killed process; only the kernel's release of the lock happens). Then
recovery runs as the next redline start would, and every file must be wholly old, or
wholly new once the commit point (the ``done`` marker) was passed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.workspace import journal, transaction
from redline.workspace.safe_apply import apply_preview
from redline.workspace.transaction import SimulatedCrash

from .helpers import journal_is_clean, mixed_preview, snapshot


def _record_steps(root: Path) -> list[str]:
    preview, _, _ = mixed_preview(root)
    seen: list[str] = []
    transaction._step_hook = lambda number, text: seen.append(f"{number} {text}")
    apply_preview(root, preview)
    transaction._step_hook = None
    return seen


def test_steps_are_numbered_and_cover_every_phase(tmp_path: Path) -> None:
    steps = _record_steps(tmp_path)
    assert [s.split(" ", 1)[0] for s in steps] == [str(i) for i in range(1, len(steps) + 1)]
    texts = [s.split(" ", 1)[1] for s in steps]
    assert texts[-2:] == ["folders synced", "committed"]
    assert "journal: entry in place" in texts
    assert "replaced src/a.py" in texts and "deleted gone.txt" in texts
    assert "renamed old.txt -> moved/renamed.txt" in texts


def _crash_at(step: int):  # type: ignore[no-untyped-def]
    def hook(number: int, _text: str) -> None:
        if number == step:
            raise SimulatedCrash(step)

    return hook


def test_apply_stopped_at_every_step_recovers_wholly_old_or_new(tmp_path: Path) -> None:
    total = len(_record_steps(tmp_path / "count"))
    assert total >= 15
    for step in range(1, total + 1):
        root = tmp_path / f"run{step}"
        root.mkdir()
        preview, old, new = mixed_preview(root)
        transaction._step_hook = _crash_at(step)
        with pytest.raises(SimulatedCrash):
            apply_preview(root, preview)
        transaction._step_hook = None
        committed = step == total  # the last step comes after the done marker
        messages = journal.recover(root)
        expected = new if committed else old
        assert snapshot(root) == expected, f"step {step}"
        assert journal_is_clean(root), f"step {step}"
        assert (messages == []) == committed, f"step {step}: {messages}"
        assert journal.recover(root) == [], "recovery is idempotent"
        # The workspace stays usable: the same preview applies after a rollback.
        if not committed:
            apply_preview(root, preview)
            assert snapshot(root) == new


def test_recovery_stopped_at_every_restore_still_converges(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    preview, old, _ = mixed_preview(root)
    transaction._step_hook = _crash_at(len(_record_steps(tmp_path / "count")) - 2)
    with pytest.raises(SimulatedCrash):
        apply_preview(root, preview)
    transaction._step_hook = None
    # Recovery itself is interrupted after its first restore, then run again.
    from redline.workspace import entries

    real = entries._restore
    calls = {"n": 0}

    def stop_after_first(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise SimulatedCrash("recovery")
        real(*args, **kwargs)

    entries._restore = stop_after_first  # type: ignore[assignment]
    try:
        with pytest.raises(SimulatedCrash):
            journal.recover(root)
    finally:
        entries._restore = real  # type: ignore[assignment]
    assert journal.recover(root)
    assert snapshot(root) == old
    assert journal_is_clean(root)


def test_undo_stopped_at_every_step_recovers(tmp_path: Path) -> None:
    count_root = tmp_path / "count"
    count_root.mkdir()
    preview, _, _ = mixed_preview(count_root)
    apply_preview(count_root, preview)
    seen: list[int] = []
    transaction._step_hook = lambda number, _text: seen.append(number)
    journal.undo_last(count_root)
    transaction._step_hook = None
    total = len(seen)
    for step in range(1, total + 1):
        root = tmp_path / f"undo{step}"
        root.mkdir()
        preview, old, new = mixed_preview(root)
        apply_preview(root, preview)
        transaction._step_hook = _crash_at(step)
        with pytest.raises(SimulatedCrash):
            journal.undo_last(root)
        transaction._step_hook = None
        journal.recover(root)
        committed = step == total
        assert snapshot(root) == (old if committed else new), f"undo step {step}"
        assert journal_is_clean(root)
        # An interrupted undo leaves the apply undoable; a finished one does not.
        assert len(journal.undo_history(root)) == (0 if committed else 1)
