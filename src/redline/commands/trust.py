"""``redline trust``: allow (or ``--revoke``) a workspace's project plugins."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from redline.commands._common import add_workspace_option


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    parser.add_argument("--revoke", action="store_true", help="stop trusting the workspace")


def run(args: argparse.Namespace) -> int:
    root = Path(args.cwd).expanduser()
    if not root.is_dir():
        print(f"redline trust: -C {args.cwd}: not a folder", file=sys.stderr)
        return 2
    root = root.resolve()

    from redline import trust as trust_store
    from redline.extensibility.custom_tools.loader import project_tools_dir

    plugins = project_tools_dir(root)
    try:
        changed = trust_store.revoke(root) if args.revoke else trust_store.trust(root)
    except OSError as exc:
        print(
            f"redline trust: cannot update {trust_store.trust_file()}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 1
    if args.revoke:
        if changed:
            print(f"Revoked trust for {root}: plugins in {plugins} will no longer load.")
        else:
            print(f"{root} was not trusted; nothing to revoke.")
    elif changed:
        print(f"Trusted {root}: plugins in {plugins} will load.")
    else:
        print(f"{root} is already trusted: plugins in {plugins} load.")
    return 0
