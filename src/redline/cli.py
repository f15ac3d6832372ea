"""The ``redline`` command line: the dashboard by default, and its subcommands."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from redline import __version__

EXIT_OK = 0
EXIT_BAD_INPUT = 2

# (subcommand, module under redline.commands, one-line help)
SUBCOMMANDS: tuple[tuple[str, str, str], ...] = (
    ("demo", "demo", "run the scripted demo on a copy of a sample project (no key, no network)"),
    ("exec", "exec_", "run one agent session headless and print its events"),
    ("ast-edit", "ast_edit", "structural search and rewrite of Python code"),
    ("tools", "tools", "list available tools and plugin load errors"),
    ("trust", "trust", "trust (or --revoke) a workspace's project plugins"),
    ("undo", "undo", "undo the most recently applied action in a workspace"),
    ("pending", "pending", "list, show, apply or discard the workspace's queued actions"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="redline",
        description="A coding agent whose every change waits on a reviewable stack.",
    )
    parser.add_argument("--version", action="version", version=f"redline {__version__}")
    dashboard = importlib.import_module("redline.commands.dashboard")
    dashboard.configure(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, help_text in SUBCOMMANDS:
        command = importlib.import_module(f"redline.commands.{module}")
        child = sub.add_parser(name, help=help_text, description=help_text)
        command.configure(child)
        child.set_defaults(_module=module)
    parser.set_defaults(_module="dashboard")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_BAD_INPUT
    command = importlib.import_module(f"redline.commands.{args._module}")
    try:
        return int(command.run(args))
    except KeyboardInterrupt:
        print("redline: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`| head`); say nothing more on that pipe.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
