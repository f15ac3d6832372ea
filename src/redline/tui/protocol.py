"""What the dashboard needs from a session and a file watcher (structural types only).

The app takes an already-created session, so tests can hand it a small fake with the
same methods while the real ``AgentSession`` lives in ``redline.agent.session``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from redline.agent.events import Event
from redline.tools.pending_action import PendingAction, PendingActionStore
from redline.tools.result import ToolResult


class SessionLike(Protocol):
    store: PendingActionStore
    model_label: str
    scripted: bool
    resolver: str
    plugin_errors: list[Any]
    untrusted_plugin_dir: Path | None
    cwd: Path

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]: ...

    def prompt(self, text: str) -> str: ...

    def resume(self) -> str: ...

    def resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None = None,
        by: str = "human",
    ) -> ToolResult: ...

    def undo(self) -> ToolResult: ...

    def abort(self) -> None: ...

    def repreview(self, action_id: str) -> ToolResult: ...

    def check_staleness(self, paths: set[str] | None = None) -> Any: ...

    def trust_workspace(self) -> Any: ...


class WatcherLike(Protocol):
    def start(self) -> Any: ...

    def stop(self) -> Any: ...


WatcherFactory = Callable[[Path, Callable[[set[str]], None]], WatcherLike]

__all__ = ["PendingAction", "SessionLike", "WatcherFactory", "WatcherLike"]
