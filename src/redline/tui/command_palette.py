"""The dashboard's commands in the command palette (ctrl+p), listed before Textual's own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from textual.app import SystemCommand

from redline.tui.screens.inbox import InboxScreen


class AgentCommands(Protocol):
    """What the palette asks of the app: the commands about the agent and the workspace."""

    def action_trust(self) -> None: ...

    def action_stop_agent(self) -> None: ...

    def action_resume_session(self) -> None: ...


def dashboard_commands(inbox: InboxScreen, agent: AgentCommands) -> Iterator[SystemCommand]:
    """The palette's redline commands, in the order the palette lists them."""
    yield SystemCommand(
        "Apply all",
        "Apply every pending action, top first; stops at the first stale or failing one",
        inbox.action_apply_all,
    )
    yield SystemCommand(
        "Discard all", "Discard every pending action, top first", inbox.action_discard_all
    )
    yield SystemCommand(
        "Re-preview",
        "Recompute the selected stale action against the current files",
        inbox.action_repreview,
    )
    yield SystemCommand(
        "Trust this workspace", "Load this workspace's project plugins", agent.action_trust
    )
    yield SystemCommand(
        "Toggle split view", "Side-by-side or unified diff", inbox.action_toggle_split
    )
    yield SystemCommand(
        "More context",
        "Show more unchanged lines around changes",
        lambda: inbox.action_context(True),
    )
    yield SystemCommand(
        "Less context",
        "Show fewer unchanged lines around changes",
        lambda: inbox.action_context(False),
    )
    yield SystemCommand(
        "Undo last apply", "Restore the files of the last applied action", inbox.action_undo
    )
    yield SystemCommand("Stop agent", "Abort the running agent", agent.action_stop_agent)
    yield SystemCommand(
        "Resume the agent session",
        "Continue this session's agent once its actions are resolved",
        agent.action_resume_session,
    )
