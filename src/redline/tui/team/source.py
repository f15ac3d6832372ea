"""What the team dashboard needs of the team queue (``teamqueue.client.TeamClient``).

Every call blocks; the dashboard makes them from worker threads only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

Rows = list[dict[str, Any]]


class Decision(Protocol):
    @property
    def won(self) -> bool: ...

    @property
    def text(self) -> str: ...


class TeamSource(Protocol):
    url: str

    def actions(self) -> Rows: ...

    def show(self, team_id: str) -> dict[str, Any]: ...

    def decide(self, team_id: str, verb: str, reason: str, view_hash: str) -> Decision: ...

    def watch(
        self,
        stop: threading.Event,
        on_rows: Callable[[Rows], object],
        on_status: Callable[[bool, str], object],
    ) -> None: ...

    def close(self) -> None: ...
