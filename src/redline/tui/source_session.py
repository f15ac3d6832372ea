"""The session of a dashboard that runs no agent: the inbox screen over a review source
(``redline --queue URL``), whose every review call goes to the source instead.

The inbox screen is one screen for every source; what it asks of a session beyond the
review calls (the status line's label, the store of its own actions, rules, the agent's
prompt) is answered here as "nothing": no own actions, no rules, no agent. Its review
calls are never reached (the screen sends them to the source) and say so if they are.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.review.events import Event, ResolvedBy, RunStatus
from redline.review.resolve import EditOutcome, ResolveOutcome
from redline.review.result import ToolResult
from redline.review.session import Capabilities, Decision
from redline.review.source import ReviewSource
from redline.review.store import PendingActionStore

if TYPE_CHECKING:
    from redline.review.provenance import GitBatch
    from redline.rules import RuleSet
    from redline.workspace.queue import WorkspaceQueue

NO_AGENT = "This dashboard runs no agent: it reviews {}."


class SourceSession:
    """A ``tui.protocol.SessionLike`` with no agent and no actions of its own."""

    def __init__(self, source: ReviewSource) -> None:
        self.source = source
        self._store = PendingActionStore()
        caps = source.capabilities
        self._capabilities = Capabilities(
            parts=caps.parts.available,
            edit=caps.edit.available,
            repreview=caps.repreview.available,
            undo=caps.undo.available,
            rules=False,
            checks=False,
        )

    @property
    def no_agent(self) -> str:
        return NO_AGENT.format(self.source.title)

    @property
    def store(self) -> PendingActionStore:
        return self._store

    @property
    def model_label(self) -> str:
        return self.source.title

    @property
    def scripted(self) -> bool:
        return False

    @property
    def resolver(self) -> str:
        return "human"

    @property
    def plugin_errors(self) -> list[Any]:
        return []

    @property
    def untrusted_plugin_dir(self) -> Path | None:
        return None

    @property
    def cwd(self) -> Path:
        return Path.cwd()

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def queue(self) -> WorkspaceQueue | None:
        return None

    @property
    def rules(self) -> RuleSet | None:
        return None

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return lambda: None

    def _no_run(self) -> concurrent.futures.Future[RunStatus]:
        future: concurrent.futures.Future[RunStatus] = concurrent.futures.Future()
        future.set_exception(RuntimeError(self.no_agent))
        return future

    def start_prompt(self, text: str) -> concurrent.futures.Future[RunStatus]:
        return self._no_run()

    def start_resume(self) -> concurrent.futures.Future[RunStatus]:
        return self._no_run()

    def _elsewhere(self, action_id: str) -> str:
        return f"{action_id} is decided through {self.source.title}, not a session."

    def resolve(
        self,
        action: str,
        reason: str,
        action_id: str | None = None,
        by: ResolvedBy = "human",
        only: Sequence[str] | None = None,
        batch: GitBatch | None = None,
    ) -> ResolveOutcome:
        return ResolveOutcome("invalid", self._elsewhere(action_id or "the action"))

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome:
        return ResolveOutcome("invalid", self._elsewhere(action_id))

    def edit(self, action_id: str, path: str, text: str) -> EditOutcome:
        return EditOutcome("invalid", self._elsewhere(action_id), action_id)

    def undo(self) -> ToolResult:
        return ToolResult.error(self.source.capabilities.refusal("undo") or self.no_agent)

    def can_undo(self) -> bool:
        return self.source.capabilities.undo.available

    def abort(self) -> None:
        pass

    def repreview(self, action_id: str) -> ToolResult:
        return ToolResult.error(self._elsewhere(action_id))

    def apply_rules(self) -> list[str]:
        return []

    def waiting_only_on_review(self) -> bool | None:
        return None

    def check_staleness(self, paths: set[str] | None = None) -> None:
        return None

    def trust_workspace(self) -> None:
        return None
