"""The dashboard's session over an external ACP agent (``redline --agent``).

It offers what the dashboard needs from a session (``redline.tui.protocol.SessionLike``):
the store, the event stream, prompt, resolve, undo, abort. The agent runs on a loop of
its own thread; a person's resolutions answer the agent's held requests while its turn
waits, and once the turn ends the agent hears every decision in one more prompt.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from redline.acp.client import AcpError, Resolution, resolution_prompt
from redline.acp.run import MAX_PROMPTS, AcpRun
from redline.acp.spec import AgentSpec
from redline.agent.events import Event, EventStream
from redline.agent.loop_thread import LoopThread
from redline.tools.pending_action import PendingActionStore
from redline.tools.resolve import resolve_pending
from redline.tools.result import ToolResult


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
    ) -> None:
        from redline.agent.session_log import SessionLog
        from redline.sdk import new_session_id
        from redline.workspace.journal import ensure_state_dir, recover

        self.cwd = root.resolve()
        self.spec = spec
        state_dir = ensure_state_dir(self.cwd)
        self.recovery_messages: list[str] = recover(self.cwd)
        self.plugin_errors: list[Any] = []
        self.untrusted_plugin_dir: Path | None = None
        self.store = PendingActionStore()
        sid = session_id or new_session_id()
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
                },
            )
            self.events.subscribe(self._log.write_event)
        self._loop = LoopThread("redline-acp")
        self._run = AcpRun(self.cwd, spec, "human", self.events, self.store)
        self._started = False
        self._closed = False
        self.last_status = ""

    @property
    def agent(self) -> Any:
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
    def prompt(self, text: str) -> str:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the prompt must be a non-empty string")
        self.last_status = self._loop.run(self._prompt(text))
        return self.last_status

    def resume(self) -> str:
        report = self.agent.take_unreported()
        if not report:
            return "done"
        self.last_status = self._loop.run(self._prompt(resolution_prompt(report)))
        return self.last_status

    async def _prompt(self, text: str) -> str:
        agent = self.agent
        self.events.emit("agent_start", model=self.spec.display_name, resolver="human", prompt=text)
        status = "done"
        try:
            if not self._started:
                self._started = True
                await agent.start()
            for _ in range(MAX_PROMPTS):
                stop_reason = await agent.prompt(text)
                if stop_reason == "cancelled":
                    status = "aborted"
                    break
                report: list[Resolution] = agent.take_unreported()
                if not report:
                    break
                text = resolution_prompt(report)
                self.events.emit("notice", message=f"Told the agent:\n{text}")
            else:
                status = "max_turns"
        except AcpError as exc:
            self.events.emit("error", message=str(exc))
            status = "error"
        finally:
            self.events.emit("agent_end", status=status, pending=self.store.count)
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
        by: str = "human",
    ) -> ToolResult:
        return self._loop.run(self._resolve(action, reason, action_id, by))

    async def _resolve(
        self, action: str, reason: str, action_id: str | None, by: str
    ) -> ToolResult:
        result = await resolve_pending(self.store, action, reason, action_id)
        details = result.details if isinstance(result.details, dict) else {}
        if not result.is_error:
            self.events.emit(
                "pending_resolved",
                action_id=details.get("action_id"),
                action=action,
                reason=reason,
                by=by,
                label=details.get("label"),
                source_tool_name=details.get("source_tool_name"),
                result=result.to_dict(),
            )
        return result

    def undo(self) -> ToolResult:
        from redline.workspace.journal import UndoError, undo_last

        try:
            receipt = undo_last(self.cwd)
        except UndoError as exc:
            self.events.emit("notice", message=str(exc))
            return ToolResult.error(str(exc))
        files = list(receipt.files)
        self.events.emit("undone", entry_id=receipt.entry_id, label=receipt.label, files=files)
        with self.agent._lock:
            self.agent._unreported.append(Resolution(receipt.label, "undone", "", receipt.entry_id))
        return ToolResult.text_result(f"Undid {receipt.label} ({', '.join(files)}).")

    def repreview(self, action_id: str) -> ToolResult:
        return ToolResult.error(
            "Re-preview is not available for an external agent's actions; discard it and "
            "ask the agent again."
        )

    def check_staleness(self, paths: set[str] | None = None) -> list[str]:
        from redline.workspace.safe_apply import check_preview

        marked = []
        for action in self.store.snapshot():
            preview = action.preview
            if preview is None or (paths is not None and not paths & set(preview.paths)):
                continue
            reasons = check_preview(self.cwd, preview)
            if reasons and self.store.mark_stale(action.id, "; ".join(reasons)) is not None:
                marked.append(action.id)
        return marked

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
    """Translate ACP activity into the event types the dashboard already shows."""

    def __init__(self, listener: Callable[[Event], None]) -> None:
        self.listener = listener
        self.streaming = False
        self.titles: dict[str, str] = {}

    def _send(self, event: Event, type: str, **data: Any) -> None:
        self.listener(Event(type, event.seq, event.time, event.session_id, data))

    def __call__(self, event: Event) -> None:
        data = event.data
        kind = event.type
        if kind == "acp_message":
            self.streaming = True
            self._send(event, "message_delta", text=str(data.get("text", "")))
            return
        if self.streaming and kind not in ("acp_stderr", "acp_usage"):
            self.streaming = False
            self._send(event, "message_end", text="")
        if kind == "acp_tool_call":
            call_id = str(data.get("tool_call_id", ""))
            name = f"{data.get('kind')}: {data.get('title')}"
            self.titles[call_id] = name
            self._send(
                event, "tool_start", tool_call_id=call_id, name=name, args=data.get("raw_input")
            )
        elif kind == "acp_tool_call_update":
            status = data.get("status")
            if status in ("completed", "failed"):
                call_id = str(data.get("tool_call_id", ""))
                self._send(
                    event,
                    "tool_end",
                    tool_call_id=call_id,
                    name=self.titles.pop(call_id, str(data.get("title") or "tool")),
                    is_error=status == "failed",
                    result={"content": [{"type": "text", "text": str(status)}]},
                )
        elif kind == "acp_plan":
            steps = "; ".join(
                f"[{e.get('status')}] {e.get('content')}" for e in data.get("entries") or []
            )
            self._send(event, "notice", message=f"plan: {steps}")
        elif kind == "acp_agent_exit":
            self._send(event, "notice", message=f"the agent process {data.get('how')}")
        elif not kind.startswith("acp_"):
            self.listener(event)
