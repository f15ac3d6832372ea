"""Facts the docs state about the code: they must stay true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from redline.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_custom_tools_names_every_built_in_tool() -> None:
    from redline.commands.tools import _builtin_tools

    text = (ROOT / "docs" / "custom-tools.md").read_text(encoding="utf-8")
    sentence = re.search(r"The names of the (\d+) built-in tools \(([^)]*)\)", text, re.S)
    assert sentence is not None, "custom-tools.md: the sentence on reserved names is gone"
    named = re.findall(r"`([a-z_]+)`", sentence.group(2))
    real = [tool.name for tool in _builtin_tools()]
    assert int(sentence.group(1)) == len(real) == len(named)
    assert sorted(named) == sorted(real)


def test_configuration_does_not_call_agents_unstarted() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `[agents.NAME]`"))
    assert "yet" not in row and "--agent NAME" in row


def test_readme_table_names_the_exec_default_resolver() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `redline exec [-C PATH]"))
    assert "defaults to `agent`" in row


def test_trust_help_says_what_trust_enables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trust", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "plugins" in text and "review rules" in text and ".redline/config.toml" in text
    # The commands a workspace's config could run are named.
    assert "[agents.NAME]" in text and "[notify]" in text
