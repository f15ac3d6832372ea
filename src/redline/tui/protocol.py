"""What the dashboard needs from a session and a file watcher (structural types only).

The app takes an already-created session, so tests can hand it a small fake with the
same methods while the real ``AgentSession`` lives in ``redline.drivers.model.session``.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from redline.review.events import Event, ResolvedBy, RunStatus
from redline.review.provenance import GitBatch
from redline.review.resolve import EditOutcome, ResolveOutcome
from redline.review.result import ToolResult
from redline.review.session import Capabilities, Decision
from redline.review.store import PendingAction, PendingActionStore

if TYPE_CHECKING:
    from redline.rules import RuleSet
    from redline.workspace.queue import WorkspaceQueue


class SessionLike(Protocol):
    """The dashboard's session: one declared interface, never probed.

    ``capabilities`` says what it offers for its own actions; every other action of the
    workspace (``queue``) is decided, edited and re-previewed through the same calls
    (``decide``, ``edit``, ``repreview``), which route it through the queue's claim.
    """

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

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def queue(self) -> WorkspaceQueue | None:
        """The workspace queue (every process's actions), or None for a session of its own."""
        ...

    @property
    def rules(self) -> RuleSet | None:
        """The review rules in force (session rules are added here), or None."""
        ...

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]: ...

    def start_prompt(self, text: str) -> concurrent.futures.Future[RunStatus]: ...

    def start_resume(self) -> concurrent.futures.Future[RunStatus]: ...

    def resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None = None,
        by: ResolvedBy = "human",
        only: Sequence[str] | None = None,
        batch: GitBatch | None = None,
    ) -> ResolveOutcome: ...

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome:
        """Decide any pending action of the workspace, whoever queued it."""
        ...

    def edit(self, action_id: str, path: str, text: str) -> EditOutcome: ...

    def undo(self) -> ToolResult: ...

    def can_undo(self) -> bool:
        """Whether the workspace has an apply to undo (whoever made it)."""
        ...

    def abort(self) -> None: ...

    def repreview(self, action_id: str) -> ToolResult: ...

    def apply_rules(self) -> list[str]:
        """Let the rules decide what already waits (after a session rule was added)."""
        ...

    def waiting_only_on_review(self) -> bool | None:
        """An external agent's turn holds only requests that wait for review (None: the
        session has no external agent)."""
        ...

    def check_staleness(self, paths: set[str] | None = None) -> Any: ...

    def trust_workspace(self) -> Any: ...


class WatcherLike(Protocol):
    def start(self) -> Any: ...

    def stop(self) -> Any: ...


WatcherFactory = Callable[[Path, Callable[[set[str]], None]], WatcherLike]

__all__ = ["PendingAction", "ResolvedBy", "SessionLike", "WatcherFactory", "WatcherLike"]
