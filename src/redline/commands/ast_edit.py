"""``redline ast-edit``: structural search and rewrite from the command line."""

from __future__ import annotations

import argparse

from redline.commands._common import add_workspace_option, not_ready


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    parser.add_argument(
        "--pattern", action="append", default=[], metavar="P", help="pattern (repeatable)"
    )
    parser.add_argument(
        "--rewrite",
        action="append",
        default=[],
        metavar="R",
        help="rewrite for the pattern at the same position",
    )
    parser.add_argument("targets", nargs="*", metavar="TARGET", help="files, folders or globs")
    parser.add_argument("--glob", default=None, metavar="G", help="extra filter under targets")
    parser.add_argument("--limit", type=int, default=None, metavar="N")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--apply", action="store_true", help="write the rewrite")


def run(args: argparse.Namespace) -> int:
    return not_ready("ast-edit")
