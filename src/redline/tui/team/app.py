"""The team dashboard, ``redline --queue URL``: the dashboard's one screen (the inbox,
``tui/screens/inbox.py``) over the team queue's review source (``teamqueue.source``).

No workspace is needed: the list, the diffs and the decisions live in the team queue, and
each workspace's own follower (``redline pending follow``, or that workspace's dashboard)
carries a decision out — this app never writes a file. What the team queue cannot do (pick
hunks, edit, re-preview, undo, mark, rules, checks, an agent's prompt) is greyed out on the
screen with the reason. Every database call runs on a worker thread; the live list comes
from the source's ``watch`` (``LISTEN``/``NOTIFY`` with a catch-up after every reconnect)
on a worker of its own.
"""

from __future__ import annotations

from redline.teamqueue.source import TeamClientLike, TeamSource
from redline.termtext import one_line as clean
from redline.tui.source_app import SourceApp


class TeamApp(SourceApp):
    TITLE = "redline — team queue"

    def __init__(
        self, client: TeamClientLike, *, reviewer: str, workspace: str | None = None
    ) -> None:
        """``reviewer``: who the server says this client decides as (the top line shows
        it); ``workspace``: show only that workspace's actions at first (``-C PATH``)."""
        super().__init__(
            TeamSource(client, reviewer=reviewer),
            label=f"connected as {clean(reviewer)}",
            workspace=workspace,
        )
        self.reviewer = reviewer
