"""``redline tools``: every available tool and every plugin load error."""

from __future__ import annotations

import argparse

from redline.commands._common import add_tool_options, add_workspace_option, not_ready


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    add_tool_options(parser)


def run(args: argparse.Namespace) -> int:
    return not_ready("tools")
