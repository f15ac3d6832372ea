"""The examples in docs must keep working."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_sdk_review_example_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")
    runpy.run_path(str(ROOT / "examples" / "sdk_review.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "Run finished: done" in out
    assert out.rstrip().endswith('print("Hello, world")')
