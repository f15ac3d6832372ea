"""The dashboard's session over an external ACP agent (``redline --agent``).

It offers what the dashboard needs from a session (``redline.tui.protocol.SessionLike``):
the store, the event stream, prompt, resolve, undo, abort. The agent runs on a loop of
its own thread; a person's resolutions answer the agent's held requests while its turn
waits, and once the turn ends the agent hears every decision in one more prompt.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from redline.drivers.acp.client import AcpAgent, AcpError, Resolution, resolution_prompt
from redline.drivers.acp.events import AcpMessage, AcpStderr, AcpUsage
from redline.drivers.acp.run import MAX_PROMPTS, AcpRun, queue_store
from redline.drivers.acp.spec import AgentSpec
from redline.review.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    Event,
    EventStream,
    MessageDelta,
    MessageEnd,
    ResolvedBy,
    RunStatus,
)
from redline.review.loop_thread import LoopThread
from redline.review.resolve import EditOutcome, ResolveOutcome, resolve_pending
from redline.review.result import ToolResult
from redline.review.session import Capabilities, Decision, Verb

if TYPE_CHECKING:
    from redline.extensibility.custom_tools import PluginError
    from redline.review.provenance import GitBatch
    from redline.workspace.queue import WorkspaceQueue


class AcpSession:
    """One external agent, reviewed in the dashboard (the resolver is always a person)."""

    resolver = "human"
    scripted = False

    def __init__(
        self,
        root: Path,
        spec: AgentSpec,
        *,
        session_id: str | None = None,
        log_session: bool = True,
        trust: bool = False,
        offer_tools: bool = False,
    ) -> None:
        from redline.review.session_log import SessionLog, new_session_id
        from redline.workspace.journal import ensure_state_dir, recover

        self.cwd = root.resolve()
        self.spec = spec
        state_dir = ensure_state_dir(self.cwd)
        self.recovery_messages: list[str] = recover(self.cwd)
        self.plugin_errors: list[PluginError] = []
        self.untrusted_plugin_dir: Path | None = None
        sid = session_id or new_session_id()
        self.store = queue_store(self.cwd, spec, sid)
        self.events = EventStream(sid)
        self.session_id = sid
        self._log = None
        if log_session:
            self._log = SessionLog(
                state_dir / "sessions" / f"{sid}.jsonl",
                {
                    "session_id": sid,
                    "agent": spec.display_name,
                    "command": list(spec.argv),
                    "cwd": str(self.cwd),
                    "resolver": "human",
                    "kind": "acp",
                    "source": "dashboard",
                },
            )
            self.events.subscribe(self._log.write_event)
        self._loop = LoopThread("redline-acp")
        from redline.rules import RuleSet

        # Review rules: user rules always, the workspace's when trusted (or ``trust``).
        self.rules = RuleSet(self.cwd, trusted=True if trust else None)
        self._run = AcpRun(
            self.cwd, spec, "human", self.events, self.store, self.rules, offer_tools=offer_tools
        )
        self.agent.review.on_undone = self._heard_undo
        self._started = False
        self._closed = False
        self.last_status: RunStatus | None = None

    @property
    def agent(self) -> AcpAgent:
        return self._run.agent

    @property
    def model_label(self) -> str:
        return self.spec.display_name

    def subscribe(
        self, listener: Callable[[Event], None], *, replay: bool = False
    ) -> Callable[[], None]:
        """Events as the dashboard knows them: the agent's activity in the built-in
        vocabulary (text deltas, tool starts and ends); the stream itself is unchanged."""
        return self.events.subscribe(_DashboardView(listener), replay=replay)

    # -- runs --------------------------------------------------------------------------
    def prompt(self, text: str) -> RunStatus:
        return self.start_prompt(text).result()

    def start_prompt(self, text: str) -> concurrent.futures.Future[RunStatus]:
        """Prompt the agent without blocking: the future resolves when the run ends."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the prompt must be a non-empty string")
        return self._loop.submit(self._prompt(text))

    def resume(self) -> RunStatus:
        return self.start_resume().result()

    def start_resume(self) -> concurrent.futures.Future[RunStatus]:
        """Tell the agent what was decided since its turn ended (``done`` when nothing)."""
        report = self.agent.take_unreported()
        if not report:
            done: concurrent.futures.Future[RunStatus] = concurrent.futures.Future()
            done.set_result("done")
            return done
        text = resolution_prompt(report)
        self._run.told(report, text)
        return self._loop.submit(self._prompt(text))

    async def _prompt(self, text: str) -> RunStatus:
        agent = self.agent
        self.events.emit(AgentStart(model=self.spec.display_name, resolver="human", prompt=text))
        status: RunStatus = "done"
        try:
            if not self._started:
                self._started = True
                await agent.start()
                self._run._remember_session()
                # `redline pending` in another process answers this agent's held requests.
                agent.watch_queue()
            for _ in range(MAX_PROMPTS):
                stop_reason = await agent.prompt(text)
                if stop_reason == "cancelled" and not agent.ended_by_reject(stop_reason):
                    status = "aborted"
                    break
                report: list[Resolution] = agent.take_unreported()
                if not report:
                    break
                text = resolution_prompt(report)
                self._run.told(report, text)
            else:
                status = "max_turns"
        except AcpError as exc:
            self.events.emit(ErrorEvent(str(exc)))
            status = "error"
        finally:
            self.last_status = status
            self.events.emit(AgentEnd(status=status, pending=self.store.count))
        return status

    def abort(self) -> None:
        """Stop the agent's turn (``session/cancel``); its held requests answer cancelled."""
        if self._started and not self._closed:
            self._loop.submit(self.agent.cancel())

    # -- review ------------------------------------------------------------------------
    def resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None = None,
        by: ResolvedBy = "human",
        only: Sequence[str] | None = None,
        batch: GitBatch | None = None,
    ) -> ResolveOutcome:
        if only:
            # The agent's request is answered once, for the whole change: a held write or a
            # permission cannot be granted for some hunks only.
            return ResolveOutcome(
                "invalid",
                "An external agent's change resolves only as a whole: apply or discard all of "
                "it (nothing was applied or discarded).",
                reason=reason,
            )
        return self._loop.run(self._resolve(action, reason, action_id, by, batch))

    # What the dashboard may offer for this agent's own actions: its held request is
    # answered once, for the whole change, so no parts, edits or re-previews of them.
    capabilities = Capabilities(parts=False, edit=False, repreview=False, rules=True)

    @property
    def queue(self) -> WorkspaceQueue | None:
        """The workspace queue (every process's actions)."""
        return self.store.queue

    def _mine(self, action_id: str) -> bool:
        store = self.store
        return store.queue is None or bool(store.get(action_id) or store.replaced_by(action_id))

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome:
        """Decide any pending action of the workspace: this agent's own as :meth:`resolve`
        does, another process's through its queue claim."""
        if self._mine(action_id):
            return self.resolve(
                decision.verb,
                decision.reason,
                action_id,
                decision.by,
                decision.only,
                decision.batch,
            )
        return self._loop.run(self.agent.review.decide(action_id, decision))

    def can_undo(self) -> bool:
        from redline.workspace.journal import undo_history

        return bool(undo_history(self.cwd))

    def waiting_only_on_review(self) -> bool | None:
        return self.agent.waiting_only_on_review

    def edit(self, action_id: str, path: str, text: str) -> EditOutcome:
        """Editing is not offered for an external agent's change (its reply is the agent's);
        another process's action is edited through its queue claim."""
        if not self._mine(action_id):
            return self._loop.run(self.agent.review.edit(action_id, path, text))
        return EditOutcome(
            "invalid",
            "An external agent's change cannot be edited before it lands: discard it with a "
            "reason and the agent hears why.",
            action_id,
        )

    async def _resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None,
        by: ResolvedBy,
        batch: GitBatch | None = None,
    ) -> ResolveOutcome:
        if action not in ("apply", "discard"):
            return await resolve_pending(self.store, action, reason)  # the invalid outcome
        verb: Verb = "apply" if action == "apply" else "discard"
        return await self.agent.review.resolve(
            action_id, Decision(verb, reason, by=by, batch=batch)
        )

    def apply_rules(self) -> list[str]:
        """Let the review rules decide what is already waiting (after a session rule)."""
        return self._loop.run(self.agent.apply_rules())

    def undo(self) -> ToolResult:
        return self.agent.review.undo()

    def _heard_undo(self, entry_id: str, label: str, files: list[str], text: str) -> None:
        from redline.workspace.journal_states import action_of

        action_id = action_of(self.agent.root, entry_id) or entry_id
        with self.agent._lock:
            self.agent._unreported.append(Resolution(label, "undone", "", action_id))

    def repreview(self, action_id: str) -> ToolResult:
        queue = self.store.queue
        if queue is not None and not self._mine(action_id):
            from redline.review.decide import repreview_any

            return repreview_any(queue, action_id)
        return ToolResult.error(
            "Re-preview is not available for an external agent's actions; discard it and "
            "ask the agent again."
        )

    def check_staleness(self, paths: set[str] | None = None) -> list[str]:
        return self.agent.review.check_staleness(paths)

    def trust_workspace(self) -> list[str]:
        return []

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._started:
            with contextlib.suppress(Exception):
                self._loop.run(self.agent.close(), timeout=10.0)
        self._loop.close()
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> AcpSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _DashboardView:
    """The agent's text as the dashboard streams it (``message_delta``, ``message_end``);
    every other event, the ``Acp*`` ones included, passes through unchanged."""

    def __init__(self, listener: Callable[[Event], None]) -> None:
        self.listener = listener
        self.streaming = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, AcpMessage):
            self.streaming = True
            self.listener(_stamped(MessageDelta(event.text), event))
            return
        if self.streaming and not isinstance(event, (AcpStderr, AcpUsage)):
            self.streaming = False
            self.listener(_stamped(MessageEnd(""), event))
        self.listener(event)


def _stamped(event: Event, like: Event) -> Event:
    return dataclasses.replace(event, seq=like.seq, time=like.time, session_id=like.session_id)
