"""``redline hook-server``: the resident hook server (docs/agents.md, "The hook server").

Started by a ``redline hook`` call that found none (detached, in a session of its own), it
serves later hook calls of the same interpreter, redline and environment by forking a
warm process per call (``redline/hookserver/``), and ends after ``--idle`` seconds
without a call. ``--status`` and ``--stop`` reach the server of this shell's environment.
``REDLINE_HOOK_SERVER=off`` switches it off: hook calls then never use nor start one.
"""

from __future__ import annotations

import argparse

#: What a hook call loads (measured on a reviewed Write decided by a person, a post-tool
#: call and a pass-through): the server loads it all before its first fork.
PRELOAD = (
    "redline.commands.hook",
    "redline.config",
    "redline.hooktrace",
    "redline.notify",
    "redline.drivers.hooks.activity",
    "redline.drivers.hooks.answers",
    "redline.drivers.hooks.gateway",
    "redline.drivers.hooks.mapping",
    "redline.drivers.hooks.notes",
    "redline.drivers.hooks.outbox",
    "redline.drivers.hooks.payload",
    "redline.drivers.hooks.post_tool",
    "redline.drivers.hooks.ruled",
    "redline.drivers.hooks.tools",
    "redline.drivers.hooks.agent_model",
    "redline.drivers.hooks.codex",
    "redline.review.comments",
    "redline.review.decision",
    "redline.review.event_stream",
    "redline.review.events",
    "redline.review.follower",
    "redline.review.provenance",
    "redline.review.queued",
    "redline.review.resolve",
    "redline.review.session",
    "redline.review.store",
    "redline.review.unseen",
    "redline.workspace.decisions",
    "redline.workspace.hunks",
    "redline.workspace.journal",
    "redline.workspace.known",
    "redline.workspace.outbox",
    "redline.workspace.presence",
    "redline.workspace.queue",
    "redline.workspace.queue.watcher",
    "redline.workspace.rebase",
    "redline.rules",
    "redline.review.trailers",
    "redline.trust",
    "redline.workspace.git",
    "redline.workspace.queue.revisions",
    "pathspec",  # a review rule's paths
    "pwd",
    "asyncio",
    "watchfiles",
)


def configure(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--status", action="store_true", help="say whether a server answers this environment"
    )
    what.add_argument("--stop", action="store_true", help="stop the server of this environment")
    parser.add_argument(
        "--idle",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="end after this long without a call (default: 600)",
    )


def run(args: argparse.Namespace) -> int:
    import sys

    from redline.hookserver import server

    if args.status or args.stop:
        answer = server.ask("stop" if args.stop else "status")
        if answer is None:
            print("no hook server answers this environment")
            return 1
        verb = "stopped" if args.stop else "running"
        print(f"hook server {verb}: {answer}")
        return 0
    if args.idle <= 0:
        print("redline hook-server: error: --idle must be more than 0", file=sys.stderr)
        return 2
    try:
        return server.serve(_call, PRELOAD, idle=args.idle)
    except KeyboardInterrupt:  # Ctrl-C on a server started by hand: it has cleaned up
        return 130


def main(argv: list[str]) -> int:
    """``redline hook-server ...`` without the whole command line's parser (a hook call
    starts the server: it must not pay for every subcommand's import)."""
    parser = argparse.ArgumentParser(
        prog="redline hook-server", description=__doc__.splitlines()[0] if __doc__ else None
    )
    configure(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    return run(args)


def _call(agent: str) -> int:
    """One hook call in a forked child: what ``redline hook AGENT``'s own process runs."""
    from redline.commands.hook import run_agent
    from redline.hooktrace import mark

    code = run_agent(agent, exiting=True)
    mark("exit")
    return code
