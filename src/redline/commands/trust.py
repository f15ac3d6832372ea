"""``redline trust``: trust (or ``--revoke``) a workspace: its plugins, rules and config."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from redline.commands._common import add_workspace_option


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Trust is per user (kept in your user config folder) and per workspace folder. "
        "Until a workspace is trusted, redline loads none of its plugins, ignores its "
        "review rules, and lets its .redline/config.toml only make settings stricter: "
        "its [agents.NAME] commands and its whole [notify] table (a command run when an "
        "action arrives) are skipped (see docs/configuration.md)."
    )
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
            print(
                f"Revoked trust for {root}: plugins in {plugins}, its review rules and its "
                "config.toml no longer count."
            )
        else:
            print(f"{root} was not trusted; nothing to revoke.")
    elif changed:
        print(
            f"Trusted {root}: plugins in {plugins} will load; its review rules and its whole "
            "config.toml count."
        )
    else:
        print(
            f"{root} is already trusted: plugins in {plugins} load; its review rules and its "
            "whole config.toml count."
        )
    return 0
