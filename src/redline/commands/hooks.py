"""``redline hooks install|uninstall|status``: redline's hooks in the agents' settings.

``install AGENT [-C PATH] [--user] [--trust-codex-hook]`` merges the hook configuration
into the agent's settings (see :mod:`redline.drivers.hooks.install`); ``uninstall AGENT``
removes only redline's entries; ``status`` lists, per agent, where redline's hook is
installed, the agent's version on PATH and whether redline was tested with it.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from redline.commands._common import add_workspace_option

AGENTS = ("claude", "codex", "gemini")
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)  # -C before, inside or after the action (commands/_levels.py)
    sub = parser.add_subparsers(dest="hooks_command", metavar="ACTION", required=True)
    install = sub.add_parser("install", help="write redline's hook into the agent's settings")
    install.add_argument("agent", choices=AGENTS, metavar="AGENT", help="claude, codex or gemini")
    install.add_argument(
        "--user", action="store_true", help="the agent's user settings instead of the workspace's"
    )
    install.add_argument(
        "--trust-codex-hook",
        action="store_true",
        help="also record Codex's trust of the hook (otherwise the step is printed)",
    )
    uninstall = sub.add_parser("uninstall", help="remove redline's hook from the agent's settings")
    uninstall.add_argument("agent", choices=AGENTS, metavar="AGENT")
    uninstall.add_argument("--user", action="store_true", help="the agent's user settings")
    sub.add_parser("status", help="where redline's hooks are installed, per agent")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from redline.config import ConfigError, hook_settings
    from redline.drivers.hooks.install import InstallError, install, status, uninstall

    root = Path(args.cwd).resolve()
    try:
        if args.hooks_command == "status":
            for agent in AGENTS:
                print(_status_line(status(agent, root)))
            return EXIT_OK
        if args.hooks_command == "install":
            if args.trust_codex_hook and args.agent != "codex":
                print("redline hooks: --trust-codex-hook is only for codex", file=_err())
                return EXIT_BAD_INPUT
            try:
                wait = hook_settings(root).wait_seconds
            except ConfigError as exc:
                print(f"redline hooks: {exc}", file=_err())
                return EXIT_FAILED
            done = install(
                args.agent,
                root,
                user=args.user,
                wait_seconds=wait,
                trust_codex_hook=args.trust_codex_hook,
            )
            if done.trust_step:
                # Never "installed" for a hook the agent will skip.
                print(
                    f"Wrote redline's {args.agent} hook to {done.path}, but Codex will skip it "
                    f"until you trust it.\n{done.trust_step}"
                )
                return EXIT_OK
            if done.changed:
                print(f"Installed redline's {args.agent} hook in {done.path}.")
            else:
                print(f"redline's {args.agent} hook is already installed in {done.path}.")
            if done.trust_recorded:
                print(f"Recorded Codex's trust of the hook in {_codex_config()}.")
            if done.excluded:
                print(
                    f"Added {done.path} to git's exclude file {done.excluded} (it holds a "
                    "local path, so git leaves it out)."
                )
            if done.advice:
                print(done.advice)
            print(
                "Start the agent as usual: every edit it tries waits for review in redline "
                "(`redline` or `redline pending`)."
            )
            return EXIT_OK
        path, changed = uninstall(args.agent, root, user=args.user)
        if changed:
            print(f"Removed redline's {args.agent} hook from {path}.")
        else:
            print(f"redline's {args.agent} hook is not installed in {path}; nothing to remove.")
        return EXIT_OK
    except InstallError as exc:
        print(f"redline hooks: {exc}", file=_err())
        return EXIT_FAILED


def _codex_config() -> object:
    from redline.drivers.hooks.codex_trust import config_path

    return config_path()


def _err() -> TextIO:
    import sys

    return sys.stderr


def _status_line(found: object) -> str:
    from redline.drivers.hooks.install import TESTED_VERSIONS, Status

    assert isinstance(found, Status)
    if found.note:
        where = found.note
    elif found.skipped and len(found.skipped) == len(found.installed):
        # never "installed" for a hook the agent will not run
        where = "installed, but " + "; ".join(found.skipped)
    elif found.installed:
        skipped = {s.split(": ", 1)[0] for s in found.skipped}
        running = [str(p) for p in found.installed if str(p) not in skipped]
        where = "installed in " + ", ".join(running)
        if found.skipped:
            where += " (also " + "; ".join(found.skipped) + ")"
    else:
        where = "not installed"
    if found.outdated:
        from redline.drivers.hooks.install import OUTDATED

        where += "".join(f" ({path}: {OUTDATED})" for path in found.outdated)
    if found.advice:
        where += f" ({found.advice})"
    if found.version is None:
        version = "not found on PATH"
    elif found.tested:
        version = f"version {found.version} (tested)"
    else:
        tested = ", ".join(TESTED_VERSIONS[found.agent])
        version = f"version {found.version} (not tested; redline was tested with {tested})"
    return f"{found.agent}: {where}; {version}"
