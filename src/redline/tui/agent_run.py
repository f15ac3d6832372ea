"""The agent's runs as the dashboard follows them.

Each prompt or resume is a run with an id. The bridge stamps session events with the live
run's id, so the events of a run the person stopped are dropped and never reach the next
one. Stopping (or quitting) stops listening at once and asks the session to abort on a
thread of its own: the UI never waits on the agent.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading

from redline.review.events import RUN_SCOPED, RunStatus
from redline.tui.bridge import EventBridge
from redline.tui.messages import StampedEvent
from redline.tui.protocol import SessionLike

log = logging.getLogger(__name__)

# The bridge's run id once the person stopped the run: nothing it still says is live.
DEAD_RUN = -1


class AgentRuns:
    """Which run is live, the future of the last one started, and how the agent's
    process ended (an external agent's, when it ended on its own)."""

    def __init__(self, session: SessionLike, bridge: EventBridge) -> None:
        self.session = session
        self.bridge = bridge
        self._seq = 0
        # The live run's id (0: none).
        self.live = 0
        self.future: concurrent.futures.Future[RunStatus] | None = None
        # The run during which the agent's process ended (its end and error say it once).
        self.exit_run: int | None = None
        self.exit_how = ""

    def begin(self) -> int:
        """Make a new run the live one; its id (the bridge stamps events with it)."""
        self._seq += 1
        self.live = self._seq
        self.bridge.run_id = self.live
        return self.live

    def start(self, text: str | None) -> concurrent.futures.Future[RunStatus]:
        """Prompt the agent with ``text`` (None: resume it) on the session's loop."""
        future = self.session.start_resume() if text is None else self.session.start_prompt(text)
        self.future = future
        return future

    def finish(self, run_id: int) -> bool:
        """Run ``run_id`` ended: True (and nothing is live now) when it was the live one."""
        if run_id != self.live:
            return False
        self.live = 0
        self.bridge.run_id = 0
        return True

    def drop(self) -> None:
        """Stop listening to the live run: whatever it still says is dropped."""
        self.live = 0
        self.bridge.run_id = DEAD_RUN

    def abort(self) -> None:
        """Ask the session to abort the agent, on a thread of its own."""
        threading.Thread(target=self._abort_quietly, name="redline-abort", daemon=True).start()

    def _abort_quietly(self) -> None:
        try:
            self.session.abort()
        except Exception:
            log.exception("aborting the agent failed")

    def dropped(self, stamped: StampedEvent) -> bool:
        """Whether ``stamped`` is a run's event from a run that is no longer live."""
        return (
            isinstance(stamped.event, RUN_SCOPED)
            and stamped.run_id != 0
            and stamped.run_id != self.live
        )

    def exited(self, how: str, run_id: int) -> None:
        """The agent's process ended on its own (``how``) during run ``run_id``."""
        self.exit_run = run_id or None
        self.exit_how = how

    def after_exit(self, stamped: StampedEvent) -> bool:
        """Whether ``stamped`` comes from the run during which the process ended."""
        return self.exit_run is not None and stamped.run_id == self.exit_run

    def held_only(self) -> bool | None:
        """Whether the session's external agent holds only requests that wait for review
        (None: the session has no external agent to ask)."""
        try:
            return self.session.waiting_only_on_review()
        except Exception:
            return None
