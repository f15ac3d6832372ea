"""The follower that a session runs for its own workspace (the dashboard, ``redline exec``).

When a team queue is configured for the workspace (``$REDLINE_QUEUE_URL`` or ``[queue]
url``), :func:`following` runs :class:`~redline.teamqueue.follower.TeamFollower` in a
daemon thread for the life of the session, and makes one last pass when the session ends
so its newest proposals are mirrored before the process exits. Without a queue it does
nothing. A problem with the queue never stops the session: it is reported through ``log``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from redline.teamqueue.settings import TeamQueueError, queue_settings, workspace_id

if TYPE_CHECKING:
    from pathlib import Path

    from redline.teamqueue.follower import TeamFollower

#: How long the session's end waits for the follower thread to stop.
STOP_WAIT_SECONDS = 10.0


@contextmanager
def following(
    root: Path, *, log: Callable[[str], None], flag: str | None = None
) -> Iterator[TeamFollower | None]:
    try:
        settings = queue_settings(root, flag)
        for warning in settings.warnings:
            log(f"warning: {warning}")
        url = settings.url
        ident = workspace_id(root, settings.workspace_id) if url else ""
    except TeamQueueError as exc:
        log(f"the team queue is off for this session: {exc}")
        url = None
    if url is None:
        yield None
        return
    from redline.teamqueue.db import connect, require_schema
    from redline.teamqueue.follower import TeamFollower

    follower = TeamFollower(root, url, ident, log=log)
    stop = threading.Event()

    def run() -> None:
        try:
            follower.run(stop)
        except TeamQueueError as exc:
            log(f"the team queue stopped for this session: {exc}")

    thread = threading.Thread(target=run, name="redline-team-queue", daemon=True)
    thread.start()
    try:
        yield follower
    finally:
        stop.set()
        thread.join(STOP_WAIT_SECONDS)
        try:  # the session's last proposals, mirrored before the process ends
            conn = connect(url, autocommit=True)
            try:
                require_schema(conn)
                follower.step(conn)
            finally:
                conn.close()
        except Exception as exc:
            from redline.teamqueue.db import redacted

            log(f"offline: {redacted(str(exc), url)}; `redline pending follow` syncs later")
