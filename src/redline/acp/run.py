"""``redline exec --agent``: one prompt to an external ACP agent, headless.

Exit statuses as for the built-in runtime: 0 done, 3 awaiting review, 1 error, 2 bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from redline.acp.client import AcpAgent, AcpError, resolution_prompt
from redline.acp.events import AcpNotice
from redline.acp.spec import AgentSpec, AgentSpecError, resolve_agent
from redline.agent.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    Event,
    EventStream,
    Notice,
    PendingPushed,
    PendingReplaced,
    RunStatus,
)
from redline.agent.render import EventPrinter
from redline.agent.session import resolution_event
from redline.rules import RuleSet
from redline.tools.pending_action import PendingAction, PendingActionStore, StoreEvent
from redline.tools.resolve import resolve_pending

EXIT_STATUS = {"done": 0, "awaiting_review": 3, "aborted": 1, "error": 1, "max_turns": 1}
AUTO_REASONS = {
    "apply-all": "auto-applied by --resolver apply-all",
    "discard-all": "auto-discarded by --resolver discard-all",
}
RESOLVERS = ("human", "apply-all", "discard-all")
# Prompts in one run: the task, then one per batch of resolutions the agent is told about.
MAX_PROMPTS = 20


def _pending_pushed(action: PendingAction) -> PendingPushed:
    return PendingPushed(
        action_id=action.id,
        label=action.label,
        source_tool_name=action.source_tool_name,
        preview=action.preview.summary() if action.preview is not None else None,
    )


def queue_store(root: Path, spec: AgentSpec, session_id: str) -> PendingActionStore:
    """The session's store, persisted in the workspace queue (``.redline/queue/``).

    Held writes and verified diffs are preview actions there: they outlive the agent and
    this process, and ``redline pending`` applies them later. Other permission requests
    are owner actions; they end with the agent.
    """
    from redline.workspace.queue import Source, WorkspaceQueue

    return PendingActionStore(
        queue=WorkspaceQueue(root),
        source=Source.current("acp", f"{spec.display_name} via ACP", session_id),
    )


class AcpRun:
    """One headless run: the agent, the store, the resolver and the event stream."""

    def __init__(
        self,
        root: Path,
        spec: AgentSpec,
        resolver: str,
        stream: EventStream,
        store: PendingActionStore | None = None,
        rules: RuleSet | None = None,
        *,
        offer_tools: bool = False,
    ) -> None:
        self.root = root
        self.spec = spec
        self.resolver = resolver
        self.events = stream
        self.store = store if store is not None else PendingActionStore()
        self.store.subscribe(self._on_store_event)
        # apply-all / discard-all decide everything themselves: rules do not run there.
        self.rules = rules if resolver not in AUTO_REASONS else None
        self.agent = AcpAgent(
            root, spec, store=self.store, stream=stream, rules=self.rules, offer_tools=offer_tools
        )

    def _on_store_event(self, event: StoreEvent) -> None:
        action = event.action
        if event.kind == "push" and action is not None:
            self.events.emit(_pending_pushed(action))
        elif event.kind == "replace" and action is not None and event.previous:
            pushed = _pending_pushed(action)
            self.events.emit(
                PendingReplaced(
                    old_action_id=event.previous.id,
                    action_id=pushed.action_id,
                    label=pushed.label,
                    source_tool_name=pushed.source_tool_name,
                    preview=pushed.preview,
                )
            )

    async def _resolve_all(self) -> bool:
        action = "apply" if self.resolver == "apply-all" else "discard"
        reason = AUTO_REASONS[self.resolver]
        while self.store.has_pending:
            outcome = await resolve_pending(self.store, action, reason)
            event = resolution_event(outcome, "auto")
            if event is not None:
                self.events.emit(event)
            if outcome.is_error:
                self.events.emit(ErrorEvent(outcome.text))
                return False
        return True

    async def _turn(self, text: str) -> RunStatus | None:
        """One prompt; returns a run status, or None when the turn ended normally."""
        agent = self.agent
        task = asyncio.create_task(agent.prompt(text))
        try:
            while True:
                agent.changed.clear()
                if task.done():
                    break
                if self.store.has_pending:
                    if self.resolver in AUTO_REASONS:
                        if not await self._resolve_all():
                            await agent.cancel()
                            await asyncio.wait({task}, timeout=10.0)
                            return "error"
                        continue
                    if agent.waiting_only_on_review:
                        return "awaiting_review"
                waiter = asyncio.create_task(agent.changed.wait())
                await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
            try:
                stop_reason = task.result()
            except AcpError as exc:
                self.events.emit(ErrorEvent(str(exc)))
                return "error"
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=10.0)
        if stop_reason == "cancelled":
            return "aborted"
        if self.store.has_pending and self.resolver == "human":
            return "awaiting_review"
        return None

    async def run(self, prompt: str) -> RunStatus:
        self.events.emit(
            AgentStart(model=self.spec.display_name, resolver=self.resolver, prompt=prompt)
        )
        status: RunStatus = "error"
        try:
            status = await self._run(prompt)
        except asyncio.CancelledError:
            status = "aborted"
            await self.agent.cancel()
            raise
        finally:
            await self.agent.close()
            self.events.emit(AgentEnd(status=status, pending=self.store.count))
        return status

    async def _run(self, prompt: str) -> RunStatus:
        try:
            await self.agent.start()
        except AcpError as exc:
            self.events.emit(ErrorEvent(str(exc)))
            return "error"
        info = f" ({self.agent.agent_info})" if self.agent.agent_info else ""
        self.events.emit(
            AcpNotice(
                message=f"{self.spec.display_name}{info}: session {self.agent.acp_session_id}",
                acp_session_id=self.agent.acp_session_id,
            )
        )
        text = prompt
        for _ in range(MAX_PROMPTS):
            status = await self._turn(text)
            if status is not None:
                if status == "awaiting_review":
                    # Stop the agent: held permission requests end with it, held writes
                    # stay pending (their Preview is what the agent asked to write).
                    await self.agent.cancel()
                return status
            report = self.agent.take_unreported()
            if not report:
                return "done"
            text = resolution_prompt(report)
            self.events.emit(Notice(f"Told the agent:\n{text}"))
        return "max_turns"


def _error(args: argparse.Namespace, message: str, code: int) -> int:
    if args.json:
        event = ErrorEvent(message, time=time.time())
        print(json.dumps(event.to_dict()), flush=True)
    print(f"redline exec: {message}", file=sys.stderr)
    return code


def run_exec(args: argparse.Namespace) -> int:
    """``redline exec --agent``: the part of exec_.run for external agents."""
    from redline.agent.session_log import SessionLog
    from redline.sdk import new_session_id
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
    from redline.config import find_workspace_root

    cwd = find_workspace_root(Path.cwd()) if args.cwd is None else Path(args.cwd).expanduser()
    if not cwd.is_dir():
        return _error(args, f"workspace {cwd}: not a folder", 2)
    if not args.prompt or not args.prompt.strip():
        return _error(args, "--prompt TEXT is required", 2)
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
    sid = new_session_id()
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
    )
    try:
        status = asyncio.run(run.run(args.prompt))
    except KeyboardInterrupt:
        status = "aborted"
    finally:
        log.close()
    if status == "awaiting_review" and not args.json and not reader_gone:
        for action in run.store.snapshot():
            if action.preview is not None:
                print(f"\n{action.id} {action.label}\n{action.preview.diff()}", end="")
    return EXIT_STATUS.get(status, 1)
