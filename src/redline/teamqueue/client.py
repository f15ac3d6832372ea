"""The team queue as the team dashboard sees it: list, show, decide, and watch live.

Every method blocks on the network, so the dashboard calls them from worker threads only.
:meth:`TeamClient.watch` is the live side: it ``LISTEN``s for decisions and for other
changes (proposals mirrored, closed, results written back), lists the open actions again
on every notification, and lists them once after every (re)connect, so a notification
missed while offline loses nothing. Nothing here imports Textual.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redline.teamqueue.db import (
    CHANGES_CHANNEL,
    DECISIONS_CHANNEL,
    RETRY_SECONDS,
    STOP_CHECK_SECONDS,
    connect,
    failure,
    require_schema,
    retry_wait,
)
from redline.teamqueue.settings import TeamQueueError

if TYPE_CHECKING:
    import psycopg

    from redline.teamqueue.remote import Decided

#: A full re-read this often even when nothing was announced (a belt to LISTEN's braces).
POLL_SECONDS = 30.0

Rows = list[dict[str, Any]]


class TeamClient:
    """One reviewer's access to the team queue at ``url``.

    ``list``/``show``/``decide`` share one connection (opened on first use, opened again
    after a failure) under a lock; :meth:`watch` uses a connection of its own.
    """

    def __init__(self, url: str, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.url = url
        self.poll_seconds = poll_seconds
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None

    # -- requests --------------------------------------------------------------------------
    def _run(self, what: str, call: Callable[[psycopg.Connection[tuple[object, ...]]], Any]) -> Any:
        import psycopg

        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = connect(self.url)
                    require_schema(self._conn)
                return call(self._conn)
            except psycopg.Error as exc:
                self._drop()
                raise failure(what, exc, self.url) from None
            except TeamQueueError:
                self._drop()
                raise

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def check(self) -> None:
        """Reach the database and check its schema (TeamQueueError, redacted, if not)."""
        self._run("cannot read the team queue", lambda _conn: None)

    def whoami(self) -> str:
        """Who this client decides as, as the server records it: ``Alice A <a@x>``,
        ``alice (team queue role)``, or ``alice (not a reviewer here)``."""
        from redline.teamqueue.members import whoami

        shown: str = self._run("cannot read the team queue", whoami)
        return shown

    def actions(self) -> Rows:
        from redline.teamqueue.remote import list_actions

        rows: Rows = self._run("cannot list the team queue", list_actions)
        return rows

    def show(self, team_id: str) -> dict[str, Any]:
        from redline.teamqueue.remote import show_action

        data: dict[str, Any] = self._run(
            f"cannot read {team_id}", lambda conn: show_action(conn, team_id)
        )
        return data

    def decide(self, team_id: str, verb: str, reason: str, view_hash: str) -> Decided:
        """Decide ``team_id`` as shown: ``view_hash`` is the hash of the view the reviewer
        read (``show(team_id)["view_hash"]``); a row changed since is refused."""
        from redline.teamqueue.remote import Decided, ViewChanged, decide

        try:
            decided: Decided = self._run(
                f"cannot decide {team_id}",
                lambda conn: decide(conn, team_id, verb, reason=reason, view_hash=view_hash),
            )
        except ViewChanged as exc:
            return Decided(False, str(exc))
        return decided

    def close(self) -> None:
        with self._lock:
            self._drop()

    # -- live ------------------------------------------------------------------------------
    def watch(
        self,
        stop: threading.Event,
        on_rows: Callable[[Rows], object],
        on_status: Callable[[bool, str], object],
        *,
        poll_seconds: float | None = None,
    ) -> None:
        """Until ``stop`` is set: hand every fresh list of open actions to ``on_rows`` and
        every change of reachability to ``on_status(online, text)``; reconnect with
        back-off while the database is away."""
        import psycopg

        from redline.teamqueue.remote import list_actions

        poll = self.poll_seconds if poll_seconds is None else poll_seconds
        failures = 0
        online: bool | None = None
        while not stop.is_set():
            try:
                conn = connect(self.url, autocommit=True)
            except TeamQueueError as exc:
                if online is not False:
                    on_status(False, str(exc))
                online = False
                stop.wait(retry_wait(failures))
                failures += 1
                continue
            try:
                require_schema(conn)
                conn.execute(f"LISTEN {DECISIONS_CHANNEL}".encode())
                conn.execute(f"LISTEN {CHANGES_CHANNEL}".encode())
                rows = list_actions(conn)  # the catch-up after every (re)connect
                if online is not True:
                    on_status(True, "")
                online, failures = True, 0
                on_rows(rows)
                next_look = time.monotonic() + poll
                while not stop.is_set():
                    heard = False
                    wait = max(0.0, min(STOP_CHECK_SECONDS, next_look - time.monotonic()))
                    for _note in conn.notifies(timeout=wait, stop_after=1):
                        heard = True
                    if not heard and time.monotonic() < next_look:
                        continue
                    on_rows(list_actions(conn))
                    next_look = time.monotonic() + poll
            except psycopg.Error as exc:
                on_status(False, str(failure("lost the team queue", exc, self.url)))
                online = False
                stop.wait(retry_wait(failures))
                failures += 1
            except TeamQueueError as exc:  # the schema is missing or too new
                on_status(False, str(exc))
                online = False
                stop.wait(RETRY_SECONDS[-1])
            finally:
                conn.close()
