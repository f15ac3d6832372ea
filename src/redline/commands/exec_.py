"""``redline exec``: run one session headless and print its events."""

from __future__ import annotations

import argparse

from redline.commands._common import (
    add_model_options,
    add_tool_options,
    add_workspace_option,
    not_ready,
)


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    add_model_options(parser)
    parser.add_argument(
        "--resolver",
        choices=("agent", "human", "apply-all", "discard-all"),
        default="agent",
        help="who resolves pending actions (default: agent)",
    )
    add_tool_options(parser)
    parser.add_argument("--json", action="store_true", help="print events as JSON lines")
    parser.add_argument(
        "--replay", metavar="FILE", default=None, help="print a session log back as events"
    )


def run(args: argparse.Namespace) -> int:
    return not_ready("exec")
