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
            "tidy up; rm -rf /",
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
    assert "--trust" in rest
    assert rest.count("--tools") == 2
    assert str(tmp_path / "tools" / "a.py") in rest and str(tmp_path / "b.py") in rest
    assert "tidy up; rm -rf /" in rest  # one argument, quoted by shlex.join later
    assert "--host" not in rest and "--port" not in rest
    assert rest[rest.index("--model") + 1] == "scripted:plan.json"
    assert rest[rest.index("--prompt") + 1] == "tidy up; rm -rf /"
    assert rest[rest.index("--max-turns") + 1] == "3"
    assert rest[rest.index("--resolver") + 1] == "agent"


def test_demo_runs_the_demo_command() -> None:
    args = build_parser().parse_args(["serve", "--demo", "--no-wait"])
    assert child_command(args, "")[3:] == ["demo", "--no-wait"]
    args = build_parser().parse_args(["serve", "--demo"])
    assert child_command(args, "")[3:] == ["demo"]
