"""What the dashboard needs from a session and a file watcher (structural types only).

The app takes an already-created session, so tests can hand it a small fake with the
same methods while the real ``AgentSession`` lives in ``redline.agent.session``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol

from redline.agent.events import Event
from redline.tools.pending_action import PendingAction, PendingActionStore
from redline.tools.result import ToolResult

# Who resolved an action, as the session records it (the dashboard only passes "human").
ResolvedBy = Literal["agent", "human", "auto"]


class SessionLike(Protocol):
    # Read-only properties: the app never assigns them, and the real session computes some
    # (``model_label``, ``scripted``) and narrows others (``resolver`` is a Literal).
    @property
    def store(self) -> PendingActionStore: ...

    @property
    def model_label(self) -> str: ...

    @property
    def scripted(self) -> bool: ...

    @property
    def resolver(self) -> str: ...

    @property
    def plugin_errors(self) -> list[Any]: ...

    @property
    def untrusted_plugin_dir(self) -> Path | None: ...

    @property
    def cwd(self) -> Path: ...

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]: ...

    def prompt(self, text: str) -> str: ...

    def resume(self) -> str: ...

    def resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None = None,
        by: ResolvedBy = "human",
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

__all__ = ["PendingAction", "ResolvedBy", "SessionLike", "WatcherFactory", "WatcherLike"]
