"""One workspace as a review source (``review.source.ReviewSource``).

Lists the workspace queue's records as listed actions (from the queue's index: no Preview
is read until :meth:`WorkspaceSource.view`), and decides, edits, re-previews and undoes
through a session's calls (:class:`SessionCalls`, which the dashboard's session and the
drivers' sessions offer; their ``decide`` is ``ReviewSession.decide``, the one decision
path), or, with no session (a workspace nobody has open: issue 45's all-workspaces inbox),
straight through the queue's claim (``review.decide``) — the same code ``redline pending``
runs.

What another process's action allows comes from its record (:func:`record_allows`): an
owner action (a hook's held call) is decided whole unless its process serves parts, an
orphaned one can only be discarded, a hook's cannot be re-previewed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from redline.review.source import (
    ActionView,
    Capability,
    ListedAction,
    RowsCallback,
    SourceCapabilities,
    SourceOutcome,
    StatusCallback,
    WorkspaceRef,
    listed_from_record,
)

if TYPE_CHECKING:
    from redline.review.resolve import EditOutcome, ResolveOutcome
    from redline.review.result import ToolResult
    from redline.review.session import Capabilities, Decision
    from redline.review.store import PendingActionStore
    from redline.workspace.queue import QueueRecord, WorkspaceQueue

log = logging.getLogger(__name__)

# Who decided, as a queue resolution's ``resolved_by`` names them, in words.
_DECIDERS = {
    "person": "a person elsewhere (redline pending or another dashboard)",
    "agent": "the agent",
    "recovery": "recovery after a crash",
}

#: What a session that cannot do something for its own actions says instead (an external
#: agent's session: ACP).
OWN_EXTERNAL = SourceCapabilities(
    parts=Capability.no(
        "An external agent's change resolves only as a whole: apply or discard all of it."
    ),
    edit=Capability.no(
        "An external agent's change cannot be edited before it lands: discard it with a "
        "reason and the agent hears why."
    ),
    repreview=Capability.no(
        "Re-preview is not available for an external agent's actions; discard it and "
        "ask the agent again."
    ),
)
NO_RULES = "This session takes no session rules."
NO_CHECKS = "This session runs no checks."


class SessionCalls(Protocol):
    """The blocking calls of a session that a workspace source decides through
    (``tui.protocol.SessionLike`` has them; their ``decide`` ends in
    ``ReviewSession.decide``)."""

    @property
    def store(self) -> PendingActionStore: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def decide(self, action_id: str, decision: Decision) -> ResolveOutcome: ...

    def edit(self, action_id: str, path: str, text: str) -> EditOutcome: ...

    def repreview(self, action_id: str) -> ToolResult: ...

    def undo(self) -> ToolResult: ...


def session_capabilities(capabilities: Capabilities, *, has_rules: bool) -> SourceCapabilities:
    """What a workspace offers through a session: every decision kind for the workspace's
    actions (each narrowed by its record or the session, :func:`record_allows`,
    :func:`session_allows`), undo, rules and checks as the session declares them."""
    return SourceCapabilities(
        undo=Capability() if capabilities.undo else Capability.no("This session cannot undo."),
        rules=Capability() if capabilities.rules and has_rules else Capability.no(NO_RULES),
        checks=Capability() if capabilities.checks else Capability.no(NO_CHECKS),
    )


def record_allows(record: QueueRecord, base: SourceCapabilities) -> SourceCapabilities:
    """What can be done to another process's queued action now: ``base`` narrowed by its
    record, with the reason for each thing that cannot."""
    from redline.review.decide import hook_waiting_text, owned_by_hook
    from redline.review.queued import parts_refusal

    parts = parts_refusal(record)
    if parts:
        parts += "."
    if record.applied_by == "preview":
        return base.narrowed(parts=parts)
    if owned_by_hook(record):
        return base.narrowed(parts=parts, repreview=f"{hook_waiting_text(record.id)}.")
    whole = (
        f"{record.id} ({record.label}) is applied by the process that queued it: "
        "it cannot be {}; apply or discard it as a whole."
    )
    return base.narrowed(
        parts=parts, edit=whole.format("edited"), repreview=whole.format("re-previewed")
    )


def session_allows(capabilities: Capabilities, base: SourceCapabilities) -> SourceCapabilities:
    """``base`` narrowed by what a session offers for its own actions."""
    return base.narrowed(
        parts="" if capabilities.parts else OWN_EXTERNAL.refusal("parts"),
        edit="" if capabilities.edit else OWN_EXTERNAL.refusal("edit"),
        repreview="" if capabilities.repreview else OWN_EXTERNAL.refusal("repreview"),
    )


def resolution_text(queue: WorkspaceQueue, action_id: str) -> str:
    """How ``action_id`` left the queue, from its logged resolution when there is one:
    ``pa-3 was discarded by a person elsewhere (...) (reason: not needed).``"""
    resolution = None
    try:
        resolution = queue.resolution(action_id)
    except Exception as exc:  # a damaged log only loses the detail
        log.warning("reading the resolution of %s failed: %s", action_id, exc)
    if resolution is None:
        return f"{action_id} is no longer pending (decided elsewhere)."
    decision = resolution.decision
    done = {"apply": "applied", "discard": "discarded"}.get(decision, decision)
    if decision == "replaced" and resolution.replaced_by:
        done = f"replaced by {resolution.replaced_by}"
    by = resolution.resolved_by
    if by == "rule":
        who = f"rule {resolution.rule}" if resolution.rule else "a review rule"
    else:
        who = _DECIDERS.get(by, by)
    reason = f" (reason: {resolution.reason})" if resolution.reason else ""
    return f"{action_id} was {done} by {who}{reason}."


class WorkspaceSource:
    """The actions of one workspace's queue as one review source (see the module
    docstring). ``workspace``: the workspace's id and path, put on every row (a source
    spanning workspaces lists by ``pa-N@WSID`` with ``qualified``)."""

    def __init__(
        self,
        queue: WorkspaceQueue,
        *,
        session: SessionCalls | None = None,
        workspace: WorkspaceRef | None = None,
        qualified: bool = False,
    ) -> None:
        self.queue = queue
        self.session = session
        self.workspace = workspace
        self.qualified = qualified
        self._capabilities = (
            SourceCapabilities(rules=Capability.no(NO_RULES))
            if session is None
            else session_capabilities(session.capabilities, has_rules=True)
        )

    @property
    def title(self) -> str:
        return str(self.queue.root)

    @property
    def capabilities(self) -> SourceCapabilities:
        return self._capabilities

    @property
    def spans_workspaces(self) -> bool:
        return False

    def local_id(self, action_id: str) -> str:
        """``pa-N`` of ``action_id`` (``pa-N`` or ``pa-N@WSID``)."""
        return action_id.partition("@")[0]

    def listed(self) -> Sequence[ListedAction]:
        records = self.queue.list()
        hashes: dict[str, str | None] = {}
        listed = []
        for record in records:
            try:
                changed = self.queue.stale_reasons(record, hashes)
            except Exception as exc:
                log.warning("checking %s for staleness failed: %s", record.id, exc)
                changed = []
            listed.append(
                listed_from_record(
                    record,
                    workspace=self.workspace,
                    qualified=self.qualified,
                    stale_reasons=changed,
                )
            )
        self.queue.remember_hashes()
        return listed

    def _own(self, local_id: str) -> bool:
        return self.session is not None and self.session.store.get(local_id) is not None

    def allows(self, action: ListedAction) -> SourceCapabilities:
        local = action.local_id or self.local_id(action.id)
        if self.session is not None and self._own(local):
            return session_allows(self.session.capabilities, self._capabilities)
        from redline.workspace.queue import QueueError

        try:
            record = self.queue.get(local)
        except QueueError:
            record = None
        if record is None:
            return self._capabilities
        return record_allows(record, self._capabilities)

    def view(self, action_id: str) -> ActionView:
        from redline.workspace.queue import QueueError

        local = self.local_id(action_id)
        try:
            record = self.queue.get(local)
            if record is None:
                return ActionView(
                    ListedAction(action_id, "", ""), error=f"{local} is no longer pending."
                )
            preview = self.queue.preview(record)
        except QueueError as exc:
            return ActionView(ListedAction(action_id, "", ""), error=str(exc))
        listed = listed_from_record(record, workspace=self.workspace, qualified=self.qualified)
        hunks: tuple[str, ...] = ()
        if preview is not None:
            from redline.workspace.hunks import hunk_units

            hunks = tuple(unit.address for unit in hunk_units(preview))
        return ActionView(listed, preview=preview, hunks=hunks)

    def decide(
        self, action_id: str, decision: Decision, view: ActionView | None = None
    ) -> SourceOutcome:
        local = self.local_id(action_id)
        if self.session is not None:
            outcome = self.session.decide(local, decision)
        else:
            from redline.review.decide import decide_queued

            outcome = asyncio.run(
                decide_queued(
                    self.queue,
                    local,
                    decision.verb,
                    decision.reason,
                    only=decision.only,
                    by=decision.by,
                    rule=decision.rule,
                    batch=decision.batch,
                    via=decision.via or "dashboard",
                )
            )
        return SourceOutcome(not outcome.is_error, outcome.text)

    def gone_text(self, action_id: str) -> str:
        return resolution_text(self.queue, self.local_id(action_id))

    def edit(self, action_id: str, path: str, text: str) -> SourceOutcome:
        local = self.local_id(action_id)
        if self.session is not None:
            outcome = self.session.edit(local, path, text)
        else:
            from redline.review.decide import edit_queued

            outcome = asyncio.run(edit_queued(self.queue, local, path, text))
        return SourceOutcome(not outcome.is_error, outcome.text)

    def repreview(self, action_id: str) -> SourceOutcome:
        local = self.local_id(action_id)
        if self.session is not None:
            result = self.session.repreview(local)
            return SourceOutcome(not result.is_error, result.text)
        from redline.review.decide import repreview_queued

        outcome = repreview_queued(self.queue, local)
        return SourceOutcome(not outcome.is_error, outcome.text)

    def undo(self, workspace: WorkspaceRef | None = None) -> SourceOutcome:
        if self.session is not None:
            result = self.session.undo()
            return SourceOutcome(not result.is_error, result.text)
        from redline.review.git_undo import undo
        from redline.workspace.journal import UndoError

        try:
            done = undo(self.queue.root, None)
        except UndoError as exc:
            return SourceOutcome(False, str(exc))
        receipt = done.receipt
        return SourceOutcome(True, receipt.message or f"Undone: {receipt.label}.")

    def watch(
        self, stop: threading.Event, on_rows: RowsCallback, on_status: StatusCallback
    ) -> None:
        from redline.review.follower import follow

        changed = threading.Event()
        unsubscribe = follow(self.queue, changed.set)
        try:
            on_status(True, "")
            on_rows(self.listed())
            while not stop.is_set():
                if changed.wait(0.2):
                    changed.clear()
                    on_rows(self.listed())
        finally:
            unsubscribe()

    def close(self) -> None:
        pass
