"""AgentSession: the agent loop, with pending actions as first-class state.

The loop runs on an event loop the session owns (:class:`LoopThread`); the public methods
are synchronous and may be called from any thread. Every resolution — the model's
``resolve`` call, :meth:`AgentSession.resolve`, the dashboard's buttons, the
``apply-all``/``discard-all`` resolvers — goes through :meth:`AgentSession._resolve`,
which calls :func:`redline.review.resolve.resolve_pending`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from redline.drivers.model.providers.base import (
    Message,
    Provider,
    ToolSpec,
)
from redline.drivers.model.turns import (
    DEFAULT_SYSTEM_PROMPT,
    PREVIEW_REMINDER,
    RESOLVE_FIRST,
    RESOLVE_REFUSED,
    RESOLVERS,
    Resolution,
    Resolver,
    SessionError,
    TurnLoop,
    _maybe_await,
    preview_diffs,
    resolution_reminder,
)
from redline.extensibility.custom_tools import PluginError
from redline.extensibility.isolation import wait_interruptibly
from redline.extensibility.plugins import PluginHost
from redline.review.decide import repreview_any
from redline.review.events import (
    AgentState,
    Event,
    EventListener,
    EventStream,
    PendingPushed,
    PendingRebased,
    PendingReplaced,
    PendingStale,
    ResolvedBy,
    RunStatus,
    event_from_dict,
)
from redline.review.loop_thread import LoopThread
from redline.review.resolve import (
    EditOutcome,
    ResolveOutcome,
    resolve_pending,
)
from redline.review.result import ToolResult
from redline.review.session import Capabilities, Decision, ReviewSession, Verb
from redline.review.session_log import SessionLog
from redline.review.store import PendingAction, PendingActionStore, StoreEvent
from redline.tools.base import Tool
from redline.tools.resolve import ResolveTool
from redline.workspace.queue import Resolution as QueueResolution
from redline.workspace.queue import WorkspaceQueue

if TYPE_CHECKING:
    from redline.jsontypes import JsonValue
    from redline.review.provenance import GitBatch
    from redline.rules import RuleSet

log = logging.getLogger(__name__)


class AgentSession(TurnLoop):
    """One agent working in one workspace, with its pending stack, tools and plugins.

    Usually made by :func:`redline.sdk.create_agent_session`. Public methods are
    synchronous and thread-safe; the loop runs on the session's own event loop thread.

    Args:
        cwd: the workspace root.
        provider: the model.
        tools: the built-in tools (plugins are added by :attr:`plugins`).
        resolver: who resolves pending actions: ``agent``, ``human``, ``apply-all`` or
            ``discard-all``.
        store: the pending stack (a fresh one if omitted).
        stream: the event stream everything is reported on.
        system_prompt: replaces the default system prompt.
        max_turns: model turns per run before it stops with ``max_turns``.
        session_log: where events are recorded (none if omitted).
        recovery_messages: what recovering the journal at start did, for people to read.

    Raises:
        ValueError: an unknown resolver.
    """

    #: The workspace root.
    cwd: Path
    #: The model.
    provider: Provider
    #: Who resolves pending actions.
    resolver: Resolver
    #: The pending stack.
    store: PendingActionStore
    #: The event stream (subscribe with :meth:`subscribe`).
    events: EventStream
    #: The stream's session id (also the session log's name).
    session_id: str
    #: Model turns per run before it stops with ``max_turns``.
    max_turns: int
    #: What recovering the journal at start did (rolled back or finished applies).
    recovery_messages: list[str]
    #: The custom tools: loading, hot reload, load errors and the untrusted folder.
    plugins: PluginHost
    #: Where the agent is: ``idle``, ``running``, ``awaiting_review``, ``stopped``, ``failed``.
    status: str
    #: How the last run ended (``None`` before the first run).
    last_status: RunStatus | None

    def __init__(
        self,
        *,
        cwd: Path,
        provider: Provider,
        tools: Sequence[Tool],
        resolver: Resolver = "agent",
        store: PendingActionStore | None = None,
        stream: EventStream,
        system_prompt: str | None = None,
        max_turns: int = 50,
        session_log: SessionLog | None = None,
        recovery_messages: Sequence[str] = (),
        rules: RuleSet | None = None,
    ) -> None:
        if resolver not in RESOLVERS:
            raise ValueError(
                f"unknown resolver {resolver!r}: expected one of {', '.join(RESOLVERS)}"
            )
        self.cwd = cwd
        self.provider = provider
        self.resolver: Resolver = resolver
        self.store = store if store is not None else PendingActionStore()
        # Review rules decide freshly pushed actions first (redline.rules); None: no rules.
        self.rules = rules
        self.events = stream
        self.session_id = stream.session_id
        self.max_turns = max_turns
        self.recovery_messages = list(recovery_messages)
        self.plugins = PluginHost(
            cwd=cwd,
            store=self.store,
            emit=self._plugin_event,
            add_tool=self.add_tool,
            remove_tool=self.remove_tool,
        )
        self.state: AgentState = AgentState.IDLE
        self.last_status: RunStatus | None = None
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self._tools[tool.name] = tool
        self._resolve_tool = ResolveTool()
        self._messages: list[Message] = [
            Message("system", system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT)
        ]
        self._loop = LoopThread()
        self._state_lock = threading.RLock()
        self._run_future: concurrent.futures.Future[RunStatus] | None = None
        self._run_task: asyncio.Task[RunStatus] | None = None
        self._abort_requested = False
        self._unreported: list[Resolution] = []
        self._reminder_due = False
        self._choice_level = 0 if provider.can_force_tool else 1
        self._log = session_log
        self._closed = False
        self._on_close: list[Callable[[], None]] = []
        #: Put each file's unified diff on ``pending_pushed`` events (``exec --resolver human``).
        self.event_diffs = False
        #: The review core: every resolution, undo and staleness check of this session.
        self.review = ReviewSession(cwd, self.store, stream)
        # redline's own runtime: its decisions are ``exec``'s unless a client says (the
        # dashboard does), and the model behind its edits is its provider's.
        self.review.via = "exec"
        model = getattr(provider, "model", None)
        if not isinstance(model, str) or not model:
            model = provider.label if provider.scripted else None
        self.review.model = model
        self.review.on_remote = self._heard_remote
        self.review.on_undone = self._heard_undo
        if session_log is not None:
            self.events.subscribe(session_log.write_event)
        self.store.subscribe(self._on_store_event)

    # -- public, thread-safe API ---------------------------------------------------
    @property
    def plugin_errors(self) -> list[PluginError]:
        """Every plugin that failed to load or reload (also sent as ``plugin_error`` events)."""
        return self.plugins.errors

    @property
    def untrusted_plugin_dir(self) -> Path | None:
        """The project plugin folder left unloaded because the workspace is not trusted."""
        return self.plugins.untrusted_dir

    @property
    def model_label(self) -> str:
        """The model as people see it (credentials in a base URL are never shown)."""
        if self.provider.scripted:
            return f"{self.provider.label} (scripted run — calls no language model)"
        return self.provider.label

    @property
    def scripted(self) -> bool:
        """Whether the model is a scripted plan (no language model is called)."""
        return self.provider.scripted

    @property
    def running(self) -> bool:
        """Whether a run is active."""
        with self._state_lock:
            return self._run_future is not None and not self._run_future.done()

    @property
    def tools(self) -> list[Tool]:
        """Every tool the model may call, ``resolve`` last (it is hidden from people)."""
        return [*self._current_tools(), self._resolve_tool]

    def subscribe(self, listener: EventListener, *, replay: bool = False) -> Callable[[], None]:
        """Receive every event from now on.

        Args:
            listener: called with each :class:`Event`, in order, from the emitting thread.
            replay: first deliver the events sent before the first run started (plugin
                load errors and output), so a late subscriber misses nothing.

        Returns:
            A function that unsubscribes ``listener``.
        """
        return self.events.subscribe(listener, replay=replay)

    def prompt(self, text: str) -> RunStatus:
        """Send ``text`` to the agent and block until the run ends.

        Args:
            text: the task or follow-up message.

        Returns:
            How the run ended: ``done``, ``awaiting_review``, ``aborted``, ``error`` or
            ``max_turns``.

        Raises:
            ValueError: ``text`` is empty.
            SessionError: a run is already active, or the session is closed.
        """
        return wait_interruptibly(self.start_prompt(text))

    def start_prompt(self, text: str) -> concurrent.futures.Future[RunStatus]:
        """Like :meth:`prompt`, without blocking: the future resolves when the run ends.

        An asyncio program awaits it with ``asyncio.wrap_future``.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the prompt must be a non-empty string")
        return self._start_run(text)

    def resume(self) -> RunStatus:
        """Continue a run that ended awaiting review, once every action is resolved.

        Returns:
            ``awaiting_review`` at once while actions are pending, else the new run's status.

        Raises:
            SessionError: the last run did not end awaiting review.
        """
        return wait_interruptibly(self.start_resume())

    def start_resume(self) -> concurrent.futures.Future[RunStatus]:
        """Like :meth:`resume`, without blocking."""
        if self.store.has_pending:
            done: concurrent.futures.Future[RunStatus] = concurrent.futures.Future()
            done.set_result("awaiting_review")
            return done
        if self.last_status != "awaiting_review":
            raise SessionError("nothing to resume: the last run did not end awaiting review")
        return self._start_run(None)

    def resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None = None,
        by: ResolvedBy = "human",
        only: Sequence[str] | None = None,
        batch: GitBatch | None = None,
    ) -> ResolveOutcome:
        """Apply or discard an action, or part of it (the path the model's resolve call takes).

        Args:
            action: ``apply`` or ``discard``.
            reason: why; shown to people and the agent, passed to the action's callback.
            action_id: the action to resolve, anywhere on the stack (default: the top). If
                it is no longer pending nothing runs and the outcome names its replacement.
            by: who decided (``human``, ``agent`` or ``auto``), for the event.
            only: ``PATH#N`` / ``PATH`` parts of its Preview; the rest stays pending as a
                new action in the same place.
            batch: collects an apply for one ``[git] on_apply`` commit of several actions
                (:func:`redline.review.provenance.finish_batch` makes it).

        Returns:
            A :class:`~redline.review.resolve.ResolveOutcome`: ``outcome.kind`` says whether
            it was applied, discarded, failed (nothing changed), refused because the top
            changed, or invalid; ``outcome.text`` is what the model would read. Closing
            the session while a callback never returns ends the wait with a failed
            outcome (the callback is abandoned).
        """
        if self._closed:
            return ResolveOutcome(
                "invalid", "The session is closed; nothing was applied or discarded."
            )
        try:
            return self._loop.run(self._resolve(action, reason, action_id, by, only, batch=batch))
        except concurrent.futures.CancelledError:
            return ResolveOutcome(
                "failed",
                "The session closed before the action was resolved; its callback was abandoned.",
            )

    @property
    def capabilities(self) -> Capabilities:
        """What this session offers a client for its own actions (all of it; session
        rules when it has review rules)."""
        return Capabilities(rules=self.rules is not None)

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome:
        """Decide any pending action of the workspace, whoever queued it: this session's
        own as :meth:`resolve` does, another process's through its queue claim (see
        :meth:`redline.review.session.ReviewSession.decide`)."""
        if self._closed:
            return ResolveOutcome(
                "invalid", "The session is closed; nothing was applied or discarded."
            )
        store = self.store
        if store.queue is None or store.get(action_id) or store.replaced_by(action_id):
            return self.resolve(
                decision.verb,
                decision.reason,
                action_id,
                decision.by,
                decision.only,
                batch=decision.batch,
            )
        return self._loop.run(self.review.decide(action_id, decision))

    def can_undo(self) -> bool:
        """Whether the workspace has an apply to undo, whoever made it."""
        from redline.workspace.journal import undo_history

        return bool(undo_history(self.cwd))

    def waiting_only_on_review(self) -> bool | None:
        """None: the model runs here, there is no external agent to ask."""
        return None

    def edit(self, action_id: str, path: str, text: str) -> EditOutcome:
        """Replace ``path``'s proposed content in ``action_id`` with a person's ``text``.

        Saving text equal to the proposal changes nothing (``unchanged``). Otherwise the
        action is replaced by an edited one (new id, ``edited``); applying it tells the
        model the diff from its proposal to what was written. A ``.py`` file that no longer
        parses is allowed; ``outcome.warnings`` says so.
        """
        if self._closed:
            return EditOutcome("invalid", "The session is closed; nothing was edited.", action_id)
        return self._loop.run(self.review.edit(action_id, path, text))

    def undo(self) -> ToolResult:
        """Undo the newest applied action through the journal; the agent is told."""
        return self.review.undo()

    def _heard_undo(self, entry_id: str, label: str, files: list[str], text: str) -> None:
        from redline.workspace.journal_states import action_of

        # The model knows actions by their pa-N; the journal's entry id is only a fallback.
        action_id = action_of(self.cwd, entry_id) or entry_id
        with self._state_lock:
            self._unreported.append(Resolution("undid", action_id, label, "", text))

    def _heard_remote(self, action: PendingAction, resolution: QueueResolution | None) -> None:
        assert resolution is not None
        done = "applied" if resolution.decision == "apply" else "discarded"
        with self._state_lock:
            self._unreported.append(
                Resolution(done, action.id, action.label, resolution.reason, resolution.result_text)
            )

    def abort(self) -> None:
        """Stop the running turn within a second (the model stream is closed).

        A tool call or apply that does not return is abandoned, not waited for.
        """
        with self._state_lock:
            self._abort_requested = True
            task = self._run_task
        if task is not None and not task.done():
            self._loop.loop.call_soon_threadsafe(task.cancel)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the current run to end.

        Args:
            timeout: seconds to wait at most (``None``: no limit).

        Returns:
            ``False`` if the run is still going after ``timeout``, else ``True``.
        """
        with self._state_lock:
            future = self._run_future
        if future is None:
            return True
        try:
            future.result(timeout)
        except TimeoutError:
            return False
        except BaseException:
            return True
        return True

    def repreview(self, action_id: str) -> ToolResult:
        """Recompute a pending action against the current files, in place on the stack.

        Args:
            action_id: the pending action to recompute.

        Returns:
            What happened; an error result when the action is unknown, cannot be
            re-previewed, or was resolved meanwhile.
        """
        action = self.store.get(action_id)
        if action is None and self.store.queue is not None:
            return repreview_any(self.store.queue, action_id)
        if action is None:
            return ToolResult.error(f"No pending action {action_id}.")
        if action.repreview is None:
            # No tool call to run again: its change merged onto the current files.
            return self._loop.run(self.review.repreview(action_id))
        try:
            fresh = self._loop.run(_maybe_await(action.repreview()))
        except Exception as exc:
            return ToolResult.error(f"Re-preview of {action.label} failed: {exc}")
        if not isinstance(fresh, PendingAction):
            return ToolResult.error(f"Re-preview of {action.label} did not return an action.")
        try:
            fresh = self.store.replace(action_id, fresh)
        except KeyError:
            return ToolResult.error(f"{action_id} was resolved meanwhile; nothing was replaced.")
        return ToolResult.text_result(f"Re-previewed {action_id} as {fresh.id}: {fresh.label}")

    def check_staleness(self, paths: set[str] | None = None) -> list[str]:
        """Mark pending previews whose files changed; returns the ids marked stale
        (see :meth:`redline.review.session.ReviewSession.check_staleness`)."""
        return self.review.check_staleness(paths)

    def restore(self, messages: Sequence[Message], unreported: Sequence[Resolution]) -> None:
        """Continue an earlier conversation (``exec --resume``): ``messages`` follow the
        system prompt, and ``unreported`` is told to the model before its next turn; the
        session then counts as awaiting review, so :meth:`resume` continues it."""
        with self._state_lock:
            if self.running:
                raise SessionError("a run is active; restore a conversation before running")
            self._messages[1:] = list(messages)
            self._unreported = [*unreported, *self._unreported]
            self.last_status = "awaiting_review"
            self.state = AgentState.WAITING_FOR_REVIEW

    # -- the workspace queue ------------------------------------------------------------
    @property
    def queue(self) -> WorkspaceQueue | None:
        """The workspace's review queue: every process's pending actions (see docs/sdk.md).

        ``None`` for a session made without a queue-backed store.
        """
        return self.store.queue

    def watch_queue(self) -> None:
        """Follow the workspace queue: learn resolutions made by other processes and serve
        their requests to run this session's owner actions. Stopped by :meth:`close`."""
        self.review.follow(self._loop.submit, journal=True)
        self.on_close(self.review.close)

    def trust_workspace(self) -> list[str]:
        """Trust this workspace's project plugins, remember it, and load them now.

        Returns:
            What was done, one line per step, for people to read.
        """
        return self.plugins.trust_workspace()

    def _plugin_event(self, kind: str, **fields: JsonValue) -> None:
        """Emit what the plugin host reports (``plugin_error``, ``plugin_loaded``,
        ``plugin_output``) as the typed event; the host sits below the agent layer, so it
        names the type and fields, and they are checked here when the event is built."""
        self.events.emit(event_from_dict({"type": kind, **fields}))

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the session closes (errors are logged, not raised)."""
        self._on_close.append(callback)

    def close(self) -> None:
        """Stop the run, stop watching plugins, and release the model and the loop.

        Returns within about two seconds even when plugin code never returns: a stuck
        ``execute`` or ``apply`` is abandoned (it runs in a daemon thread).
        """
        if self._closed:
            return
        self._closed = True
        self.abort()
        stopped = self.wait(1.0)
        # Resolutions waiting on a callback that never returns end too (see resolve()).
        self._loop.loop.call_soon_threadsafe(_cancel_all_tasks, self._loop.loop)
        self.plugins.stop_watching()
        for callback in self._on_close:
            try:
                callback()
            except Exception:
                log.exception("session close callback failed")
        if stopped:
            try:
                self._loop.run(self.provider.aclose(), timeout=1.0)
            except Exception:
                log.debug("provider close failed", exc_info=True)
        # A loop still busy in plugin code is left behind (its thread is a daemon).
        self._loop.close(timeout=0.5 if stopped else 0.1)
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> AgentSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tools ----------------------------------------------------------------------
    def add_tool(self, tool: Tool) -> None:
        """Offer ``tool`` to the model from the next turn on (replaces one of its name)."""
        with self._state_lock:
            self._tools[tool.name] = tool

    def remove_tool(self, name: str) -> None:
        """Stop offering the tool called ``name``; unknown names are ignored."""
        with self._state_lock:
            self._tools.pop(name, None)

    def _current_tools(self) -> list[Tool]:
        # Plugin reloads swap tools from the watcher thread; read a snapshot.
        with self._state_lock:
            return list(self._tools.values())

    def _offers_resolve(self) -> bool:
        return self.resolver == "agent" and any(t.deferrable for t in self._current_tools())

    def _tool_specs(self) -> tuple[ToolSpec, ...]:
        specs = [
            ToolSpec(t.name, t.description, t.parameters_schema()) for t in self._current_tools()
        ]
        if self._offers_resolve():
            tool = self._resolve_tool
            specs.append(ToolSpec(tool.name, tool.description, tool.parameters_schema()))
        return tuple(specs)

    # -- the run --------------------------------------------------------------------
    def _start_run(self, text: str | None) -> concurrent.futures.Future[RunStatus]:
        with self._state_lock:
            if self._closed:
                raise SessionError("the session is closed")
            if self.running:
                raise SessionError("a run is already active; wait for it or abort() it first")
            self._abort_requested = False
            self.state = AgentState.RUNNING
            future = self._loop.submit(self._run(text))
            self._run_future = future
        return future

    # -- the one resolution path ------------------------------------------------------
    async def _resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None,
        by: ResolvedBy,
        only: Sequence[str] | None = None,
        *,
        rule: str | None = None,
        batch: GitBatch | None = None,
    ) -> ResolveOutcome:
        if action not in ("apply", "discard"):
            return await resolve_pending(self.store, action, reason)  # the invalid outcome
        verb: Verb = "apply" if action == "apply" else "discard"
        outcome = await self.review.resolve(
            action_id,
            Decision(verb, reason, tuple(only) if only is not None else None, by, rule, batch),
        )
        # The model reads its own and the rules' resolutions in its tool result.
        if not outcome.is_error and by not in ("agent", "rule") and outcome.action is not None:
            done = "applied" if outcome.verb == "apply" else "discarded"
            with self._state_lock:
                self._unreported.append(
                    Resolution(
                        done, outcome.action.action_id, outcome.action.label, reason, outcome.text
                    )
                )
        return outcome

    def _on_store_event(self, event: StoreEvent) -> None:
        action = event.action
        if event.kind == "push" and action is not None:
            if self.store.count == 1:
                self._reminder_due = True
            self.events.emit(
                PendingPushed(
                    action_id=action.id,
                    label=action.label,
                    source_tool_name=action.source_tool_name,
                    preview=action.preview.summary() if action.preview is not None else None,
                    diffs=preview_diffs(action) if self.event_diffs else None,
                )
            )
        elif event.kind == "replace" and action is not None and event.previous is not None:
            if event.onto:
                self.events.emit(
                    PendingRebased(
                        old_action_id=event.previous.id, action_id=action.id, onto=event.onto
                    )
                )
            self.events.emit(
                PendingReplaced(
                    old_action_id=event.previous.id,
                    action_id=action.id,
                    label=action.label,
                    source_tool_name=action.source_tool_name,
                    preview=action.preview.summary() if action.preview is not None else None,
                )
            )
        elif event.kind == "stale" and action is not None:
            self.events.emit(
                PendingStale(
                    action_id=action.id, label=action.label, reason=action.stale_reason or ""
                )
            )


def _cancel_all_tasks(loop: asyncio.AbstractEventLoop) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel()


__all__ = [
    "PREVIEW_REMINDER",
    "RESOLVERS",
    "RESOLVE_FIRST",
    "RESOLVE_REFUSED",
    "AgentSession",
    "Event",
    "Resolution",
    "ResolvedBy",
    "Resolver",
    "SessionError",
    "resolution_reminder",
]
