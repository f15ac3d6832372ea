"""``redline``: open the review dashboard on a workspace."""

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
        choices=("human", "agent"),
        default="human",
        help="who resolves pending actions (default: human)",
    )
    add_tool_options(parser)


def run(args: argparse.Namespace) -> int:
    return not_ready("dashboard")
