"""The command each browser tab runs: ``redline`` with the dashboard options serve was given."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from redline.cli import build_parser
from redline.commands.serve import child_command


def test_dashboard_options_pass_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(
        [
            "serve",
            "--model",
            "scripted:plan.json",
            "--prompt",
            "-n tidy up; rm -rf /",
            "--tools",
            "tools/a.py",
            "--tools",
            "b.py",
            "--trust",
            "--max-turns",
            "3",
            "--resolver",
            "agent",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ]
    )
    argv = child_command(args, "/work space")
    assert argv[:3] == [sys.executable, "-m", "redline"]
    rest = argv[3:]
    assert rest[:2] == ["-C", "/work space"]
    assert sorted(rest[2:]) == sorted(
        [
            "--model=scripted:plan.json",
            "--prompt=-n tidy up; rm -rf /",  # one argument; shlex.join quotes it later
            f"--tools={tmp_path / 'tools' / 'a.py'}",
            f"--tools={tmp_path / 'b.py'}",
            "--trust",
            "--max-turns=3",
            "--resolver=agent",
        ]
    )
    # The child reads them back as given, even the prompt that starts with "-".
    again = build_parser().parse_args(rest)
    assert again.prompt == "-n tidy up; rm -rf /" and again.max_turns == 3
    assert again.tool_paths == [str(tmp_path / "tools" / "a.py"), str(tmp_path / "b.py")]


def test_demo_runs_the_demo_command() -> None:
    args = build_parser().parse_args(["serve", "--demo", "--no-wait"])
    assert child_command(args, "")[3:] == ["demo", "--no-wait"]
    args = build_parser().parse_args(["serve", "--demo"])
    assert child_command(args, "")[3:] == ["demo"]
