"""Helpers for driving the dashboard with a fake session."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.pilot import Pilot


async def wait_until(
    pilot: Pilot[object], condition: Callable[[], bool], timeout: float = 60.0
) -> None:
    """Let the app run until ``condition`` holds (worker threads post back asynchronously)."""
    deadline = time.monotonic() + timeout
    while not condition():
        failure = getattr(pilot.app, "_exception", None)
        if failure is not None:
            raise AssertionError(f"the app failed: {failure!r}") from failure
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.01)
