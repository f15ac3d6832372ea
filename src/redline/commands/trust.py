"""``redline trust``: allow (or ``--revoke``) a workspace's project plugins."""

from __future__ import annotations

import argparse

from redline.commands._common import add_workspace_option, not_ready


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    parser.add_argument("--revoke", action="store_true", help="stop trusting the workspace")


def run(args: argparse.Namespace) -> int:
    return not_ready("trust")
