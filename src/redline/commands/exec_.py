"""``redline exec``: run one session headless and print its events."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from redline.commands._common import (
    add_model_options,
    add_tool_options,
    add_workspace_option,
    command_settings,
    resume_line,
    workspace_root,
)
from redline.workspace.names import json_dumps

if TYPE_CHECKING:
    from redline.config import Settings

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
    parser.add_argument(
        "--wait",
        action="store_true",
        help="with --agent: instead of exiting 3 when the agent only waits on review, keep "
        "it running until another process (the dashboard, redline pending) resolves its "
        "actions, then go on; Ctrl-C stops it and exits 3 (see docs/agents.md)",
    )
    parser.add_argument(
        "--offer-tools",
        action="store_true",
        help="offer redline's MCP tools (ast_edit, propose_edit, propose_write, "
        "review_status, await_review) to the --agent in session/new (see docs/mcp.md)",
    )
    add_tool_options(parser)
    add_plugin_timeout_option(parser)
    parser.add_argument("--json", action="store_true", help="print events as JSON lines")
    parser.add_argument(
        "--replay", metavar="FILE", default=None, help="print a session log back as events"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the workspace's most recent `redline exec` session (or --session ID) "
        "once its pending actions are resolved; exits 3 at once while any is pending",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        default=None,
        help="with --resume: the session to continue (its log is .redline/sessions/ID.jsonl)",
    )


def _seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{raw!r} must be a positive number of seconds")
    return value


def add_plugin_timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin-timeout",
        dest="plugin_timeout",
        metavar="SECONDS",
        type=_seconds,
        default=None,
        help="seconds each plugin may take to load before it is skipped "
        "(default: $REDLINE_PLUGIN_TIMEOUT, then plugin_timeout in the config files, else 10)",
    )


@contextmanager
def _json_stdout() -> Iterator[TextIO]:
    """The stream for ``--json`` lines, with nothing else able to reach it.

    When stdout is the real file descriptor 1, the JSON goes to a duplicate of it and
    fd 1 itself points at stderr for the run: whatever else writes to stdout (a plugin's
    thread, a C extension, a child process) lands on stderr instead of between the JSON
    lines. (Plugin ``print()`` is captured before it gets that far.)
    """
    from redline.extensibility.isolation import unwrap

    stream = unwrap(sys.stdout)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    if fd != 1:
        yield stream  # not the process's stdout (a test's capture): nothing else reaches it
        return
    stream.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        yield stream
        return
    out = os.fdopen(saved, "w", encoding="utf-8", errors="backslashreplace")
    try:
        yield out
    finally:
        try:
            out.flush()
            stream.flush()  # stray output written meanwhile still goes to stderr
        except (OSError, ValueError):
            pass
        try:
            os.dup2(saved, 1)
        finally:
            with suppress(OSError):
                out.close()


def _error(args: argparse.Namespace, message: str, code: int, out: TextIO | None = None) -> int:
    if args.json:
        # No session exists yet: a complete event all the same, outside any session.
        from redline.review.events import ErrorEvent

        event = ErrorEvent(message=message, time=time.time())
        print(json_dumps(event.to_dict(), ensure_ascii=True), file=out or sys.stdout, flush=True)
    print(f"redline exec: {message}", file=sys.stderr)
    return code


def _replay(args: argparse.Namespace) -> int:
    from redline.commands.render import EventPrinter
    from redline.review.session_log import SessionLogError, read_log

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
    root = workspace_root(args)
    if not root.is_dir():
        return _run(args)
    from redline.teamqueue.background import following

    def log(line: str) -> None:
        print(f"redline: team queue: {line}", file=sys.stderr)

    # With a team queue configured, this session's workspace is followed while it runs.
    with following(root.resolve(), log=log):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.agent is not None:
        from redline.commands.exec_agent import run_exec

        return run_exec(args)
    if args.offer_tools:
        return _error(args, "--offer-tools needs --agent AGENT", 2)
    if args.wait:
        return _error(args, "--wait needs --agent AGENT (the built-in runtime never waits)", 2)
    from redline.config import ConfigError

    cwd = workspace_root(args)
    if not cwd.is_dir():
        return _error(args, f"workspace {cwd}: not a folder", 2)
    if args.session is not None and not args.resume:
        return _error(args, "--session ID needs --resume", 2)
    if args.prompt is not None and not args.prompt.strip():
        return _error(args, "--prompt TEXT must not be empty", 2)
    if not args.resume and not args.prompt:
        return _error(args, "--prompt TEXT is required (or --resume)", 2)
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
    if args.json:
        with _json_stdout() as out:
            return _run_session(args, cwd, settings, model, out)
    from redline.extensibility.isolation import unwrap

    # Never the capture router: redline's own lines must not count as a plugin's output.
    return _run_session(args, cwd, settings, model, unwrap(sys.stdout))


def _run_session(
    args: argparse.Namespace,
    cwd: Path,
    settings: Settings,
    model: str,
    out: TextIO,
) -> int:
    from redline.commands.render import EventPrinter
    from redline.drivers.model.providers import ModelSpecError
    from redline.drivers.model.providers.base import ProviderError
    from redline.extensibility.isolation import arm_exit_watchdog
    from redline.sdk import create_agent_session

    history = None
    if args.resume:
        from redline.drivers.model.resume import ResumeError, load_history, session_log_path
        from redline.workspace.queue import QueueError, WorkspaceQueue

        try:
            with WorkspaceQueue(cwd) as queue:
                log_path = session_log_path(cwd, args.session, source="exec")
                history = load_history(log_path, queue)
                waiting = queue.session_view(history.session_id).list()
        except ResumeError as exc:
            return _error(args, str(exc), 2, out)
        except QueueError as exc:
            return _error(args, str(exc), 1, out)
        if history.header.get("kind") == "acp":
            return _error(
                args,
                f"session {history.session_id} ran an external agent: resume it with --agent AGENT",
                2,
                out,
            )
        if waiting:
            ids = ", ".join(record.id for record in waiting)
            print(
                f"redline exec: session {history.session_id} still has pending actions "
                f"({ids}); resolve them (redline pending) and resume again",
                file=sys.stderr,
            )
            return EXIT_STATUS["awaiting_review"]
    if history is not None:
        # The first line says which session goes on (stderr under --json: stdout is events).
        print(
            resume_line(history.session_id, args.session, len(history.unreported)),
            file=sys.stderr if args.json else out,
            flush=True,
        )
    resolver = settings.resolver
    if history is not None and args.resolver is None:
        # A continued session keeps its resolver unless the command line names one.
        logged = history.header.get("resolver")
        if isinstance(logged, str) and logged in ("agent", "human", "apply-all", "discard-all"):
            resolver = logged
    try:
        session = create_agent_session(
            cwd,
            model,
            session_id=history.session_id if history is not None else None,
            source_kind="exec",
            resolver=resolver,
            tool_paths=args.tool_paths,
            trust=args.trust,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            timeout=settings.timeout,
            max_turns=settings.max_turns,
            plugin_timeout=settings.plugin_timeout,
        )
    except ModelSpecError as exc:
        return _error(args, str(exc), 2, out)
    except (ProviderError, ValueError, OSError) as exc:
        return _error(args, str(exc), 1, out)

    printer = EventPrinter(out)
    reader_gone = False

    def listener(event: Any) -> None:
        nonlocal reader_gone
        if reader_gone:
            return
        try:
            if args.json:
                out.write(json_dumps(event.to_dict()) + "\n")
                out.flush()
            else:
                printer(event)
        except BrokenPipeError:
            # Whoever read our output stopped (`| head`): stop the agent, quietly.
            reader_gone = True
            session.abort()

    from redline.review.unseen import watch_store

    # With no dashboard watching, the person hears of each action left for review.
    told = watch_store(cwd, session.store)
    with session:
        for message in session.recovery_messages:
            print(f"redline: {message}", file=sys.stderr)
        # People reviewing later (redline pending) see each change now, as a diff.
        session.event_diffs = session.resolver == "human"
        # Plugin errors are events (replayed here): printed once, with the rest.
        session.subscribe(listener, replay=True)
        if history is not None:
            session.restore(history.messages, history.unreported)
        try:
            if history is not None and not args.prompt:
                status = session.resume()
            else:
                status = session.prompt(args.prompt)
        except KeyboardInterrupt:
            # A real Ctrl-C: stop now. Plugin code that never returns is abandoned, and
            # should it hold the process anyway, the watchdog ends it shortly.
            arm_exit_watchdog(code=130)
            session.abort()
            session.wait(1.0)
            status = "aborted"
        told()  # what still waits is told now: the process ends next
    return EXIT_STATUS.get(status, 1)
