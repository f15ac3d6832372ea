"""``redline exec``: run one session headless and print its events."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from redline.commands._common import (
    add_model_options,
    add_tool_options,
    add_workspace_option,
    command_settings,
    workspace_root,
)
from redline.workspace.names import json_dumps

EXIT_STATUS = {"done": 0, "awaiting_review": 3, "aborted": 1, "error": 1, "max_turns": 1}


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    add_model_options(parser)
    parser.add_argument(
        "--resolver",
        choices=("agent", "human", "apply-all", "discard-all"),
        default=None,
        help="who resolves pending actions (default: resolver in the config files, else agent; "
        "human with --agent)",
    )
    parser.add_argument(
        "--agent",
        metavar="AGENT",
        default=None,
        help="an external ACP agent instead of --model: claude, gemini, codex, a name "
        "from [agents.NAME] in the config, or a command line (see docs/agents.md)",
    )
    add_tool_options(parser)
    parser.add_argument("--json", action="store_true", help="print events as JSON lines")
    parser.add_argument(
        "--replay", metavar="FILE", default=None, help="print a session log back as events"
    )


def _error(args: argparse.Namespace, message: str, code: int) -> int:
    if args.json:
        # No session exists yet: a complete event all the same, outside any session.
        from redline.agent.events import Event

        event = Event("error", 0, time.time(), "", {"message": message})
        print(json_dumps(event.to_dict(), ensure_ascii=True), flush=True)
    print(f"redline exec: {message}", file=sys.stderr)
    return code


def _replay(args: argparse.Namespace) -> int:
    from redline.agent.render import EventPrinter
    from redline.agent.session_log import SessionLogError, read_log

    try:
        _header, events = read_log(Path(args.replay))
    except SessionLogError as exc:
        return _error(args, str(exc), 2)
    printer = EventPrinter(sys.stdout)
    for event in events:
        if args.json:
            print(json_dumps(event.to_dict()))
        else:
            printer(event)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.replay:
        return _replay(args)
    if args.agent is not None:
        from redline.acp.run import run_exec

        return run_exec(args)
    from redline.agent.providers import ModelSpecError
    from redline.agent.providers.base import ProviderError
    from redline.agent.render import EventPrinter
    from redline.config import ConfigError
    from redline.sdk import create_agent_session

    cwd = workspace_root(args)
    if not cwd.is_dir():
        return _error(args, f"workspace {cwd}: not a folder", 2)
    if not args.prompt or not args.prompt.strip():
        return _error(args, "--prompt TEXT is required", 2)
    try:
        settings = command_settings(args, cwd, {"resolver": "agent"})
    except ConfigError as exc:
        return _error(args, str(exc), 2)
    for warning in settings.warnings:
        print(f"redline: warning: {warning}", file=sys.stderr)
    model = settings.model
    if not model:
        return _error(
            args,
            "no model configured: pass --model (scripted:PLAN.json, openai:MODEL, anthropic:MODEL), "
            "set REDLINE_MODEL or model in a config file (see docs/configuration.md); "
            "try `redline demo` for an offline run",
            2,
        )
    try:
        session = create_agent_session(
            cwd,
            model,
            resolver=settings.resolver,
            tool_paths=args.tool_paths,
            trust=args.trust,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            timeout=settings.timeout,
            max_turns=settings.max_turns,
        )
    except ModelSpecError as exc:
        return _error(args, str(exc), 2)
    except (ProviderError, ValueError, OSError) as exc:
        return _error(args, str(exc), 1)

    printer = EventPrinter(sys.stdout)
    reader_gone = False

    def listener(event: Any) -> None:
        nonlocal reader_gone
        if reader_gone:
            return
        try:
            if args.json:
                print(json_dumps(event.to_dict()), flush=True)
            else:
                printer(event)
        except BrokenPipeError:
            # Whoever read our output stopped (`| head`): stop the agent, quietly.
            reader_gone = True
            session.abort()

    with session:
        for message in session.recovery_messages:
            print(f"redline: {message}", file=sys.stderr)
        for error in session.plugin_errors:
            print(f"redline: plugin error: {error}", file=sys.stderr)
        session.subscribe(listener, replay=True)
        try:
            status = session.prompt(args.prompt)
        except KeyboardInterrupt:
            session.abort()
            session.wait(2.0)
            status = "aborted"
    return EXIT_STATUS.get(status, 1)
