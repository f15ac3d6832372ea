"""``redline pending follow``: the local side of the team queue.

It mirrors the workspace's proposals, hears decisions by ``LISTEN``/``NOTIFY`` (and looks
for every decided row after each (re)connect, so a notification missed while offline loses
nothing), applies each one through :func:`redline.review.queued.resolve_queued` and writes
the result back.

A decision is carried out only when all of these hold, else it is refused and logged:

- the row's team id names this workspace and the row's local id;
- a pending local record of that id exists and its patch hash is the decision's (so a
  decision made on another patch, copied from another action, or forged, does nothing);
- the view the reviewer was shown (label, source, files, the mirrored diff, the hunks'
  addresses, the proposed texts, the workspace's path) is the one this workspace's own
  record gives (its view hash): a row relabelled or rewritten after it was mirrored is
  refused here, whatever the database let through — this is the security boundary;
- for an apply, the files are still what the patch was made on (else nothing is written:
  the proposal is carried over the files as they are now, :mod:`redline.teamqueue.rebase`,
  and waits for a new decision under a new id; or, when that merge conflicts, the row is
  ``conflict`` and the action stays pending here, marked stale).

A decision whose local action was already resolved here (a replay, or a crash between the
apply and the write-back) is never carried out again: the row gets the local outcome.

The row is claimed with ``SELECT … FOR UPDATE SKIP LOCKED`` for the whole of its apply, so
two followers of one workspace never work on one decision at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from redline.teamqueue.db import (
    CHANGES_CHANNEL,
    DECISIONS_CHANNEL,
    STOP_CHECK_SECONDS,
    connect,
    failure,
    require_schema,
    retry_wait,
)
from redline.teamqueue.hashes import patch_hash, view_hash
from redline.teamqueue.mirror import mirror, pg_text, record_view
from redline.teamqueue.settings import TeamQueueError, split_team_id, team_id

if TYPE_CHECKING:
    from pathlib import Path

    import psycopg

    from redline.workspace.queue import QueueRecord, WorkspaceQueue

#: How long the follower waits for a notification before looking at the local queue again.
POLL_SECONDS = 0.5
#: Why a decision's parts numbered under another hunk numbering are not carried out.
NUMBERING_REFUSED = "hunk numbers from another redline version; decide again"
#: The shortest time between two passes a notification starts (a flood makes few passes).
WAKE_GAP_SECONDS = 0.02
#: What the follower says when a decision was made on a view its record does not give.
VIEW_MISMATCH = "the reviewed view does not match this workspace's proposal"


@dataclass
class Outcome:
    team_id: str
    state: str
    text: str


@dataclass(frozen=True)
class Extra:
    """A decision's ``--only`` parts (JSON from the row), an edit's file and text, and the
    hash of the view the reviewer decided on (None: not checked, for direct callers)."""

    only_parts: object
    edit_path: object
    edit_text: object
    view_hash: object = None

    def only(self) -> list[str] | str | None:
        """The parts (None: the whole action), or why the row's value is unusable.

        Parts come as ``{"numbering": N, "parts": [...]}``: ``PATH#N`` read under another
        hunk numbering (:data:`~redline.workspace.hunks.HUNK_NUMBERING`) than this
        redline's, or a bare list (written before hunks had a numbering version), would
        name other lines here, so they are refused."""
        from redline.workspace.hunks import HUNK_NUMBERING

        value = self.only_parts
        if value is None:
            return None
        if not isinstance(value, dict) or value.get("numbering") != HUNK_NUMBERING:
            return NUMBERING_REFUSED
        value = value.get("parts")
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(item, str) and item for item in value)
        ):
            return "its --only parts are not a list of PATH or PATH#N"
        return list(value)


@dataclass
class StepReport:
    mirrored: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)


class TeamFollower:
    """The follower of one workspace; :meth:`step` is one pass, :meth:`run` the loop."""

    def __init__(
        self,
        root: Path,
        url: str,
        workspace: str,
        *,
        log: Callable[[str], None] = lambda _line: None,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.root = root
        self.url = url
        self.workspace = workspace
        self.log = log
        self.poll_seconds = poll_seconds
        self.online = False
        self.connects = 0
        self.rebased = False

    # -- one pass ------------------------------------------------------------------------
    def step(
        self,
        conn: psycopg.Connection[tuple[object, ...]],
        *,
        mirror_first: bool = True,
        full: bool = True,
    ) -> StepReport:
        """Mirror new proposals and close rows resolved here (unless ``mirror_first`` is
        False: a notification needs only the decisions; ``full=False`` reads only the
        records the database does not know), then carry out every decision."""
        from redline.workspace.queue import WorkspaceQueue

        report = StepReport()
        with WorkspaceQueue(self.root) as queue:
            if mirror_first:
                done = mirror(conn, self.workspace, self.root, queue, full=full)
                report.mirrored, report.closed = done.added, done.closed
            self.rebased = False
            while True:
                outcome = self._one_decision(conn, queue)
                if outcome is None:
                    break
                report.outcomes.append(outcome)
                self.log(f"{outcome.team_id}: {outcome.state}: {outcome.text}")
            if self.rebased:  # the carried-over proposals, mirrored now rather than later
                done = mirror(conn, self.workspace, self.root, queue, full=False)
                report.mirrored.extend(done.added)
        return report

    def _one_decision(
        self, conn: psycopg.Connection[tuple[object, ...]], queue: WorkspaceQueue
    ) -> Outcome | None:
        with conn.transaction():
            # The oldest decision first (decision ids grow with time); the row, then its
            # decision by its key: two index lookups, whatever the planner knows.
            claimed = conn.execute(
                "SELECT team_id, local_id, decision_id FROM redline_actions"
                " WHERE workspace = %s AND state = 'decided'"
                " ORDER BY decision_id, team_id LIMIT 1 FOR UPDATE SKIP LOCKED",
                (self.workspace,),
            ).fetchone()
            if claimed is None:
                return None
            team, local_id = str(claimed[0]), str(claimed[1])
            row = conn.execute(
                "SELECT decision, patch_hash, decided_name, reason, only_parts, edit_path,"
                " edit_text, view_hash FROM redline_decisions"
                " WHERE id = %s AND team_id = %s AND voided IS NULL",
                (claimed[2], team),
            ).fetchone()
            if row is None:
                state, text = self._refuse(team, "its decision cannot be found (voided?)")
            else:
                verb, hash_, by, reason = (str(v or "") for v in row[:4])
                extra = Extra(row[4], row[5], row[6], str(row[7] or ""))
                try:
                    state, text = self._carry_out(
                        queue, team, local_id, verb, hash_, by, reason, extra
                    )
                except Exception as exc:  # one bad decision must not stop the others
                    state = "failed"
                    text = f"could not be carried out: {type(exc).__name__}: {exc}"
                    self.log(f"{team}: failed: {text}")
            conn.execute(
                "UPDATE redline_actions SET state = %s, result_text = %s,"
                " finished_at = clock_timestamp()"
                " WHERE team_id = %s",
                (state, pg_text(text), team),
            )
            conn.execute("SELECT pg_notify(%s, '')", (CHANGES_CHANNEL,))
        return Outcome(team, state, text)

    def _carry_out(
        self,
        queue: WorkspaceQueue,
        team: str,
        local_id: str,
        verb: str,
        decision_hash: str,
        by: str,
        reason: str,
        extra: Extra | None = None,
    ) -> tuple[str, str]:
        from redline.review.queued import resolve_queued
        from redline.workspace.queue import QueueError

        try:
            named_local, named_workspace = split_team_id(team)
        except TeamQueueError:
            named_local, named_workspace = "", ""
        if named_workspace != self.workspace or named_local != local_id:
            return self._refuse(team, f"it names another workspace or action ({team})")
        if verb not in ("apply", "discard", "edit"):
            return self._refuse(team, f"unknown decision {verb!r}")
        extra = extra or Extra(None, None, None)
        only = extra.only()
        if isinstance(only, str):
            return self._refuse(team, only)
        if verb == "edit" and (
            not isinstance(extra.edit_path, str)
            or not extra.edit_path
            or not isinstance(extra.edit_text, str)
        ):
            return self._refuse(team, "an edit decision without the edited file and text")
        try:
            record = queue.get(local_id)
        except QueueError as exc:
            return self._refuse(team, f"the local record cannot be used: {exc}")
        if record is None:
            return self._already(queue, team, local_id, verb, decision_hash)
        if patch_hash(record) != decision_hash:
            return self._refuse(
                team,
                f"its patch hash does not match the proposal {local_id} this workspace made "
                "(a forged decision, or one made on another patch)",
            )
        if extra.view_hash is not None and extra.view_hash != view_hash(
            record_view(queue, record, self.workspace, self.root)
        ):
            return self._refuse(team, VIEW_MISMATCH)
        if verb in ("apply", "edit"):
            stale = self._stale(queue, record)
            if stale and verb == "edit":
                return "conflict", (
                    f"not edited: the files changed since the proposal ({'; '.join(stale)}); "
                    f"the edit was made on text that is no longer there. {record.id} stays "
                    "pending in its workspace unchanged"
                )
            if stale:
                return self._conflict(queue, record, team, stale)
        note = f"decided by {by} on the team queue"
        if verb == "edit":
            from redline.teamqueue.edits import edit_record

            state, text = edit_record(
                queue, record, self.workspace, str(extra.edit_path), str(extra.edit_text)
            )
            if state == "gone":
                self.rebased = True  # the edited action is mirrored at the end of this pass
                return state, f"{text} ({note})"
            return self._refuse(team, text)
        if only is not None:
            from redline.workspace.hunks import SelectionError, parse_selection

            preview = queue.preview(record)
            try:
                if preview is None:
                    raise SelectionError("this action has no file preview to pick parts of")
                parse_selection(preview, only)
            except SelectionError as exc:
                return self._refuse(team, f"--only: {exc}")
        result = asyncio.run(
            resolve_queued(
                queue,
                local_id,
                verb,
                f"{reason} ({note})" if reason else note,
                only=only,
                reviewer=by,
                via="team",
            )
        )
        if result.is_error:
            return "failed", result.text
        if only is not None:
            self.rebased = True  # the parts left wait under a new id: mirrored now
        return ("applied" if verb == "apply" else "discarded"), result.text

    def _conflict(
        self, queue: WorkspaceQueue, record: QueueRecord, team: str, stale: list[str]
    ) -> tuple[str, str]:
        from redline.teamqueue.rebase import carry_over_disk

        why = "; ".join(stale)
        self.log(f"{team}: conflict: the files changed since the proposal: {why}")
        new_id = carry_over_disk(queue, record, stale)
        if new_id is not None:
            new_team = team_id(self.workspace, new_id)
            self.rebased = True
            return "gone", (
                f"not applied: the files changed since the proposal ({why}); carried over "
                f"them (three-way merge) as {new_team}, which waits for its own decision"
            )
        return "conflict", (
            f"not applied: the files changed since the proposal ({why}); it stays pending "
            f"in its workspace as {record.id}, marked stale"
        )

    def _stale(self, queue: WorkspaceQueue, record: QueueRecord) -> list[str]:
        from redline.workspace.queue.staleness import quick_stale

        return quick_stale(queue.root, record.preview, {})

    def _already(
        self, queue: WorkspaceQueue, team: str, local_id: str, verb: str, decision_hash: str
    ) -> tuple[str, str]:
        from redline.workspace.queue import QueueError, QueueRecord

        resolution = queue.resolution(local_id)
        if resolution is None or resolution.record is None:
            return self._refuse(team, f"this workspace has no pending proposal {local_id}")
        try:
            made = QueueRecord.from_dict(resolution.record, local_id)
        except QueueError:
            return self._refuse(team, f"this workspace has no usable record of {local_id}")
        if patch_hash(made) != decision_hash:
            return self._refuse(
                team, f"its patch hash does not match the proposal {local_id} this workspace made"
            )
        state = {"apply": "applied", "discard": "discarded"}.get(resolution.decision, "gone")
        self.log(f"{team}: already {state} here by {resolution.resolved_by}; not carried out again")
        text = f"already {state} in its workspace by {resolution.resolved_by}"
        if resolution.decision != verb:
            text += f" (the decision was {verb})"
        return state, text + "; not carried out again"

    def _refuse(self, team: str, why: str) -> tuple[str, str]:
        self.log(f"{team}: refused: {why}")
        return "refused", f"refused by its workspace: {why}"

    # -- the loop ------------------------------------------------------------------------
    def run(
        self, stop: threading.Event, on_step: Callable[[StepReport], None] | None = None
    ) -> None:
        """Follow until ``stop`` is set: reconnect with back-off while the database is away
        (the local queue keeps working meanwhile), catch up after every connect."""
        import psycopg

        from redline.workspace.queue import QueueError

        failures = 0
        while not stop.is_set():
            try:
                conn = connect(self.url, autocommit=True)
            except TeamQueueError as exc:
                if self.online or failures == 0:
                    self.log(f"offline: {exc}; the local queue keeps working, retrying")
                self.online = False
                stop.wait(retry_wait(failures))
                failures += 1
                continue
            try:
                require_schema(conn)  # a newer schema stops the follower: fail closed
                conn.execute(f"LISTEN {DECISIONS_CHANNEL}".encode())
                self.connects += 1
                if not self.online:
                    self.log("online: following the team queue")
                self.online, failures = True, 0
                report = self.step(conn)  # the catch-up after every (re)connect
                refused = ""
                if on_step is not None:
                    on_step(report)
                next_look = time.monotonic() + self.poll_seconds
                woke = 0.0
                while not stop.is_set():
                    heard = False
                    wait = max(0.0, min(STOP_CHECK_SECONDS, next_look - time.monotonic()))
                    for _note in conn.notifies(timeout=wait, stop_after=1):
                        heard = True
                    if heard:
                        # A wake-up only, whatever its payload says (any role may NOTIFY):
                        # all those already here make one pass, at most one per WAKE_GAP.
                        for _note in conn.notifies(timeout=0.0):
                            pass
                        stop.wait(max(0.0, woke + WAKE_GAP_SECONDS - time.monotonic()))
                        woke = time.monotonic()
                    look = time.monotonic() >= next_look
                    if not heard and not look:
                        continue
                    try:
                        report = self.step(conn, mirror_first=look, full=False)
                    except TeamQueueError as exc:  # the workspace is not ours to mirror into
                        if str(exc) != refused:
                            self.log(f"refused: {exc}; retrying")
                        refused = str(exc)
                        report = StepReport()
                    if look:
                        next_look = time.monotonic() + self.poll_seconds
                    if on_step is not None:
                        on_step(report)
            except psycopg.Error as exc:
                if self.online:
                    self.log(f"offline: {failure('lost the team queue', exc, self.url)}")
                self.online = False
                stop.wait(retry_wait(failures))
                failures += 1
            except (QueueError, OSError) as exc:
                # The workspace's own queue failed (being created by another process, a
                # full disk): say so and try again, rather than stop following for good.
                self.log(f"the workspace's queue failed: {exc}; retrying")
                stop.wait(retry_wait(failures))
                failures += 1
            finally:
                conn.close()
