"""Fixtures for the workspace-queue tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from redline.workspace import transaction
from redline.workspace.queue import claims, index, listing, storage


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\nworld\n")
    return root


@pytest.fixture(autouse=True)
def no_hooks() -> Iterator[None]:
    yield
    transaction._step_hook = None
    claims._step_hook = None


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled, and the index and listing memo are saved after any
    row built (a module may narrow this with a ``settled`` of its own)."""
    monkeypatch.setattr(index, "SETTLE_NS", -(10**15))
    monkeypatch.setattr(index, "PERSIST_AFTER", 1)
    monkeypatch.setattr(listing, "PERSIST_AFTER", 1)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the record files read (and verified) from ``actions/``."""
    seen: list[str] = []
    original = storage.Signed.read_stat

    def counting(self: storage.Signed, name: str, shown: str) -> Any:
        if self.folder == "actions":
            seen.append(name)
        return original(self, name, shown)

    monkeypatch.setattr(storage.Signed, "read_stat", counting)
    yield seen
