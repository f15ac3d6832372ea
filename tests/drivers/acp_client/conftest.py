"""Fixtures of the ACP client tests: a workspace, and `exec --agent` runs that end with the test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.acp_client.running import Exec


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    print('hi')\n")
    return root


@pytest.fixture
def started(tmp_path: Path, workspace: Path) -> Iterator[Any]:
    runs: list[Exec] = []

    def start(steps: list[dict[str, Any]] | None, *extra: str, **kw: Any) -> Exec:
        run = Exec(tmp_path, workspace, steps, *extra, **kw)
        runs.append(run)
        return run

    yield start
    for run in runs:
        run.close()
