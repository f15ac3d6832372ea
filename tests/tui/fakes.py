"""A small session with the real store and the real resolve path, for dashboard tests.

It has the methods the app calls on ``AgentSession`` and emits the same event classes; the
agent's "run" is a script the test hands in, run on a thread of its own like the real
session's loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from redline.review.decide import decide_queued
from redline.review.events import (
    AgentEnd,
    AgentStart,
    Event,
    EventStream,
    MessageDelta,
    Notice,
    PendingPushed,
    PendingReplaced,
    PendingStale,
    ResolvedBy,
    RunStatus,
    Undone,
)
from redline.review.resolve import ResolveOutcome, resolution_event, resolve_pending
from redline.review.result import ToolResult
from redline.review.session import Capabilities, Decision
from redline.review.store import PendingAction, PendingActionStore
from redline.workspace.preview import FileCreate, FileModify, FileRename, Preview, sha256_bytes
from redline.workspace.queue import WorkspaceQueue

Script = Callable[["FakeSession", str | None], RunStatus]


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
    """The app's view of ``AgentSession``, built from the same event and outcome types."""

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
        self.undo_refusal: str | None = None
        # What the dashboard's undo-availability probe answers (the real one asks the journal).
        self.undo_available = True
        self.trusted = False
        self.staleness_checks: list[set[str] | None] = []
        self.running = False
        self.selections: list[tuple[str, str | None, list[str]]] = []
        self.edits: list[tuple[str, str, str]] = []
        # The workspace queue (tests set one to list other processes' actions) and the
        # review rules (tests set a stand-in that records session rules).
        self.queue: WorkspaceQueue | None = None
        self.rules: Any = None
        self.own_capabilities = Capabilities()

    @property
    def capabilities(self) -> Capabilities:
        return dataclasses.replace(self.own_capabilities, rules=self.rules is not None)

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome:
        """Like the real sessions: its own actions here, another process's through the
        queue's claim (the real review-core path)."""
        if self.queue is not None and self.store.get(action_id) is None:
            return asyncio.run(
                decide_queued(
                    self.queue,
                    action_id,
                    decision.verb,
                    decision.reason,
                    only=decision.only,
                    batch=decision.batch,
                    via=decision.via or "sdk",
                )
            )
        only = list(decision.only) if decision.only else None
        return self.resolve(decision.verb, decision.reason, action_id, decision.by, only)

    def apply_rules(self) -> list[str]:
        return []

    def waiting_only_on_review(self) -> bool | None:
        return None

    # -- the SDK surface -----------------------------------------------------------
    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return self.events.subscribe(listener)

    def emit(self, event: Event) -> Event:
        return self.events.emit(event)

    def start_prompt(self, text: str) -> concurrent.futures.Future[RunStatus]:
        self.prompts.append(text)
        return self._start(self.script, text)

    def start_resume(self) -> concurrent.futures.Future[RunStatus]:
        if self.store.has_pending:
            done: concurrent.futures.Future[RunStatus] = concurrent.futures.Future()
            done.set_result("awaiting_review")
            return done
        self.resumes += 1
        return self._start(self.resume_script, None)

    def _start(
        self, script: Script | None, text: str | None
    ) -> concurrent.futures.Future[RunStatus]:
        # Like the real session: the run goes on elsewhere (here a daemon thread, so a stuck
        # script never holds up the test process) and the future says how it ended.
        future: concurrent.futures.Future[RunStatus] = concurrent.futures.Future()
        self.aborted.clear()
        self.running = True

        def run() -> None:
            self.emit(AgentStart(model=self.model_label, resolver=self.resolver, prompt=text))
            try:
                status = script(self, text) if script is not None else "done"
            except BaseException as exc:
                self.running = False
                future.set_exception(exc)
                return
            self.running = False
            self.emit(AgentEnd(status=status, pending=self.store.count))
            future.set_result(status)

        threading.Thread(target=run, name="fake-agent", daemon=True).start()
        return future

    def push(self, action: PendingAction) -> PendingAction:
        action = self.store.push(action)
        self.emit(
            PendingPushed(
                action_id=action.id,
                label=action.label,
                source_tool_name=action.source_tool_name,
                preview=action.preview.summary() if action.preview else None,
            )
        )
        return action

    def resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None = None,
        by: ResolvedBy = "human",
        only: list[str] | None = None,
        batch: object = None,
    ) -> ResolveOutcome:
        self.resolutions.append((action, reason, action_id, by))
        if only:
            # The granular session's signature: the fake records the picked parts and says so.
            self.selections.append((action, action_id, list(only)))
            verb = "Applied" if action == "apply" else "Discarded"
            kind: Any = "applied" if action == "apply" else "discarded"
            return ResolveOutcome(kind, f"{verb} {len(only)} hunks of {action_id}", reason=reason)
        target = self.store.get(action_id) if action_id else None
        if by == "human" and target is not None and target is not self.store.peek():
            # A person may resolve any action, not only the top (the granular-review rule).
            outcome = asyncio.run(
                resolve_pending(PendingActionStore.single(target), action, reason, action_id)
            )
            if not outcome.is_error:
                self.store.remove(target.id)
        else:
            outcome = asyncio.run(resolve_pending(self.store, action, reason, action_id))
        # The real session's own rule for what a resolution is logged as.
        event = resolution_event(outcome, by)
        if event is not None:
            self.emit(event)
        return outcome

    def edit(self, action_id: str, path: str, text: str) -> ToolResult:
        """The granular session's edit: replace the action with one proposing ``text``."""
        self.edits.append((action_id, path, text))
        old = self.store.get(action_id)
        if old is None or old.preview is None:
            return ToolResult.error(f"no pending action {action_id} with a preview")
        changes = tuple(
            modify(change.path, getattr(change, "old_text", "") or "", text)
            if change.path == path
            else change
            for change in old.preview.changes
        )
        fresh = PendingAction(
            f"{old.label} (edited)",
            old.apply,
            source_tool_name=old.source_tool_name,
            preview=Preview(list(changes)),
        )
        fresh = self.store.replace(action_id, fresh)
        # Like the real sessions, every replacement in the store is a pending_replaced event.
        self.emit(
            PendingReplaced(
                old_action_id=action_id,
                action_id=fresh.id,
                label=fresh.label,
                source_tool_name=fresh.source_tool_name,
                preview=fresh.preview.summary() if fresh.preview is not None else None,
            )
        )
        return ToolResult.text_result(f"Edited {action_id} as {fresh.id}.")

    def undo(self) -> ToolResult:
        if self.undo_refusal is not None:
            # The real session logs a refused undo as a notice and returns the error.
            self.emit(Notice(message=self.undo_refusal))
            return ToolResult.error(self.undo_refusal)
        self.undos += 1
        self.emit(Undone(entry_id=f"{self.undos:06d}", label="the last apply", files=[]))
        return ToolResult.text_result("Undid the last apply.")

    def can_undo(self) -> bool:
        return self.undo_available

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
        fresh = self.store.replace(action_id, fresh)
        self.emit(
            PendingReplaced(
                old_action_id=action_id,
                action_id=fresh.id,
                label=fresh.label,
                source_tool_name=fresh.source_tool_name,
                preview=preview.summary(),
            )
        )
        return ToolResult.text_result(f"Re-previewed {old.label} as {fresh.id}.")

    def check_staleness(self, paths: set[str] | None = None) -> None:
        self.staleness_checks.append(paths)
        for action in self.store.snapshot():
            touched = set(action.preview.paths) if action.preview else set()
            if paths is None or touched & paths:
                reason = f"{sorted(touched & (paths or touched))[0]} changed on disk"
                self.store.mark_stale(action.id, reason)
                self.emit(PendingStale(action_id=action.id, label=action.label, reason=reason))

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
    session.emit(MessageDelta(text="Working on it"))
    session.aborted.wait(10)
    return "aborted"
