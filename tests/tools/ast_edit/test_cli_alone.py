"""`redline ast-edit ...` builds only its own subcommand's parser (cli.ALONE, issue 44):
the same values, usage, errors and help as the parser of every subcommand."""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from redline import cli

ARGVS = [
    ["ast-edit", "--pattern", "print($$$A)"],
    ["ast-edit", "-C", "/tmp", "--pattern", "a", "--rewrite", "b", "x.py", "pkg"],
    ["ast-edit", "--pattern", "a", "--json", "--limit", "3", "--glob", "*.py", "--apply"],
    ["ast-edit", "-C", "/tmp", "-C", "/tmp", "--pattern", "a"],
    ["ast-edit", "-C", "/tmp", "-C", "/", "--pattern", "a"],
    ["ast-edit", "--pattern", "a", "--limit", "x"],
    ["ast-edit", "--pattern", "a", "--bogus"],
    ["ast-edit", "--pattern"],
    ["ast-edit", "--model", "m", "--pattern", "a"],
    ["ast-edit", "--queue", "postgresql://u:secret@h/db", "--pattern", "a"],
    ["ast-edit", "--help"],
    ["ast-edit", "-h", "--pattern", "a"],
    ["ast-edit"],
    ["ast-edit", "--json", "--json", "--pattern", "a"],
    ["ast-edit", "--version"],
]


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = sorted(vars(parser.parse_args(argv)).items())
        except SystemExit as exc:
            result = ("exit", exc.code)
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_the_parser_alone_parses_as_the_whole_one(argv: list[str]) -> None:
    assert "ast-edit" in cli.ALONE
    alone = _parse(cli.build_parser("ast-edit"), argv)
    whole = _parse(cli.build_parser(), argv)
    assert alone == whole


def test_the_command_builds_only_its_own_parser(tmp_path: Path) -> None:
    # In a fresh interpreter: no other subcommand's module is imported.
    probe = (
        "import sys; from redline.cli import main; status = main(sys.argv[1:]); "
        "print('OTHERS', sorted(m for m in ('redline.commands.pending', "
        "'redline.commands.serve', 'redline.commands.undo') if m in sys.modules))"
    )
    argv = ["ast-edit", "-C", str(tmp_path), "--pattern", "print($$$A)"]
    proc = subprocess.run(
        [sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.splitlines()[-1] == "OTHERS []", proc.stdout + proc.stderr
    proc = subprocess.run(
        [sys.executable, "-c", probe, "tools", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "OTHERS ['redline.commands.pending'" in proc.stdout.splitlines()[-1]
