"""``redline undo``: undo the newest applied action through the journal."""

from __future__ import annotations

import argparse

from redline.commands._common import add_workspace_option


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from redline.workspace import journal
    from redline.workspace.errors import ApplyError

    root = Path(args.cwd)
    if not root.is_dir():
        print(f"redline undo: workspace {root} is not a folder", file=sys.stderr)
        return 2
    for message in journal.recover(root):
        print(f"redline: {message}")
    try:
        receipt = journal.undo_last(root)
    except ApplyError as exc:
        print(f"redline undo: {exc}", file=sys.stderr)
        return 1
    print(receipt.message)
    return 0
