"""The model runtime's turns: the model is asked, its tool calls run, pending actions are
forced to ``resolve`` first (the design note's rule), review rules decide fresh actions.

:class:`TurnLoop` is the half of :class:`~redline.drivers.model.session.AgentSession` that
runs on the session's event loop; the public, thread-safe half stays in ``session.py``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import ValidationError

from redline.drivers.model.providers.base import (
    ForceTool,
    Message,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderError,
    ToolCall,
    ToolChoice,
    ToolChoiceRejected,
    ToolSpec,
)
from redline.review.events import (
    AgentEnd,
    AgentStart,
    AgentState,
    ErrorEvent,
    EventStream,
    MessageDelta,
    MessageEnd,
    MessageStart,
    Notice,
    ResolvedBy,
    RunStatus,
    TokenUsage,
    ToolEnd,
    ToolStart,
    ToolUpdate,
    TurnEnd,
    TurnStart,
)
from redline.review.loop_thread import LoopThread
from redline.review.resolve import (
    ResolveOutcome,
)
from redline.review.result import ToolResult
from redline.review.session import ReviewSession
from redline.review.store import PendingAction, PendingActionStore
from redline.tools.base import Tool, ToolContext
from redline.tools.resolve import ResolveTool

if TYPE_CHECKING:
    from redline.rules import Decision as RuleDecision
    from redline.rules import RuleOutcome, RuleSet

log = logging.getLogger(__name__)

Resolver = Literal["agent", "human", "apply-all", "discard-all"]
RESOLVERS: tuple[str, ...] = ("agent", "human", "apply-all", "discard-all")

PREVIEW_REMINDER = (
    "<system-reminder>This is a preview. Nothing has been written yet. "
    "Call the resolve tool to apply or discard these changes.</system-reminder>"
)
RESOLVE_FIRST = (
    "Not run: changes are waiting for review. Call resolve to apply or discard the pending "
    "action before using other tools."
)
RESOLVE_REFUSED = (
    "resolve is not available to you in this session: a person reviews every pending action. "
    "Wait for their decision."
)
AUTO_REASONS = {
    "apply-all": "auto-applied by --resolver apply-all",
    "discard-all": "auto-discarded by --resolver discard-all",
}
# Turns in a row that leave the same actions pending before the run gives up.
STUCK_TURNS = 3
ABORT_GRACE = 1.0

DEFAULT_SYSTEM_PROMPT = """You are redline, a careful coding agent working in a Python project.
Use the tools to read and search the workspace. Changes you make with edit, write, ast_edit
or preview-producing custom tools are previews: nothing is written until the pending action
is resolved. Keep labels and reasons short and specific."""


class SessionError(RuntimeError):
    """A session method was called at the wrong time (e.g. prompt() during a run)."""


@dataclass(frozen=True)
class Resolution:
    """A decision the model has not heard about yet (human, auto or undo)."""

    verb: str
    action_id: str
    label: str
    reason: str
    result_text: str


class TurnLoop:
    """The agent loop; mixed into :class:`~redline.drivers.model.session.AgentSession`."""

    if TYPE_CHECKING:
        cwd: Path
        provider: Provider
        resolver: Resolver
        store: PendingActionStore
        events: EventStream
        max_turns: int
        rules: RuleSet | None
        state: AgentState
        last_status: RunStatus | None
        review: ReviewSession
        _messages: list[Message]
        _state_lock: threading.RLock
        _unreported: list[Resolution]
        _tools: dict[str, Tool]
        _run_task: asyncio.Task[RunStatus] | None
        _run_future: concurrent.futures.Future[RunStatus] | None
        _reminder_due: bool
        _choice_level: int
        _abort_requested: bool
        _closed: bool
        _loop: LoopThread
        _resolve_tool: ResolveTool

        @property
        def running(self) -> bool: ...

        @property
        def model_label(self) -> str: ...

        def _tool_specs(self) -> tuple[ToolSpec, ...]: ...

        def _offers_resolve(self) -> bool: ...

        async def _resolve(
            self,
            action: str,
            reason: str,
            action_id: str | None,
            by: ResolvedBy,
            only: Sequence[str] | None = None,
            *,
            rule: str | None = None,
        ) -> ResolveOutcome: ...

    async def _run(self, text: str | None) -> RunStatus:
        with self._state_lock:
            self._run_task = asyncio.current_task()
        self.events.emit(AgentStart(model=self.model_label, resolver=self.resolver, prompt=text))
        if text is not None:
            self._messages.append(Message("user", text))
        status: RunStatus
        error: str | None = None
        try:
            status = await self._loop_turns()
        except asyncio.CancelledError:
            status = "aborted"
        except ProviderError as exc:
            status, error = "error", str(exc)
        except BaseException as exc:  # a bug (or a plugin's SystemExit) must end the run
            # visibly, never kill the loop thread and leave prompt() waiting forever.
            log.exception("agent run failed")
            status, error = "error", f"{type(exc).__name__}: {exc}"
        if error is not None:
            self.events.emit(ErrorEvent(message=error))
        self.last_status = status
        self.state = AgentState.after(status)
        self.events.emit(AgentEnd(status=status, pending=self.store.count))
        with self._state_lock:
            self._run_task = None
        return status

    async def _loop_turns(self) -> RunStatus:
        turns = 0
        stuck = 0
        while True:
            if self._abort_requested:
                return "aborted"
            if self.store.has_pending and self.resolver == "human":
                return "awaiting_review"
            if (
                self.store.has_pending
                and self.resolver in AUTO_REASONS
                and not await self._auto_resolve()
            ):
                return "error"
            if turns >= self.max_turns:
                return "max_turns"
            pending_before = {a.id for a in self.store.snapshot()}
            turns += 1
            response = await self._model_turn(turns)
            if not response.tool_calls:
                self.events.emit(TurnEnd(turn=turns))
                return "awaiting_review" if self.store.has_pending else "done"
            await self._run_tool_calls(
                response.tool_calls, forced=bool(pending_before) and self._forcing()
            )
            self.events.emit(TurnEnd(turn=turns))
            pending_after = {a.id for a in self.store.snapshot()}
            if pending_after and self.resolver == "agent":
                stuck = stuck + 1 if pending_after == pending_before else 0
                if stuck >= STUCK_TURNS:
                    self.events.emit(
                        Notice(
                            message=f"The model left the same actions pending for {STUCK_TURNS} "
                            "turns; stopping for review."
                        )
                    )
                    return "awaiting_review"
            else:
                stuck = 0

    def _forcing(self) -> bool:
        return self.resolver == "agent" and self.store.has_pending and self._offers_resolve()

    def _tool_choice(self) -> ToolChoice:
        if not self._forcing():
            return "auto"
        return (ForceTool("resolve"), "required", "auto")[min(self._choice_level, 2)]

    def _pending_messages(self) -> None:
        with self._state_lock:
            report, self._unreported = self._unreported, []
        if report:
            self._messages.append(Message("user", resolution_reminder(report)))
        if self._reminder_due and self._forcing():
            self._messages.append(Message("user", PREVIEW_REMINDER))
        self._reminder_due = False

    async def _model_turn(self, turn: int) -> ModelResponse:
        self._pending_messages()
        self.events.emit(TurnStart(turn=turn))
        while True:
            choice = self._tool_choice()
            request = ModelRequest(tuple(self._messages), self._tool_specs(), choice)
            self.events.emit(MessageStart(role="assistant"))
            parts: list[str] = []
            on_text = self._text_sink(parts)

            try:
                response = await asyncio.wait_for(
                    self.provider.complete(request, on_text), timeout=self.provider.timeout * 4
                )
            except ToolChoiceRejected as exc:
                self.events.emit(MessageEnd(text="".join(parts)))
                if choice == "auto":
                    raise
                self._choice_level += 1
                self.events.emit(
                    Notice(
                        message=f"The model server refused tool_choice {_choice_name(choice)} "
                        f"({exc}); retrying with {_choice_name(self._tool_choice())}."
                    )
                )
                continue
            except TimeoutError:
                raise ProviderError(
                    f"the model call timed out after {self.provider.timeout * 4:.0f} s"
                ) from None
            break
        text = response.text or "".join(parts)
        self.events.emit(MessageEnd(text=text))
        if response.usage is not None:
            self.events.emit(
                TokenUsage(
                    input_tokens=response.usage.input_tokens,
                    output_tokens=response.usage.output_tokens,
                )
            )
        self._messages.append(Message("assistant", text, tool_calls=response.tool_calls))
        return response

    def _text_sink(self, parts: list[str]) -> Callable[[str], None]:
        def on_text(delta: str) -> None:
            if delta:
                parts.append(delta)
                self.events.emit(MessageDelta(text=delta))

        return on_text

    async def _run_tool_calls(self, calls: Sequence[ToolCall], *, forced: bool) -> None:
        for call in calls:
            self.events.emit(ToolStart(tool_call_id=call.id, name=call.name, args=call.arguments))
            if call.name == "resolve" and not self._offers_resolve():
                result = ToolResult.error(RESOLVE_REFUSED)
            elif forced and call.name != "resolve":
                result = ToolResult.error(RESOLVE_FIRST)
            elif call.name == "resolve":
                result = await self._resolve_call(call)
            else:
                before = {a.id for a in self.store.snapshot()}
                result = await self._execute(call)
                result = await self._run_rules(result, before)
            self.events.emit(
                ToolEnd(
                    tool_call_id=call.id, name=call.name, result=result, is_error=result.is_error
                )
            )
            self._messages.append(
                Message(
                    "tool",
                    result.text,
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=result.is_error,
                )
            )

    async def _resolve_call(self, call: ToolCall) -> ToolResult:
        args = call.arguments
        action = args.get("action")
        reason = args.get("reason")
        if not isinstance(action, str) or not isinstance(reason, str):
            return ToolResult.error(
                "resolve needs 'action' (apply or discard) and 'reason' (a string)."
            )
        outcome = await self._resolve(action, reason, None, "agent")
        return outcome.to_tool_result()

    async def _execute(self, call: ToolCall) -> ToolResult:
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolResult.error(
                f"Unknown tool {call.name!r}. Available: {', '.join(self._tools)}."
            )
        if (
            call.raw_arguments
            and not call.arguments
            and call.raw_arguments.strip() not in ("", "{}")
        ):
            try:
                json.loads(call.raw_arguments)
            except json.JSONDecodeError as exc:
                return ToolResult.error(f"Arguments for {call.name} are not valid JSON: {exc.msg}.")
        try:
            params = tool.parameters.model_validate(call.arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()
            )
            return ToolResult.error(f"Invalid arguments for {call.name}: {problems}")

        def update(text: str) -> None:
            self.events.emit(ToolUpdate(tool_call_id=call.id, name=call.name, text=text))

        ctx = ToolContext(cwd=self.cwd, store=self.store, tool_call_id=call.id, update=update)
        try:
            return await tool.execute(params, ctx)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # SystemExit, KeyboardInterrupt... from a plugin tool
            log.debug("tool %s failed", call.name, exc_info=True)
            if not str(exc):
                return ToolResult.error(f"{call.name} failed: {type(exc).__name__}")
            if not isinstance(exc, Exception):
                return ToolResult.error(f"{call.name} failed: {type(exc).__name__}: {exc}")
            return ToolResult.error(f"{call.name} failed: {exc}")

    async def _auto_resolve(self) -> bool:
        action = "apply" if self.resolver == "apply-all" else "discard"
        reason = AUTO_REASONS[self.resolver]
        while self.store.has_pending:
            result = await self._resolve(action, reason, None, "auto")
            if result.is_error:
                self.events.emit(ErrorEvent(message=result.text))
                return False
        return True

    # -- review rules -------------------------------------------------------------------
    def apply_rules(self) -> list[str]:
        """Let the rules decide the pending actions now, top first (after a session rule was
        added, say); stops at the first action they leave. The model hears of each decision
        at its next turn, as of a person's. Returns what each rule did, in words."""
        if self.rules is None or self.resolver in AUTO_REASONS:
            return []
        outcomes = self._loop.run(self._decide_top(None))
        with self._state_lock:
            for outcome in outcomes:
                if outcome.resolved:
                    verb = "applied" if outcome.decision.decision == "apply" else "discarded"
                    self._unreported.append(
                        Resolution(
                            f"{verb} by rule {outcome.decision.rule}",
                            outcome.action_id,
                            outcome.label,
                            outcome.decision.reason,
                            outcome.result_text,
                        )
                    )
        return [outcome.text for outcome in outcomes]

    async def _decide_top(self, only: set[str] | None) -> list[RuleOutcome]:
        """Rules decide the top action while they resolve it (and it is one of ``only``)."""
        from redline.rules import run_rules

        assert self.rules is not None
        outcomes: list[RuleOutcome] = []
        seen: set[str] = set()
        while True:
            top = self.store.peek()
            if top is None or top.id in seen or (only is not None and top.id not in only):
                return outcomes
            seen.add(top.id)
            try:
                outcome = await run_rules(self.rules, top, self._rule_resolve)
            except Exception as exc:  # a broken rule must never lose the action
                log.exception("review rules failed")
                self.events.emit(Notice(message=f"Review rules failed: {exc}"))
                return outcomes
            if outcome is None:
                return outcomes
            outcomes.append(outcome)
            if not outcome.resolved:
                return outcomes

    async def _run_rules(self, result: ToolResult, before: set[str]) -> ToolResult:
        """Let the rules decide the actions this tool call pushed (top first).

        ``apply-all``/``discard-all`` decide everything themselves: rules do not run there.
        Rules stop at the first action they leave for review (only the top is resolvable).
        """
        if self.rules is None or self.resolver in AUTO_REASONS:
            return result
        pushed = [a.id for a in self.store.snapshot() if a.id not in before]
        if not pushed:
            return result
        outcomes = await self._decide_top(set(pushed))
        if not outcomes:
            return result
        texts = [outcome.text for outcome in outcomes]
        decided = [
            {"action_id": o.action_id, "resolved": o.resolved} | o.decision.to_dict()
            for o in outcomes
        ]
        details = dict(result.details) if isinstance(result.details, dict) else {}
        details["rules"] = decided
        if len(outcomes) == len(pushed) and all(o.resolved for o in outcomes):
            return ToolResult.text_result("\n\n".join(texts), details=details)
        return ToolResult.text_result(
            "\n\n".join([result.text, *texts]), details=details, is_error=result.is_error
        )

    async def _rule_resolve(
        self, verb: str, reason: str, action_id: str, decision: RuleDecision
    ) -> tuple[bool, str]:
        outcome = await self._resolve(verb, reason, action_id, "rule", rule=decision.rule)
        return not outcome.is_error, outcome.text


