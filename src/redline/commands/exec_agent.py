"""``redline exec --agent``: the command-line side of one headless ACP run.

The run itself is :class:`redline.drivers.acp.run.AcpRun`; this module checks the
arguments, opens the session log, prints events and maps the run's status to an exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from redline.commands.render import EventPrinter
from redline.drivers.acp.resume import AcpHistory
from redline.drivers.acp.run import EXIT_STATUS, AcpRun, queue_store
from redline.drivers.acp.spec import AgentSpecError, resolve_agent
from redline.review.events import ErrorEvent, Event, EventStream
from redline.rules import RuleSet


def _error(args: argparse.Namespace, message: str, code: int) -> int:
    if args.json:
        event = ErrorEvent(message, time=time.time())
        print(json.dumps(event.to_dict()), flush=True)
    print(f"redline exec: {message}", file=sys.stderr)
    return code


def run_exec(args: argparse.Namespace) -> int:
    """``redline exec --agent``: the part of exec_.run for external agents."""
    from redline.review.session_log import SessionLog, new_session_id
    from redline.workspace.journal import ensure_state_dir, recover

    if getattr(args, "model", None):
        return _error(args, "--agent and --model exclude each other: pick one", 2)
    if args.resolver == "agent":
        return _error(
            args,
            "--resolver agent does not apply to --agent: the external agent has no "
            "resolve tool; use human, apply-all or discard-all",
            2,
        )
    args.resolver = args.resolver or "human"
    wait = bool(getattr(args, "wait", False))
    resume = bool(getattr(args, "resume", False))
    if wait and args.resolver != "human":
        return _error(
            args,
            f"--wait waits for a person's review; --resolver {args.resolver} resolves "
            "everything itself: drop one of them",
            2,
        )
    if getattr(args, "session", None) is not None and not resume:
        return _error(args, "--session ID needs --resume", 2)
    from redline.config import find_workspace_root

    cwd = find_workspace_root(Path.cwd()) if args.cwd is None else Path(args.cwd).expanduser()
    if not cwd.is_dir():
        return _error(args, f"workspace {cwd}: not a folder", 2)
    if args.prompt is not None and not args.prompt.strip():
        return _error(args, "--prompt TEXT must not be empty", 2)
    if not resume and not args.prompt:
        return _error(args, "--prompt TEXT is required (or --resume)", 2)
    root = cwd.resolve()
    try:
        spec = resolve_agent(args.agent, root, trusted=True if args.trust else None)
    except AgentSpecError as exc:
        return _error(args, str(exc), 2)
    try:
        state_dir = ensure_state_dir(root)
    except OSError as exc:
        return _error(args, f"cannot use {root / '.redline'}: {exc}", 1)
    for message in recover(root):
        print(f"redline: {message}", file=sys.stderr)
    history: AcpHistory | None = None
    if resume:
        from redline.drivers.acp.resume import load_acp_history
        from redline.review.session_log import ResumeError, session_log_path
        from redline.workspace.queue import QueueError, WorkspaceQueue

        try:
            with WorkspaceQueue(root) as queue:
                log_path = session_log_path(root, args.session, source="exec")
                history = load_acp_history(root, log_path, queue)
                waiting = queue.session_view(history.session_id).list()
        except ResumeError as exc:
            return _error(args, str(exc), 2)
        except (QueueError, OSError) as exc:
            return _error(args, str(exc), 1)
        if waiting:
            ids = ", ".join(record.id for record in waiting)
            print(
                f"redline exec: session {history.session_id} still has pending actions "
                f"({ids}); resolve them (redline pending) and resume again",
                file=sys.stderr,
            )
            return EXIT_STATUS["awaiting_review"]
    if history is not None:
        from redline.commands._common import resume_line

        line = resume_line(history.session_id, args.session, len(history.unreported))
        print(line, file=sys.stderr if args.json else sys.stdout, flush=True)
    sid = history.session_id if history is not None else new_session_id()
    stream = EventStream(sid)
    log = SessionLog(
        state_dir / "sessions" / f"{sid}.jsonl",
        {
            "session_id": sid,
            "agent": spec.display_name,
            "command": list(spec.argv),
            "cwd": str(root),
            "resolver": args.resolver,
            "kind": "acp",
            "source": "exec",
        },
    )
    stream.subscribe(log.write_event)
    printer = EventPrinter(sys.stdout)
    reader_gone = False

    def listener(event: Event) -> None:
        nonlocal reader_gone
        if reader_gone:
            return
        try:
            if args.json:
                print(json.dumps(event.to_dict(), ensure_ascii=False), flush=True)
            else:
                printer(event)
        except BrokenPipeError:
            reader_gone = True

    stream.subscribe(listener)
    from redline.workspace.queue import QueueError

    try:
        store = queue_store(root, spec, sid)
    except (OSError, QueueError) as exc:
        log.close()
        return _error(args, f"cannot use the review queue in {root / '.redline'}: {exc}", 1)
    from redline.review.unseen import watch_store

    # With no dashboard watching, the person hears of each action left for review.
    told = watch_store(root, store)
    # User rules always; the workspace's only when it is trusted (or --trust).
    rules = RuleSet(root, trusted=True if args.trust else None)
    run = AcpRun(
        root,
        spec,
        args.resolver,
        stream,
        store,
        rules,
        offer_tools=bool(getattr(args, "offer_tools", False)),
        wait=wait,
        history=history,
    )
    try:
        status = asyncio.run(run.run(args.prompt))
    except KeyboardInterrupt:
        status = "aborted"
    finally:
        told()  # what still waits is told now: the process ends next
        log.close()
    if status == "awaiting_review" and not args.json and not reader_gone:
        from redline.termtext import one_line
        from redline.workspace.preview import display_diff

        for action in run.store.snapshot():
            if action.preview is not None:
                diff = display_diff(action.preview)[0]
                print(f"\n{action.id} {one_line(action.label)}\n{diff}", end="")
    return EXIT_STATUS.get(status, 1)
