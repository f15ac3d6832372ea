"""The team queue as a review source (``review.source.ReviewSource``): what the dashboard's
one screen reviews with ``redline --queue URL``.

Every workspace's open actions, listed from the team queue's rows (made into listed actions
by :func:`listed_from_row`, the team's half of the one row), each shown as the unified diff
its workspace mirrored, and decided whole: a decision carries the hash of the view the
reviewer read, and each workspace's own follower carries it out — this source never writes
a file. What it cannot do is declared with the reason (:data:`TEAM_CAPABILITIES`).
Every call blocks on the network; the dashboard makes them from worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from redline.review.source import (
    ActionView,
    Capability,
    ListedAction,
    RowsCallback,
    SourceCapabilities,
    SourceOutcome,
    StatusCallback,
    WorkspaceRef,
    epoch,
)
from redline.teamqueue.settings import TeamQueueError

if TYPE_CHECKING:
    from redline.review.session import Decision

#: A row's state other than plain pending, as the list says it.
STATE_NOTE = {
    "conflict": "conflict: decide again",
    "failed": "failed: decide again",
    "refused": "refused by its workspace",
}

_ELSEWHERE = "in its workspace's own dashboard"
#: What the team queue offers a reviewer, and why not the rest.
TEAM_CAPABILITIES = SourceCapabilities(
    parts=Capability.no(
        "The team dashboard decides whole actions: to pick hunks, use `redline pending apply "
        "ID --only PATH#N --queue URL`."
    ),
    edit=Capability.no(
        f"The team queue keeps no file contents: edit an action {_ELSEWHERE} "
        "(or `redline pending edit ID --queue URL`)."
    ),
    repreview=Capability.no(
        f"The team queue cannot re-preview: its workspace re-previews a stale action {_ELSEWHERE}."
    ),
    undo=Capability.no(
        "The team queue carries decisions, not applies: undo an apply in its workspace "
        "(`redline undo` there)."
    ),
    marks=Capability.no("The team dashboard decides one action at a time."),
    rules=Capability.no("Session rules belong to a workspace's dashboard, not the team queue."),
    checks=Capability.no(f"Checks run in the action's workspace, {_ELSEWHERE}."),
)


class Decided(Protocol):
    @property
    def won(self) -> bool: ...

    @property
    def text(self) -> str: ...


class TeamClientLike(Protocol):
    """What this source needs of ``teamqueue.client.TeamClient`` (tests give a fake)."""

    url: str

    def actions(self) -> list[dict[str, Any]]: ...

    def show(self, team_id: str) -> dict[str, Any]: ...

    def decide(self, team_id: str, verb: str, reason: str, view_hash: str) -> Decided: ...

    def watch(
        self,
        stop: threading.Event,
        on_rows: Callable[[list[dict[str, Any]]], object],
        on_status: Callable[[bool, str], object],
    ) -> None: ...

    def close(self) -> None: ...


def listed_from_row(row: dict[str, Any]) -> ListedAction:
    """The listed action of a team queue row (``list_actions`` / ``show_action``): the
    record its workspace mirrored, under its team id ``pa-N@WSID``."""
    space = row.get("workspace") or {}
    state = str(row.get("state") or "pending")
    return ListedAction(
        id=str(row["id"]),
        label=str(row.get("label") or ""),
        source=str(row.get("source") or ""),
        local_id=str(row.get("local_id") or ""),
        files=tuple(str(name) for name in row.get("files") or ()),
        added=int(row.get("added") or 0),
        removed=int(row.get("removed") or 0),
        created_at=epoch(row.get("created_at")),
        workspace=WorkspaceRef(str(space.get("id") or ""), str(space.get("path") or "")),
        applied_by=str(row.get("applied_by") or ""),
        state=state,
        note=STATE_NOTE.get(state, ""),
        has_preview=True,
    )


class TeamSource:
    """The team queue at ``client.url`` as one review source (see the module docstring)."""

    def __init__(self, client: TeamClientLike, *, reviewer: str = "") -> None:
        self.client = client
        self.reviewer = reviewer

    @property
    def title(self) -> str:
        return "team queue"

    @property
    def capabilities(self) -> SourceCapabilities:
        return TEAM_CAPABILITIES

    @property
    def spans_workspaces(self) -> bool:
        return True

    def listed(self) -> Sequence[ListedAction]:
        return [listed_from_row(row) for row in self.client.actions()]

    def allows(self, action: ListedAction) -> SourceCapabilities:
        return TEAM_CAPABILITIES

    def view(self, action_id: str) -> ActionView:
        try:
            data = self.client.show(action_id)
        except TeamQueueError as exc:
            return ActionView(ListedAction(action_id, "", ""), error=str(exc))
        return ActionView(
            listed_from_row(data),
            diff=str(data.get("diff") or ""),
            view_hash=str(data.get("view_hash") or ""),
            hunks=tuple(str(h) for h in data.get("hunks") or ()),
        )

    def decide(
        self, action_id: str, decision: Decision, view: ActionView | None = None
    ) -> SourceOutcome:
        if decision.only:
            return SourceOutcome(False, TEAM_CAPABILITIES.refusal("parts"))
        if view is None or view.action.id != action_id or not view.view_hash:
            # A decision binds what the person read: nothing is sent before it is shown.
            return SourceOutcome(
                False, f"{action_id} is not shown yet: decide once its diff is on the screen."
            )
        try:
            decided = self.client.decide(action_id, decision.verb, decision.reason, view.view_hash)
        except TeamQueueError as exc:
            return SourceOutcome(False, str(exc))
        return SourceOutcome(decided.won, decided.text, lost=not decided.won)

    def gone_text(self, action_id: str) -> str:
        from redline.teamqueue.remote import decided_text

        try:
            return decided_text(self.client.show(action_id))
        except TeamQueueError as exc:
            return f"{action_id} left the team queue ({exc})"

    def edit(self, action_id: str, path: str, text: str) -> SourceOutcome:
        return SourceOutcome(False, TEAM_CAPABILITIES.refusal("edit"))

    def repreview(self, action_id: str) -> SourceOutcome:
        return SourceOutcome(False, TEAM_CAPABILITIES.refusal("repreview"))

    def undo(self, workspace: WorkspaceRef | None = None) -> SourceOutcome:
        return SourceOutcome(False, TEAM_CAPABILITIES.refusal("undo"))

    def conversation_target(self, action_id: str) -> None:
        return None  # comments on a team-queue action are not kept (docs/review-conversation.md)

    def undo_target(self, workspace: WorkspaceRef | None = None) -> str:
        return ""

    def watch(
        self, stop: threading.Event, on_rows: RowsCallback, on_status: StatusCallback
    ) -> None:
        self.client.watch(
            stop, lambda rows: on_rows([listed_from_row(row) for row in rows]), on_status
        )

    def close(self) -> None:
        self.client.close()
