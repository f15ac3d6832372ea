"""A small session with the real store and the real resolve path, for dashboard tests.

It has the methods the app calls on ``AgentSession``; the agent's "run" is a script the
test hands in, executed on the worker thread that calls ``prompt``/``resume``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from redline.agent.events import Event, EventStream
from redline.tools.pending_action import PendingAction, PendingActionStore
from redline.tools.resolve import resolve_pending
from redline.tools.result import ToolResult
from redline.workspace.preview import FileCreate, FileModify, FileRename, Preview, sha256_bytes

Script = Callable[["FakeSession", str | None], str]


def modify(path: str, old: str, new: str) -> FileModify:
    return FileModify(path, sha256_bytes(old.encode()), old, new)


def make_action(
    label: str,
    *,
    path: str = "src/app.py",
    old: str = "a = 1\n",
    new: str = "a = 2\n",
    source: str = "edit",
    fail_with: str | None = None,
    preview: Preview | None = None,
    details: Any = None,
    applied: list[str] | None = None,
) -> PendingAction:
    """An action whose apply records its label (or fails with ``fail_with``)."""

    def apply(reason: str) -> ToolResult:
        if fail_with is not None:
            return ToolResult.error(fail_with)
        if applied is not None:
            applied.append(label)
        return ToolResult.text_result(f"Applied {label}. Reason: {reason}")

    if preview is None and details is None:
        preview = Preview([modify(path, old, new)])
    return PendingAction(label, apply, source_tool_name=source, preview=preview, details=details)


def multi_file_preview() -> Preview:
    return Preview(
        [
            modify("src/app.py", "import os\n\nx = 1\n", "import os\n\nx = 2\n"),
            FileCreate("src/new_module.py", "def hello():\n    return 'hi'\n"),
            FileRename("docs/old.md", "docs/new.md", sha256_bytes(b"x")),
        ]
    )


class PluginProblem:
    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class FakeSession:
    def __init__(
        self,
        *,
        cwd: Path = Path("/workspace/demo"),
        script: Script | None = None,
        resume_script: Script | None = None,
        model_label: str = "scripted:demo-plan.json",
        scripted: bool = True,
        resolver: str = "human",
        plugin_errors: list[Any] | None = None,
        untrusted_plugin_dir: Path | None = None,
    ) -> None:
        self.cwd = cwd
        self.store = PendingActionStore(clock=lambda: 0.0)
        self.events = EventStream("fake-session", clock=lambda: 0.0)
        self.model_label = model_label
        self.scripted = scripted
        self.resolver = resolver
        self.plugin_errors: list[Any] = list(plugin_errors or [])
        self.untrusted_plugin_dir = untrusted_plugin_dir
        self.script = script
        self.resume_script = resume_script
        self.aborted = threading.Event()
        self.prompts: list[str] = []
        self.resumes = 0
        self.resolutions: list[tuple[str, str, str | None, str]] = []
        self.undos = 0
        self.trusted = False
        self.staleness_checks: list[set[str] | None] = []
        self.running = False

    # -- the SDK surface -----------------------------------------------------------
    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return self.events.subscribe(listener)

    def emit(self, type: str, **data: Any) -> Event:
        return self.events.emit(type, **data)

    def prompt(self, text: str) -> str:
        self.prompts.append(text)
        return self._run(self.script, text)

    def resume(self) -> str:
        if self.store.has_pending:
            return "awaiting_review"
        self.resumes += 1
        return self._run(self.resume_script, None)

    def _run(self, script: Script | None, text: str | None) -> str:
        self.aborted.clear()
        self.running = True
        self.emit("agent_start")
        try:
            status = script(self, text) if script is not None else "done"
        finally:
            self.running = False
        self.emit("agent_end", status=status)
        return status

    def push(self, action: PendingAction) -> PendingAction:
        self.store.push(action)
        self.emit(
            "pending_pushed",
            action_id=action.id,
            label=action.label,
            source_tool_name=action.source_tool_name,
            preview=action.preview.summary() if action.preview else None,
        )
        return action

    def resolve(
        self, action: str, reason: str, action_id: str | None = None, by: str = "human"
    ) -> ToolResult:
        self.resolutions.append((action, reason, action_id, by))
        pending = self.store.get(action_id) if action_id else self.store.peek()
        result = asyncio.run(resolve_pending(self.store, action, reason, action_id))
        details = result.details if isinstance(result.details, dict) else {}
        if result.is_error and details.get("action_id"):
            # The real session reports refused and failed resolutions as a failed notice.
            self.emit(
                "notice",
                message=result.text,
                action_id=details["action_id"],
                action=action,
                by=by,
                failed=True,
            )
        if not result.is_error and pending is not None:
            self.emit(
                "pending_resolved",
                action_id=pending.id,
                action=action,
                label=pending.label,
                source_tool_name=pending.source_tool_name,
                reason=reason,
                by=by,
                result=result.to_dict(),
            )
        return result

    def undo(self) -> ToolResult:
        self.undos += 1
        self.emit("undone", label="the last apply")
        return ToolResult.text_result("Undid the last apply.")

    def abort(self) -> None:
        self.aborted.set()

    def repreview(self, action_id: str) -> ToolResult:
        old = self.store.get(action_id)
        if old is None:
            return ToolResult.error(f"no pending action {action_id}")
        preview = Preview([modify("src/app.py", "a = 1.5\n", "a = 3\n")])
        fresh = PendingAction(
            old.label, old.apply, source_tool_name=old.source_tool_name, preview=preview
        )
        self.store.replace(action_id, fresh)
        self.emit(
            "pending_replaced", old_action_id=action_id, action_id=fresh.id, label=fresh.label
        )
        return ToolResult.text_result(f"Re-previewed {old.label} as {fresh.id}.")

    def check_staleness(self, paths: set[str] | None = None) -> None:
        self.staleness_checks.append(paths)
        for action in self.store.snapshot():
            touched = set(action.preview.paths) if action.preview else set()
            if paths is None or touched & paths:
                reason = f"{sorted(touched & (paths or touched))[0]} changed on disk"
                self.store.mark_stale(action.id, reason)
                self.emit("pending_stale", action_id=action.id, reason=reason)

    def trust_workspace(self) -> None:
        self.trusted = True
        self.untrusted_plugin_dir = None

    def close(self) -> None:
        pass


class FakeWatcher:
    """Stands in for the watchfiles watcher; tests call ``fire`` to report changed paths."""

    instances: ClassVar[list[FakeWatcher]] = []

    def __init__(self, root: Path, on_change: Callable[[set[str]], None]) -> None:
        self.root = root
        self.on_change = on_change
        self.started = False
        self.stopped = False
        FakeWatcher.instances.append(self)

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True

    def fire(self, *paths: str) -> None:
        thread = threading.Thread(target=self.on_change, args=({*paths},))
        thread.start()
        thread.join()


def wait_for_abort_script(session: FakeSession, _text: str | None) -> str:
    """A run that streams a little, then waits until it is aborted."""
    session.emit("message_delta", text="Working on it")
    session.aborted.wait(10)
    return "aborted"
