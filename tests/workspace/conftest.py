"""Fixtures for the workspace tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from redline.workspace import transaction


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture(autouse=True)
def no_step_hook() -> Iterator[None]:
    yield
    transaction._step_hook = None
