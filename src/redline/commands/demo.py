"""``redline demo``: the scripted demo on a fresh copy of the bundled sample project."""

from __future__ import annotations

import argparse

from redline.commands._common import not_ready


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--headless",
        action="store_true",
        help="print the events instead of opening the dashboard",
    )
    parser.add_argument(
        "--resolver",
        choices=("human", "agent", "apply-all", "discard-all"),
        default=None,
        help="who resolves (dashboard default: human; headless default: agent)",
    )
    parser.add_argument(
        "--no-wait", action="store_true", help="skip the plan's pauses between steps"
    )
    parser.add_argument(
        "--keep",
        metavar="PATH",
        default=None,
        help="copy the sample project here instead of a temp folder",
    )


def run(args: argparse.Namespace) -> int:
    return not_ready("demo")
