"""A stand-in session for a dashboard opened with no model configured.

The dashboard still opens (a newcomer sees the layout and how to configure a model);
prompting explains what is missing instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from redline.agent.events import Event, EventStream
from redline.tools.pending_action import PendingActionStore
from redline.tools.result import ToolResult


class OfflineSession:
    model_label = "no model configured"
    scripted = False
    resolver = "human"
    untrusted_plugin_dir: Path | None = None

    def __init__(self, cwd: Path, message: str) -> None:
        self.cwd = cwd
        self.message = message
        self.store = PendingActionStore()
        self.plugin_errors: list[Any] = []
        self._events = EventStream("offline")

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return self._events.subscribe(listener)

    def prompt(self, text: str) -> str:
        self._events.emit("error", message=self.message)
        return "error"

    def resume(self) -> str:
        return "done"

    def resolve(
        self, action: str, reason: str, action_id: str | None = None, by: str = "human"
    ) -> ToolResult:
        return ToolResult.error("No pending action to resolve. Nothing to apply or discard.")

    def undo(self) -> ToolResult:
        return ToolResult.error(self.message)

    def abort(self) -> None:
        return None

    def repreview(self, action_id: str) -> ToolResult:
        return ToolResult.error(self.message)

    def check_staleness(self, paths: set[str] | None = None) -> None:
        return None

    def trust_workspace(self) -> None:
        return None

    def close(self) -> None:
        return None
