"""The load benchmark (bench/team_queue.py) at a small size: reviewer processes racing over
several workspaces, each with its own follower process; it fails unless every action is
decided once and carried out once in its own workspace (the full size is in
docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.postgres

BENCH = Path(__file__).resolve().parents[2] / "bench" / "team_queue.py"


def test_small_load_run_loses_nothing_and_applies_nothing_twice(
    pg_server: object,  # skips (or fails under CI) like the others when PostgreSQL is missing
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--actions",
            "60",
            "--workspaces",
            "3",
            "--reviewers",
            "6",
            "--think",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 reviewers: 60 decisions won" in done.stdout
    assert "no action lost or carried out twice" in done.stdout
