"""``redline exec --agent``: one prompt to an external ACP agent, headless.

Exit statuses as for the built-in runtime: 0 done, 3 awaiting review, 1 error, 2 bad input.

``--wait`` keeps the agent running while it waits on review: another process (the
dashboard, ``redline pending``) resolves the session's actions, the held requests are
answered as a local resolution would answer them, and the run goes on. Ctrl-C while
waiting ends the run as it would have ended without ``--wait``: the agent is stopped, the
held writes and verified diffs stay queued, and the status is 3.

``--resume`` continues the workspace's latest session (or ``--session ID``): through
``session/load`` when the agent offers it, else in a new session whose first prompt lists
the resolutions the agent has not heard of (see :mod:`redline.drivers.acp.resume`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from redline.drivers.acp.client import AcpAgent, AcpError, Resolution, resolution_prompt
from redline.drivers.acp.events import AcpNotice
from redline.drivers.acp.resume import AcpHistory, new_session_prompt
from redline.drivers.acp.spec import AgentSpec
from redline.review.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    EventStream,
    Notice,
    PendingPushed,
    PendingReplaced,
    RunStatus,
)
from redline.review.session import Decision, Verb
from redline.review.store import PendingAction, PendingActionStore, StoreEvent
from redline.rules import RuleSet

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
        source=Source.current("acp", spec.display_name, session_id),
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
        wait: bool = False,
        history: AcpHistory | None = None,
    ) -> None:
        self.root = root
        self.spec = spec
        self.resolver = resolver
        # --wait: keep the agent running while another process reviews its actions.
        self.wait = wait and resolver == "human"
        self.history = history
        # True while the run waits on review only (Ctrl-C then ends it as awaiting review).
        self.waiting = False
        self._announced: frozenset[str] = frozenset()
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
        action: Verb = "apply" if self.resolver == "apply-all" else "discard"
        reason = AUTO_REASONS[self.resolver]
        while self.store.has_pending:
            outcome = await self.agent.review.resolve(None, Decision(action, reason, by="auto"))
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
                        if not self.wait:
                            # Stop the turn the ACP way before the process is closed: held
                            # permissions answer "cancelled", then session/cancel, and the
                            # agent ends its prompt (so it hears those answers).
                            await agent.cancel()
                            await asyncio.wait({task}, timeout=10.0)
                            return "awaiting_review"
                        self._announce_wait()
                self.waiting = self.wait and agent.waiting_only_on_review
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
            else:
                self.waiting = False
        if stop_reason == "cancelled" and not agent.ended_by_reject(stop_reason):
            return "aborted"
        if self.store.has_pending and self.resolver == "human":
            if not self.wait:
                return "awaiting_review"
            await self._wait_resolved()
        return None

    def _announce_wait(self) -> None:
        """Say once per set of actions what the run waits for and how to end the wait."""
        ids = frozenset(action.id for action in self.store.snapshot())
        if ids == self._announced:
            return
        self._announced = ids
        listed = ", ".join(sorted(ids, key=lambda i: (len(i), i)))
        self.events.emit(
            Notice(
                f"Waiting for review of {listed}: resolve with `redline pending apply|discard "
                "ID --reason TEXT` or in the dashboard. Ctrl-C stops the agent and leaves "
                "them pending."
            )
        )

    async def _wait_resolved(self) -> None:
        """The turn ended with actions pending: wait until another process resolves them."""
        agent = self.agent
        while self.store.has_pending:
            agent.changed.clear()
            if not self.store.has_pending:
                break
            self._announce_wait()
            self.waiting = True
            await agent.changed.wait()
        self.waiting = False

    async def run(self, prompt: str | None) -> RunStatus:
        self.events.emit(
            AgentStart(model=self.spec.display_name, resolver=self.resolver, prompt=prompt)
        )
        status: RunStatus = "error"
        try:
            status = await self._run(prompt)
            if status == "done" and self._left_in_queue():
                status = "awaiting_review"
        except asyncio.CancelledError:
            await self.agent.cancel()
            if not self.waiting:
                status = "aborted"
                raise
            # Ctrl-C while only waiting on review: end as exec without --wait would have.
            status = "awaiting_review"
            self.events.emit(Notice("Interrupted while waiting for review: the agent was stopped."))
        finally:
            await self.agent.close()
            self.events.emit(AgentEnd(status=status, pending=self.store.count))
        return status

    def _left_in_queue(self) -> bool:
        """Does the session still have actions in the workspace queue? (The rest of one
        another process resolved only in part is queued there, not held by the agent.)"""
        queue = self.store.queue
        if queue is None or self.resolver != "human":
            return False
        from redline.workspace.queue import QueueError

        try:
            return queue.session_view(self.events.session_id).has_pending
        except QueueError:
            return False

    async def _run(self, prompt: str | None) -> RunStatus:
        history = self.history
        try:
            await self.agent.start(history.acp_session_id if history is not None else None)
        except AcpError as exc:
            self.events.emit(ErrorEvent(str(exc)))
            return "error"
        agent = self.agent
        info = f" ({agent.agent_info})" if agent.agent_info else ""
        how = "loaded session" if agent.loaded else "session"
        self.events.emit(
            AcpNotice(
                message=f"{self.spec.display_name}{info}: {how} {agent.acp_session_id}",
                acp_session_id=agent.acp_session_id,
            )
        )
        self._remember_session()
        if self.resolver == "human":
            # Another process may resolve what the agent holds (it waits on review only
            # with --wait; otherwise, while it works on, or until the run ends).
            agent.watch_queue()
        text = self._first_prompt(prompt)
        if text is None:
            self.events.emit(
                Notice("Nothing to tell the agent: no resolution since it last heard.")
            )
            return "done"
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
            self.told(report, text)
        return "max_turns"

    def told(self, report: list[Resolution], text: str) -> None:
        """Log the resolution prompt (a resumed session reports only what came after)."""
        self.events.emit(
            AcpNotice(
                message=f"Told the agent:\n{text}", told=tuple(item.action_id for item in report)
            )
        )

    def _remember_session(self) -> None:
        from redline.drivers.acp.resume import record_acp_session

        try:
            record_acp_session(
                self.root, self.events.session_id, self.agent.acp_session_id, self.spec.name
            )
        except (OSError, ValueError) as exc:
            self.events.emit(Notice(f"The ACP session cannot be resumed later: {exc}"))

    def _first_prompt(self, prompt: str | None) -> str | None:
        """The task; on resume, what the agent missed (and the new task, if any)."""
        history = self.history
        if history is None:
            return prompt
        report = history.unreported
        if not self.agent.loaded:
            # A new session: its first prompt says what happened to the earlier requests.
            if not report and not prompt:
                return None
            text = new_session_prompt(report, prompt)
        elif report:
            text = resolution_prompt(report) + (f"\n\n{prompt}" if prompt else "")
        else:
            return prompt
        if report:
            self.told(report, text)
        return text
