"""Counts the docs state match what redline really has (docs/custom-tools.md's tools)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from redline.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_custom_tools_doc_counts_the_built_in_tools(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    assert main(["tools", "-C", str(tmp_path)]) == 0
    listed = re.search(r"^Built-in tools \((\d+)\):$", capfd.readouterr().out, re.M)
    assert listed is not None
    real = int(listed.group(1))
    text = (DOCS / "custom-tools.md").read_text(encoding="utf-8")
    assert re.findall(r"^Built-in tools \((\d+)\):$", text, re.M) == [str(real)]
    assert re.findall(r"The names of the (\d+) built-in tools", text) == [str(real)]
