"""Fixtures for the workspace-queue tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from redline.workspace import transaction
from redline.workspace.queue import claims


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
