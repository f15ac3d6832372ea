"""The ``redline`` command line: the dashboard by default, and its subcommands."""

from __future__ import annotations

import sys

from redline import TYPE_CHECKING, __version__

if TYPE_CHECKING:  # an agent's hook call never builds a parser
    import argparse
    from collections.abc import Sequence

EXIT_OK = 0
EXIT_BAD_INPUT = 2
#: Commands whose output is a protocol or a screen of their own, never the text filter's:
#: ``hook`` (the agent reads its JSON), ``mcp`` (JSON-RPC on stdio) and the dashboard
#: (Textual draws it, through the same function for every untrusted string).
OWN_STREAMS = frozenset({"hook", "mcp", "dashboard"})

# (subcommand, module under redline.commands, one-line help)
SUBCOMMANDS: tuple[tuple[str, str, str], ...] = (
    ("demo", "demo", "run the scripted demo on a copy of a sample project (no key, no network)"),
    (
        "serve",
        "serve",
        "serve the dashboard to a web browser (token-protected, 127.0.0.1 by default)",
    ),
    ("exec", "exec_", "run one agent session headless and print its events"),
    ("ast-edit", "ast_edit", "structural search and rewrite of Python code"),
    ("tools", "tools", "list available tools and plugin load errors"),
    (
        "trust",
        "trust",
        "trust (or --revoke) a workspace: its plugins (.redline/tools/), its review rules "
        "(.redline/rules.toml) and all of its .redline/config.toml",
    ),
    ("undo", "undo", "undo an applied change (the newest, or one by id; --list shows them)"),
    ("pending", "pending", "list, show, apply or discard the workspace's queued actions"),
    ("queue", "queue", "the team queue on PostgreSQL: init, grant and revoke rights, status"),
    (
        "workspaces",
        "workspaces",
        "the workspaces redline knows on this machine (list with pending counts, forget)",
    ),
    ("log", "log", "the workspace's decisions (applied, edited, discarded), e.g. for a PR"),
    ("mcp", "mcp", "serve MCP tools that only propose changes to this workspace's queue"),
    ("rules", "rules", "the review rules in force, and what they would decide (list, check)"),
    (
        "sandbox",
        "sandbox",
        "the sandbox checks run in here, proven: what a check may not write or reach",
    ),
    ("hooks", "hooks", "install, remove or show redline's hooks in Claude Code (and others)"),
    ("hook", "hook", "answer an agent's tool-call hook (run by the agent; reads stdin)"),
    (
        "hook-server",
        "hook_server",
        "the resident server that answers hook calls fast (started by them; --status, --stop)",
    ),
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; its ``parse_args`` folds options given at several levels.

    ``only``: the top level and just that subcommand (see :data:`ALONE`)."""
    # Here, not at the top: `redline hook AGENT` (run before each tool call) skips it.
    import importlib

    from redline.commands._levels import CommandParser, share

    parser = CommandParser(
        prog="redline",
        description="A coding agent whose every change waits on a reviewable stack.",
    )
    parser.add_argument("--version", action="version", version=f"redline {__version__}")
    dashboard = importlib.import_module("redline.commands.dashboard")
    dashboard.configure(parser)
    from redline.commands.queue import add_queue_option

    add_queue_option(
        parser, extra="; with no command, opens the team dashboard over that queue instead"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, help_text in SUBCOMMANDS:
        if only is not None and name != only:
            continue
        command = importlib.import_module(f"redline.commands.{module}")
        child = sub.add_parser(name, help=help_text, description=help_text)
        command.configure(child)
        child.set_defaults(_module=module)
    parser.set_defaults(_module="dashboard")
    share(parser)
    return parser


#: Subcommands parsed with only their own parser when the command line starts with them:
#: ``redline ast-edit ...`` is run by agents and scripts many times over, and the parsers
#: of every other subcommand (their modules' imports) cost about 14 ms of each start. A
#: command line that starts with the subcommand gives no top-level option, so the parse
#: (values, usage, errors, help) is the same (tests/test_cli_only.py).
ALONE = frozenset({"ast-edit"})


def _exit_now(code: int) -> None:
    """End a process of its own (the agent's hook command) without the interpreter's
    teardown of every imported module (about 15 ms per tool call): its answer is printed,
    its queue and watcher are closed; only the output streams and logging are flushed."""
    import os

    if "logging" in sys.modules:  # imported by what the call ran (never just for this)
        sys.modules["logging"].shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 2
    os._exit(code)


def _hook(agent: str, *, exiting: bool) -> int:
    """``redline hook AGENT``: handed to the resident hook server when one answers (a
    process of the agent's own only), else answered here (docs/agents.md)."""
    spawn = False
    if exiting:
        from redline.hookserver.client import FAILED, Outcome, forward

        try:
            outcome = forward(agent)
        except KeyboardInterrupt:  # before the server had the call: nothing was started
            outcome = Outcome(FAILED, lost="interrupted while waiting for review")
        except Exception:  # only the hand-over can raise: answered here
            outcome = Outcome(None)
        if outcome.code is not None:
            if outcome.lost:  # fail closed, as the hook does for any problem
                from redline.drivers.hooks.answers import blocked

                sys.stderr.write(blocked(outcome.lost).stderr)
            _exit_now(outcome.code)
        spawn = outcome.spawn
    from redline.commands.hook import run_agent

    code = run_agent(agent, exiting=exiting)
    if exiting:
        from redline.hooktrace import mark

        mark("exit")
        if spawn:  # after the answer: the agent is not kept waiting for it
            from redline.hookserver.client import spawn_server

            for stream in (sys.stdout, sys.stderr):
                try:  # noqa: SIM105 - contextlib is not loaded in a hook call
                    stream.flush()
                except (OSError, ValueError):
                    pass
            spawn_server()
        _exit_now(code)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if len(given) == 2 and given[0] == "hook" and not given[1].startswith("-"):
        # An agent's hook call: no parser of every subcommand, it must start fast.
        return _hook(given[1], exiting=argv is None)
    if given[:1] == ["hook-server"]:  # started by a hook call: no parser of every command
        from redline.commands.hook_server import main as hook_server

        return hook_server(given[1:])
    parser = build_parser(given[0] if given and given[0] in ALONE else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_BAD_INPUT
    for stream in (sys.stdout, sys.stderr):
        # File names that are not UTF-8 print as \udcXX instead of crashing (docs/safety.md).
        if getattr(stream, "errors", "") == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if args._module in OWN_STREAMS:
        return _run(args)
    from redline.termtext import terminal_streams

    # Every text-mode command writes through the one filter of terminal text: agents'
    # labels, paths, reasons and diffs never reach the terminal (or a pager) raw.
    with terminal_streams(json_stdout=bool(getattr(args, "json", False))):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    problem = _check_workspace(args)
    if problem:
        print(f"{args._leaf}: error: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _find_workspace(args)
    import importlib

    command = importlib.import_module(f"redline.commands.{args._module}")
    try:
        return int(command.run(args))
    except KeyboardInterrupt:
        print("redline: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`| head`); say nothing more on that pipe.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _check_workspace(args: argparse.Namespace) -> str:
    """Why the ``-C PATH`` given cannot be the workspace, or "" (none given, or a folder)."""
    import os

    path = getattr(args, "cwd", None)
    if path is None:
        return ""
    if not os.path.exists(path):
        return f"-C {path} is not a folder: it does not exist"
    if not os.path.isdir(path):
        return f"-C {path} is not a folder"
    return ""


def _find_workspace(args: argparse.Namespace) -> None:
    """Without ``-C``, work on the nearest folder up holding ``.redline/`` or ``.git/``.

    So running from a subfolder never starts a second journal or queue. ``ast-edit``
    targets typed relative to the current folder keep meaning that folder.
    """
    if not hasattr(args, "cwd"):
        return
    args.cwd_given = args.cwd is not None  # the team dashboard filters only on an explicit -C
    if args.cwd is not None:
        return
    from pathlib import Path

    from redline.config import find_workspace_root

    here = Path.cwd()
    root = find_workspace_root(here)
    args.cwd = str(root)
    if args._module != "ast_edit" or root == here:
        return
    inside = here.relative_to(root)
    targets = list(args.targets) or ["."]
    args.targets = [
        target if Path(target).is_absolute() else (inside / target).as_posix() for target in targets
    ]


if __name__ == "__main__":
    raise SystemExit(main())
