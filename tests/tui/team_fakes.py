"""A small fake of the team queue (``teamqueue.client.TeamClient``) and its rows, for the
team source's and the team dashboard's tests (no PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DIFF = (
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n import os\n"
    "-print('hi')\n+log.info('hi')\n x = 1\n"
)


def action(number: int, ws: str, path: str, label: str, source: str = "exec") -> dict[str, Any]:
    return {
        "id": f"pa-{number}@{ws}",
        "workspace": {"id": ws, "path": path},
        "local_id": f"pa-{number}",
        "label": label,
        "source": source,
        "applied_by": "safe_apply",
        "files": ["src/app.py"],
        "added": 1,
        "removed": 1,
        "created_at": "2026-01-02T03:04:05+00:00",
        "state": "pending",
        "decision": None,
        "decided_by": None,
        "decided_at": None,
        "reason": "",
        "result": "",
        "finished_at": None,
        "patch_hash": "p",
        "base_hash": "b",
    }


@dataclass(frozen=True)
class Outcome:
    won: bool
    text: str


class FakeTeamQueue:
    """Rows in memory; ``watch`` reports once, then waits to be stopped. ``online`` False:
    the watch reports the database unreachable instead."""

    url = "postgresql://***@db.example/team"

    def __init__(self, rows: list[dict[str, Any]], *, online: bool = True) -> None:
        self.rows = rows
        self.online = online
        self.decided: list[tuple[str, str, str]] = []
        self.view_hashes: list[str] = []
        self.shows: set[str] | None = None  # None: every action can be shown
        # Decided by someone else first: the decision is lost, with this text.
        self.taken: dict[str, str] = {}
        # Rows that left the list, as show still returns them.
        self.closed: list[dict[str, Any]] = []

    def actions(self) -> list[dict[str, Any]]:
        return list(self.rows)

    def show(self, team_id: str) -> dict[str, Any]:
        from redline.teamqueue.settings import TeamQueueError

        if self.shows is not None and team_id not in self.shows:
            raise TeamQueueError(f"cannot read {team_id}")
        found = next(r for r in [*self.rows, *self.closed] if r["id"] == team_id)
        return found | {"diff": DIFF, "view_hash": f"view-of-{team_id}"}

    def decide(self, team_id: str, verb: str, reason: str, view_hash: str) -> Outcome:
        if team_id in self.taken:
            return Outcome(False, self.taken[team_id])
        self.decided.append((team_id, verb, reason))
        self.view_hashes.append(view_hash)
        return Outcome(True, f"Decided: {team_id} is to be {verb}ed, by alice")

    def watch(
        self,
        stop: threading.Event,
        on_rows: Callable[[list[dict[str, Any]]], object],
        on_status: Callable[[bool, str], object],
    ) -> None:
        if self.online:
            on_status(True, "")
            on_rows(self.actions())
        else:
            on_status(False, "cannot connect to the team queue (postgresql://***@db/team)")
        stop.wait()

    def close(self) -> None:
        pass


ROWS = [
    action(2, "g1a2b3c4d5e6", "/home/ann/api", "Rename print to log.info", "acp:gemini"),
    action(1, "g1a2b3c4d5e6", "/home/ann/api", "Edit src/app.py"),
    action(1, "w9f8e7d6c5b4", "/srv/ci/web", "Fix the build", "mcp:cursor"),
]