def resolution_reminder(report: Sequence[Resolution]) -> str:
    """The one user message that tells the model what was resolved since its last turn."""
    lines = ["<system-reminder>Since your last turn, pending actions were resolved:"]
    for item in report:
        reason = f" Reason: {item.reason}" if item.reason else ""
        result = item.result_text
        # The result's first line usually ends with the same reason ("Discarded: X.
        # Reason: …"): say it once.
        first, newline, rest = result.partition("\n")
        if reason and first.endswith(reason):
            result = first[: -len(reason)] + newline + rest
        lines.append(f"- {item.verb} {item.action_id} ({item.label}).{reason} Result: {result}")
    lines.append("</system-reminder>")
    return "\n".join(lines)


def preview_diffs(action: PendingAction) -> list[dict[str, str]] | None:
    """Each file of the action's Preview with its unified diff (None without a Preview)."""
    from redline.workspace.preview import FileRename

    preview = action.preview
    if preview is None:
        return None
    files: list[dict[str, str]] = []
    for change in preview:
        entry = {"kind": change.kind, "path": change.path}
        if isinstance(change, FileRename):
            entry["old_path"] = change.old_path
        entry["diff"] = preview.file_diff(change)
        files.append(entry)
    return files


def _choice_name(choice: ToolChoice) -> str:
    return f"'{choice.name}'" if isinstance(choice, ForceTool) else repr(choice)


async def _maybe_await(value: object) -> object:
    if inspect.isawaitable(value):
        return await value
    return value
