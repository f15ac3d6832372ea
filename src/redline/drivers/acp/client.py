"""redline as an ACP client: an external agent's edits become pending actions.

:class:`AcpAgent` spawns the agent (``agent-client-protocol`` does the JSON-RPC),
initializes it with file-system capabilities, opens a session on the workspace and
prompts it. The agent's requests map onto redline as docs/agents.md describes:

- ``fs/read_text_file``: confined to the workspace, ``line``/``limit`` honoured, a missing
  file answers empty content.
- ``fs/write_text_file``: confined; a pending action (``Write: <path>``, source tool
  ``acp:write_text_file``) whose reply is held until it is resolved. Apply writes through
  safe apply, discard answers ``Discarded by the reviewer: <reason>`` (``Discarded by rule
  <name>: <reason>`` when a review rule decided it). A write the person
  already approved in a permission request of a running tool call is applied at once.
- ``session/request_permission``: a pending action (source tool ``acp:<kind>``), with the
  full-file Preview when the tool call carries a diff. Apply selects ``allow_once``,
  discard ``reject_once``; ``cancelled`` only when the agent is stopped.

Review rules (docs/rules.md) decide each pushed action first, through the same store
path a person's apply or discard takes, credited ``by rule <name>``.

Every resolution is remembered until :meth:`AcpAgent.take_unreported` hands it over for
the prompt that tells the agent what happened (the permission outcome has no reason).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import acp
from acp import schema

from redline.drivers.acp import events as acp_events
from redline.drivers.acp.approvals import Approvals
from redline.drivers.acp.handler import AgentRequests
from redline.drivers.acp.held import (
    AGENT_STOPPED,
    DISCARDED,
    FILE_UNREADABLE,
    NOT_WRITTEN,
    OUTSIDE_WORKSPACE,
    PROTOCOL_VERSION,
    STDERR_TAIL,
    AcpError,
    AcpSource,
    Decision,
    HeldRequest,
    Resolution,
    _answer,
    _Approval,
    _describe_exit,
    _Outcome,
    _ToolCall,
    _version,
    outcome_is_final,
    rejected,
    resolution_prompt,
)
from redline.drivers.acp.mapping import (
    MappedChange,
    MappingError,
    codex_changes,
    confine,
    full_file_change,
    read_disk,
)
from redline.drivers.acp.spec import AgentSpec, redline_mcp_server
from redline.drivers.acp.wire import spawn_screened_agent
from redline.review.events import ErrorEvent, EventStream, Notice
from redline.review.result import ToolResult
from redline.review.session import Decision as ReviewDecision
from redline.review.session import ReviewSession
from redline.review.store import PendingAction, PendingActionStore, resolving_action
from redline.workspace import paths
from redline.workspace.details import DiffShown, FileChangeDetails, PermissionDetails
from redline.workspace.preview import Preview
from redline.workspace.realpath import canonical_preview

if TYPE_CHECKING:
    from redline.drivers.acp.events import SessionUpdate
    from redline.jsontypes import JsonObject
    from redline.rules import Decision as RuleDecision
    from redline.rules import RuleOutcome, RuleSet
    from redline.workspace.queue import Resolution as QueueResolution

log = logging.getLogger(__name__)


class AcpAgent(Approvals):
    """One external agent process and its ACP session on a workspace."""

    def __init__(
        self,
        root: Path,
        spec: AgentSpec,
        *,
        store: PendingActionStore,
        stream: EventStream,
        rules: RuleSet | None = None,
        offer_tools: bool = False,
    ) -> None:
        self.root = root.resolve()
        self.spec = spec
        self.store = store
        self.events = stream
        self.offer_tools = offer_tools
        # Review rules decide each pushed action first (docs/rules.md); None: no rules.
        self.rules = rules
        # The rule resolving an action right now, by action id (read by its callbacks).
        self._deciding_rule: dict[str, str] = {}
        self.acp_session_id = ""
        self.agent_info = ""
        self.load_session = False
        # The session was loaded (session/load), not created; updates meanwhile are a replay.
        self.loaded = False
        self._replaying = False
        self.held: dict[str, HeldRequest] = {}
        # Every request with a pushed action, by action id, from its push until answered.
        self._requests: dict[
            str, tuple[Literal["write", "permission"], asyncio.Future[_Outcome]]
        ] = {}
        self.in_flight = 0
        self.changed = asyncio.Event()
        self.ended: str | None = None
        self.source: AcpSource | None = None
        self._unreported: list[Resolution] = []
        self._approvals: list[_Approval] = []
        self._tool_calls: dict[str, _ToolCall] = {}
        self._permission_calls: dict[str, str] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._conn: acp.ClientSideConnection | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._stopping = False
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        #: The review core: decisions, rules' resolutions and the queue follower.
        self.review = ReviewSession(self.root, store, stream)
        self.review.via = "exec"  # the dashboard says "dashboard" when it decides
        self.review.on_remote = self._decided_elsewhere
        self.review.on_removed_elsewhere = self._removed_elsewhere

    # -- life cycle --------------------------------------------------------------------
    async def start(self, load_session_id: str | None = None) -> None:
        """Spawn the agent, ``initialize`` it and open a session on the workspace.

        With ``load_session_id``, an agent that offers ``loadSession`` is asked to load that
        session instead (:attr:`loaded` says whether it did); its replay of the
        conversation is not shown again.
        """
        self._loop = asyncio.get_running_loop()
        self._stack = contextlib.AsyncExitStack()
        try:
            # The agent's stdout is screened before the library reads it (drivers/acp/wire.py).
            conn, process = await self._stack.enter_async_context(
                spawn_screened_agent(
                    cast(acp.Client, AgentRequests(self)),
                    self.spec.argv[0],
                    *self.spec.argv[1:],
                    env=self.spec.environment(),
                    cwd=self.root,
                    shutdown_timeout=2.0,
                    name=self.spec.display_name,
                )
            )
        except OSError as exc:
            await self._stack.aclose()
            raise AcpError(f"cannot start agent {self.spec.name}: {exc.strerror or exc}") from None
        self._conn = conn
        self._process = process
        if process.stderr is not None:
            self._stderr_task = asyncio.create_task(self._pump_stderr(process.stderr))
        try:
            init = await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=schema.ClientCapabilities(
                    fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True),
                    terminal=False,
                ),
                client_info=schema.Implementation(name="redline", version=_version()),
            )
            caps = init.agent_capabilities
            self.load_session = bool(caps and caps.load_session)
            if init.agent_info is not None:
                self.agent_info = f"{init.agent_info.name} {init.agent_info.version}"
            offered: list[
                schema.HttpMcpServer
                | schema.SseMcpServer
                | schema.AcpMcpServer
                | schema.McpServerStdio
            ] = [redline_mcp_server(self.root)] if self.offer_tools else []
            session_id = load_session_id or ""
            if load_session_id is not None and self.load_session:
                self._replaying = True
                try:
                    await conn.load_session(
                        cwd=str(self.root), session_id=load_session_id, mcp_servers=offered
                    )
                    self.loaded = True
                except acp.RequestError as exc:
                    self.events.emit(
                        Notice(
                            f"{self.spec.display_name} could not load session "
                            f"{load_session_id} ({exc}); starting a new session."
                        )
                    )
                finally:
                    self._replaying = False
            if not self.loaded:
                session = await conn.new_session(cwd=str(self.root), mcp_servers=offered)
                session_id = session.session_id
                self._follow_model(getattr(session, "config_options", None))
        except (ConnectionError, acp.RequestError, OSError) as exc:
            await self._wait_exit()
            message = self._failure("did not start", exc)
            await self.close()
            raise AcpError(message) from None
        self.acp_session_id = session_id
        self.source = AcpSource(
            "acp",
            self.spec.display_name,
            self.events.session_id,
            self.acp_session_id,
            process.pid,
        )

    def _follow_model(
        self,
        options: Sequence[schema.SessionConfigOptionSelect | schema.SessionConfigOptionBoolean]
        | None,
    ) -> None:
        """The agent's current model (its ``model`` config option), for ``Assisted-by``."""
        for option in options or ():
            if getattr(option, "category", None) == "model" or getattr(option, "id", "") == "model":
                value = getattr(option, "current_value", None)
                if isinstance(value, str) and value.strip():
                    self.review.model = value.strip()
                return

    async def _wait_exit(self) -> None:
        """After a broken connection: let the process end and its last stderr arrive."""
        if self._process is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._process.wait(), 5.0)
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 2.0)

    def _failure(self, what: str, exc: BaseException) -> str:
        cause = str(exc) or type(exc).__name__
        if isinstance(exc, acp.RequestError):
            cause = f"{exc} (JSON-RPC error {exc.code})"
        code = self._process.returncode if self._process is not None else None
        if code is not None:
            cause = f"the process {_describe_exit(code)}"
        tail = "\n".join(f"  {line}" for line in self._stderr_tail)
        if tail:
            cause += f"; its last output:\n{tail}"
        return f"agent {self.spec.name} {what}: {cause}"

    async def prompt(self, text: str) -> str:
        """Send one prompt; return the stop reason. AcpError when the agent ended."""
        assert self._conn is not None
        try:
            response = await self._conn.prompt(
                session_id=self.acp_session_id, prompt=[acp.text_block(text)]
            )
        except (ConnectionError, acp.RequestError, OSError) as exc:
            await self._wait_exit()
            message = self._failure("ended its turn with an error", exc)
            if self._process is not None and self._process.returncode is not None:
                self.agent_gone()
            raise AcpError(message) from None
        return str(response.stop_reason)

    async def cancel(self) -> None:
        """Stop the agent's turn: ``session/cancel``; held requests answer ``cancelled``."""
        self._stopping = True
        self._finish_held("cancelled", "the agent was stopped")
        if self._conn is not None and self.acp_session_id:
            with contextlib.suppress(ConnectionError, OSError, acp.RequestError):
                await self._conn.cancel(session_id=self.acp_session_id)

    async def close(self) -> None:
        """End the agent process (stdin closed, then terminate, then kill)."""
        self._stopping = True
        self.stop_watching()
        self._finish_held("ended", "the agent ended")
        if self._stack is not None:
            stack, self._stack = self._stack, None
            with contextlib.suppress(Exception):
                await stack.aclose()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._stderr_task, 2.0)
        if self._process is not None and self.ended is None:
            self.ended = _describe_exit(self._process.returncode)
            self.events.emit(
                acp_events.AcpAgentExit(self._process.returncode, self.ended, expected=True)
            )
        self._mark_ended()

    def agent_gone(self) -> None:
        """The process ended on its own: refuse held writes, drop permission actions."""
        code = self._process.returncode if self._process is not None else None
        if self.ended is None:
            self.ended = _describe_exit(code)
            self.events.emit(acp_events.AcpAgentExit(code, self.ended, expected=self._stopping))
        self._finish_held("ended", f"the agent {self.ended}")
        self._mark_ended()

    def _mark_ended(self) -> None:
        """Actions this agent left on the stack say that its session has ended, and how
        (``agent_ended`` in their details, also in their queue records: ``redline pending``
        and a dashboard opened later show it)."""
        from redline.workspace.queue import QueueError

        ended = self.ended or "ended"
        for action in self.store.snapshot():
            details = action.details
            if not isinstance(details, (FileChangeDetails, PermissionDetails)):
                continue
            source = details.acp_source
            if not details.acp or source is None:
                continue
            if source.get("acp_session_id") != self.acp_session_id:
                continue
            if details.agent_ended == ended:
                continue
            try:
                self.store.update_details(
                    action.id, dataclasses.replace(details, agent_ended=ended)
                )
            except (QueueError, ValueError, OSError) as exc:
                log.warning("could not record in %s that its agent ended: %s", action.id, exc)

    def _finish_held(self, decision: Decision, reason: str) -> None:
        for held in list(self.held.values()):
            if not held.future.done():
                held.future.set_result(_Outcome(decision, reason))
            if held.kind == "permission":
                # Owner actions end with the agent; a verified diff stays queued as a
                # preview action (applying it writes what the agent would have).
                if held.leftover is not None and self.store.get(held.action_id) is not None:
                    self.store.replace(held.action_id, held.leftover)
                else:
                    self.store.remove(held.action_id)
        self._notify()

    async def _pump_stderr(self, stream: asyncio.StreamReader) -> None:
        while True:
            try:
                line = await stream.readline()
            except (ValueError, OSError):
                return
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\n")
            self._stderr_tail.append(text)
            self.events.emit(acp_events.AcpStderr(text))

    # -- state the runner watches -------------------------------------------------------
    def _notify(self) -> None:
        self.changed.set()

    @property
    def waiting_only_on_review(self) -> bool:
        """Every request the agent holds open is a pending action (and there is one)."""
        return bool(self.held) and self.in_flight == len(self.held)

    def ended_by_reject(self, stop_reason: str) -> bool:
        """A turn ended ``cancelled`` right after a reviewer's reject, and nobody stopped the
        agent: codex-acp's answer to its only reject option (``abort``), a normal end."""
        with self._lock:
            report = list(self._unreported)
        return stop_reason == "cancelled" and not self._stopping and rejected(report)

    def take_unreported(self) -> list[Resolution]:
        with self._lock:
            report, self._unreported = self._unreported, []
        return report

    def record_resolution(
        self, action: PendingAction, decision: str, reason: str, rule: str | None = None
    ) -> None:
        from redline.review.comments import agent_notes

        # The reviewer's comments go with the decision (docs/review-conversation.md).
        verb = "apply" if decision == "applied" else "discard"
        notes = agent_notes(self.store.queue, action.id, verb)
        if notes:
            reason = f"{reason.strip() or 'no reason given'}\n{notes}"
        if rule is not None:
            decision = f"{decision} by rule {rule}"
        with self._lock:
            self._unreported.append(Resolution(action.label, decision, reason, action.id))

    # -- other processes' resolutions ---------------------------------------------------
    def watch_queue(self) -> None:
        """Follow the workspace queue (call on the agent's loop, after :meth:`start`).

        When another process (``redline pending``, a dashboard) resolves one of this agent's
        actions, the request the agent holds is answered exactly as a local resolution
        answers it: the review core (:class:`~redline.review.session.ReviewSession`) runs
        an owner action (a permission request) here, and reports a held write that the other
        process applied or discarded itself, so the agent hears the success reply (or
        ``Discarded by the reviewer: <reason>``). Stopped by :meth:`close`.
        """
        loop = asyncio.get_running_loop()
        self._loop = loop

        def submit(coro: Coroutine[object, object, None]) -> object:
            return asyncio.run_coroutine_threadsafe(coro, loop)

        self.review.follow(submit)

    def stop_watching(self) -> None:
        self.review.close()

    def _decided_elsewhere(self, action: PendingAction, resolution: QueueResolution | None) -> None:
        """Answer the request behind ``action``: another process applied or discarded it."""
        assert resolution is not None
        # The request's future, also while the rules still look at it (not yet held).
        request = self._requests.get(action.id)
        rule = resolution.rule if resolution.resolved_by == "rule" else None
        decision: Decision = "apply" if resolution.decision == "apply" else "discard"
        if request is not None:
            self._settle(request[1], _Outcome(decision, resolution.reason, rule))
        done = "applied" if decision == "apply" else "discarded"
        self.record_resolution(action, done, resolution.reason, rule)
        self._notify()

    def _removed_elsewhere(self, action: PendingAction, resolution: QueueResolution | None) -> None:
        """Another process removed ``action`` without a decision on the whole of it."""
        request = self._requests.get(action.id)
        text = f"{action.id} ({action.label}) was removed in another process"
        if resolution is not None and resolution.replaced_by:
            # `redline pending apply|discard --only`: part of it was resolved, the rest
            # waits under a new id (it outlives this request, as a preview action).
            text = (
                f"{action.id} ({action.label}) was resolved in part in another process; "
                f"the rest waits for review as {resolution.replaced_by}"
            )
        if request is not None:
            # A permission is refused; a write is not done as sent (read the file again).
            decision: Decision = "discard" if request[0] == "permission" else "elsewhere"
            self._settle(request[1], _Outcome(decision, f"{text}; read the file again"))
        self.events.emit(Notice(message=f"{text}."))

    # -- review rules ------------------------------------------------------------------
    async def _run_rules(self, action: PendingAction) -> RuleOutcome | None:
        """Let the review rules decide a freshly pushed action (a held write or a
        permission request); what they leave waits for review as before."""
        if self.rules is None:
            return None
        from redline.rules import run_rules

        try:
            return await run_rules(self.rules, action, self._rule_resolve, source_kind="acp")
        except Exception as exc:  # a broken rule never loses the action: it waits
            log.exception("review rules failed")
            self.events.emit(Notice(message=f"Review rules failed: {exc}"))
            return None

    async def apply_rules(self) -> list[str]:
        """Let the rules decide every action already pending (after a session rule was
        added); returns what each decision said."""
        texts: list[str] = []
        for action in self.store.snapshot():
            if self.store.get(action.id) is None:
                continue
            outcome = await self._run_rules(action)
            if outcome is not None:
                texts.append(outcome.text)
        return texts

    async def _rule_resolve(
        self, verb: str, reason: str, action_id: str, decision: RuleDecision
    ) -> tuple[bool, str]:
        """Resolve as a person would (the review core's one path), credited to the rule."""
        rule = decision.rule
        if rule is not None:
            self._deciding_rule[action_id] = rule
        try:
            outcome = await self.review.resolve(
                action_id,
                ReviewDecision(
                    "apply" if verb == "apply" else "discard", reason, by="rule", rule=rule
                ),
            )
        finally:
            self._deciding_rule.pop(action_id, None)
        return not outcome.is_error, outcome.text

    # -- session/update ----------------------------------------------------------------
    def _on_update(self, update: SessionUpdate) -> None:
        if isinstance(update, schema.ConfigOptionUpdate):
            self._follow_model(update.config_options)  # session/set_model and the like
        if self._replaying:
            return  # session/load replays the conversation: it is in the log already
        event = acp_events.from_update(update)
        if isinstance(event, acp_events.AcpToolCall):
            self._tool_calls[event.tool_call_id] = _ToolCall(
                event.title, event.kind, event.raw_input, event.status
            )
        elif isinstance(event, acp_events.AcpToolCallUpdate):
            call = self._tool_calls.setdefault(event.tool_call_id, _ToolCall())
            call.title = event.title or call.title
            call.kind = event.kind or call.kind
            if isinstance(update, schema.ToolCallProgress) and update.raw_input is not None:
                call.raw_input = update.raw_input
            if event.status:
                call.status = event.status
                if event.status in ("completed", "failed"):
                    self._tool_call_ended(event.tool_call_id)
            if event.title is None and call.title:
                event = dataclasses.replace(event, title=call.title)
        if isinstance(event, acp_events.AcpEvent):
            self.events.emit(event)

    # -- fs/read_text_file -------------------------------------------------------------
    def _read(self, path: str, line: int | None, limit: int | None) -> schema.ReadTextFileResponse:
        self.in_flight += 1
        try:
            try:
                disk = read_disk(self.root, path)
            except paths.ConfinementError as exc:
                raise acp.RequestError(OUTSIDE_WORKSPACE, f"Refused: {exc}") from None
            except MappingError as exc:
                raise acp.RequestError(FILE_UNREADABLE, str(exc)) from None
            text = disk.text or ""
            if line is not None or limit is not None:
                lines = text.splitlines(keepends=True)
                start = max((line or 1) - 1, 0)
                end = len(lines) if limit is None else start + max(limit, 0)
                text = "".join(lines[start:end])
            return schema.ReadTextFileResponse(content=text)
        finally:
            self.in_flight -= 1

    # -- fs/write_text_file ------------------------------------------------------------
    async def _write(self, path: str, content: str) -> schema.WriteTextFileResponse | None:
        self.in_flight += 1
        try:
            return await self._write_inner(path, content)
        finally:
            self.in_flight -= 1
            self._notify()

    async def _write_inner(self, path: str, content: str) -> schema.WriteTextFileResponse | None:
        from redline.tools.files._common import FileToolError
        from redline.tools.files.write import NothingToWrite, WriteRequest, build_write_action

        try:
            _absolute, rel = confine(self.root, path)
            built = build_write_action(WriteRequest(self.root, rel, content))
        except paths.ConfinementError as exc:
            raise acp.RequestError(OUTSIDE_WORKSPACE, f"Refused: {exc}") from None
        except NothingToWrite:
            return schema.WriteTextFileResponse()
        except FileToolError as exc:
            raise acp.RequestError(NOT_WRITTEN, f"Not written: {exc}") from None
        preview = built.preview
        assert preview is not None
        approval = self._matching_approval(rel, preview)
        if approval is not None:
            return self._apply_approved(approval, rel, preview)
        label = f"Write: {rel}"
        future: asyncio.Future[_Outcome] = asyncio.get_running_loop().create_future()
        details = FileChangeDetails(
            path=rel, change=preview.changes[0].kind, acp=True, acp_source=self._source_details()
        )
        action = self.store.push(
            self._preview_action(label, "acp:write_text_file", preview, future, details)
        )
        self._requests[action.id] = ("write", future)
        try:
            # Before it counts as held: the runner must not see "waiting on review" meanwhile.
            await self._run_rules(action)
            self.held[action.id] = HeldRequest(action.id, "write", future)
            self._notify()
            outcome = await future
        finally:
            self.held.pop(action.id, None)
            self._requests.pop(action.id, None)
        if outcome.decision == "apply":
            return schema.WriteTextFileResponse()
        if outcome.decision == "discard":
            by = f"rule {outcome.rule}" if outcome.rule else "the reviewer"
            raise acp.RequestError(DISCARDED, f"Discarded by {by}: {outcome.reason}")
        if outcome.decision == "elsewhere":
            raise acp.RequestError(NOT_WRITTEN, f"{outcome.reason}.")
        raise acp.RequestError(AGENT_STOPPED, f"Not written: {outcome.reason}.")

    def _preview_action(
        self,
        label: str,
        source_tool_name: str,
        preview: Preview,
        future: asyncio.Future[_Outcome],
        details: FileChangeDetails | PermissionDetails,
    ) -> PendingAction:
        """A held write: apply writes the Preview through safe apply, then answers."""
        root = self.root
        # Real paths (a symlinked folder resolved); Preview.via keeps what the agent asked.
        preview = canonical_preview(root, preview)

        def apply(reason: str) -> ToolResult:
            from redline.workspace.safe_apply import apply_preview

            # The action as the store holds it (pushed, or in its permission's place).
            current = resolving_action() or action
            receipt = apply_preview(
                root,
                preview,
                label=label,
                source_tool_name=source_tool_name,
                action_id=current.id or None,
            )
            rule = self._deciding_rule.get(current.id)
            self._settle(future, _Outcome("apply", reason, rule))
            self.record_resolution(current, "applied", reason, rule)
            return ToolResult.text_result(
                f"Applied: {label}.",
                details={"entry_id": receipt.entry_id, "files": list(receipt.files)},
            )

        def reject(reason: str) -> ToolResult:
            current = resolving_action() or action
            rule = self._deciding_rule.get(current.id)
            self._settle(future, _Outcome("discard", reason, rule))
            self.record_resolution(current, "discarded", reason, rule)
            return ToolResult.text_result(f"Discarded: {label}. Reason: {reason}")

        # Its apply is safe apply of the Preview (plus answering the agent while it runs):
        # in the workspace queue it is a preview action, so any redline process may apply
        # it, also after this agent and this process have ended.
        action = PendingAction(
            label=label,
            apply=apply,
            reject=reject,
            source_tool_name=source_tool_name,
            preview=preview,
            details=details,
            kind="file_change",
            preview_apply=True,
        )
        return action

    def _settle(self, future: asyncio.Future[_Outcome], outcome: _Outcome) -> None:
        """Answer a held request from any thread (the dashboard resolves on its own)."""

        def settle() -> None:
            if not future.done():
                future.set_result(outcome)
            self._notify()

        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            settle()
        else:
            loop.call_soon_threadsafe(settle)

    def _source_details(self) -> JsonObject | None:
        """This agent's source as its actions' details name it (``source``)."""
        return self.source.to_dict() if self.source else None

    # -- session/request_permission ----------------------------------------------------
    async def _permission(
        self, tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> schema.RequestPermissionResponse:
        self.in_flight += 1
        try:
            return await self._permission_inner(tool_call, options)
        finally:
            self.in_flight -= 1
            self._notify()

    async def _permission_inner(
        self, tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> schema.RequestPermissionResponse:
        if self._stopping:
            return _answer(_Outcome("cancelled"), options)
        known = self._tool_calls.setdefault(tool_call.tool_call_id, _ToolCall())
        title = tool_call.title or known.title or "Permission request"
        kind = tool_call.kind or known.kind or "other"
        raw_input = tool_call.raw_input if tool_call.raw_input is not None else known.raw_input
        diffs = [
            c for c in tool_call.content or [] if isinstance(c, schema.FileEditToolCallContent)
        ]
        mapped: list[MappedChange] = []
        unverifiable = ""
        try:
            mapped = codex_changes(self.root, raw_input) or [
                full_file_change(self.root, d.path, d.old_text, d.new_text) for d in diffs
            ]
        except paths.ConfinementError as exc:
            self.events.emit(
                ErrorEvent(f"Refused the agent's request {title!r}: {exc}. Nothing was queued.")
            )
            return _answer(_Outcome("discard", str(exc)), options)
        except MappingError as exc:
            unverifiable = str(exc)
        preview = (
            canonical_preview(self.root, Preview(m.change for m in mapped)) if mapped else None
        )
        verified = bool(mapped) and all(m.verified for m in mapped)
        notes = [m.note for m in mapped if m.note] + ([unverifiable] if unverifiable else [])
        label = title
        not_verifiable: str | None = None
        shown: tuple[DiffShown, ...] | None = None
        if diffs and not verified:
            label = f"{title} (not verifiable against the disk)"
            not_verifiable = "; ".join(notes) or "the change cannot be checked"
            if preview is None:
                shown = tuple(DiffShown(d.path, d.old_text, d.new_text) for d in diffs)
        details = PermissionDetails(
            acp=True,
            acp_source=self._source_details(),
            tool_call_id=tool_call.tool_call_id,
            tool_kind=kind,
            raw_input=raw_input,
            not_verifiable=not_verifiable,
            diffs=shown,
        )
        future: asyncio.Future[_Outcome] = asyncio.get_running_loop().create_future()

        def apply(reason: str) -> ToolResult:
            if verified and preview is not None:
                self._approve(tool_call.tool_call_id, mapped, label)
            rule = self._deciding_rule.get(action.id)
            self._settle(future, _Outcome("apply", reason, rule))
            self.record_resolution(action, "applied", reason, rule)
            return ToolResult.text_result(f"Allowed: {label}.")

        def reject(reason: str) -> ToolResult:
            rule = self._deciding_rule.get(action.id)
            self._settle(future, _Outcome("discard", reason, rule))
            self.record_resolution(action, "discarded", reason, rule)
            return ToolResult.text_result(f"Rejected: {label}. Reason: {reason}")

        # The closures above read ``action``: the stamped action, once pushed.
        action = self.store.push(
            PendingAction(
                label=label,
                apply=apply,
                reject=reject,
                details=details,
                source_tool_name=f"acp:{kind}",
                preview=preview,
                kind="permission",
            )
        )
        leftover = None
        if verified and preview is not None:
            leftover = self._preview_action(label, f"acp:{kind}", preview, future, details)
        self._requests[action.id] = ("permission", future)
        try:
            await self._run_rules(action)
            self.held[action.id] = HeldRequest(action.id, "permission", future, leftover)
            self._notify()
            outcome = await future
        finally:
            self.held.pop(action.id, None)
            self._requests.pop(action.id, None)
            if outcome_is_final(future):
                self.store.remove(action.id)
        return _answer(outcome, options)


__all__ = [
    "AcpAgent",
    "AcpError",
    "AcpSource",
    "HeldRequest",
    "Resolution",
    "redline_mcp_server",
    "resolution_prompt",
]
