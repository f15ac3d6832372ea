"""``redline undo``: undo the newest applied action through the journal."""

from __future__ import annotations

import argparse

from redline.commands._common import add_workspace_option, not_ready


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)


def run(args: argparse.Namespace) -> int:
    return not_ready("undo")
