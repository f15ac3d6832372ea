"""A workspace's local proposals → rows of the team queue (one way: local is the truth)."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redline.teamqueue.db import CHANGES_CHANNEL
from redline.teamqueue.hashes import HUNK_NUMBERING, base_hash, patch_hash, view_hash, view_of
from redline.teamqueue.settings import TeamQueueError, team_id

if TYPE_CHECKING:
    from pathlib import Path

    import psycopg

    from redline.workspace.queue import QueueRecord, WorkspaceQueue

#: A diff longer than this is cut in the database (the reviewer sees that it was).
MAX_DIFF_CHARS = 1_000_000
#: The proposed texts of one action mirrored for remote edits, at most (else none are).
MAX_PROPOSED_CHARS = 1_000_000
#: States a reviewer may still decide (a refused, conflicting or failed decision left the
#: action pending in its workspace).
OPEN_STATES = ("pending", "conflict", "failed", "refused")


@dataclass
class MirrorResult:
    added: list[str]
    closed: list[str]


def pg_text(text: str) -> str:
    """``text`` as PostgreSQL can store it: no NUL, no lone surrogates (shown as escapes)."""
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def shown_path(root: Path) -> str:
    """The workspace's path as reviewers see it: the real path, so every process that
    follows the workspace (a hook from a symlinked folder, the dashboard) registers the
    same one and a decision's view hash holds whichever carries it out."""
    import os

    return pg_text(os.path.realpath(root))


def register(conn: psycopg.Connection[tuple[object, ...]], workspace: str, root: Path) -> None:
    """Register the workspace (its first registrant, ``session_user``, owns it) or say
    where it is now. A workspace another role owns is refused, by the server's row-level
    security and here first, in words."""
    found = conn.execute(
        "SELECT owner, session_user::text FROM redline_workspaces WHERE id = %s", (workspace,)
    ).fetchone()
    if found is not None and found[0] != found[1]:
        if found[0] is None:
            raise TeamQueueError(
                f"workspace {workspace} has no owner in the team queue yet: the owner of the "
                f"redline tables assigns it (`redline queue grant {found[1]} --agent-host "
                f"--workspace {workspace}`)"
            )
        raise TeamQueueError(
            f"workspace {workspace} belongs to another agent host ({found[0]}); this "
            f"follower connects as {found[1]}: set [queue] workspace_id to an id of its own, "
            "or have the owner of the redline tables reassign it"
        )
    path, host = shown_path(root), pg_text(socket.gethostname())
    if found is None:
        conn.execute(
            "INSERT INTO redline_workspaces (id, path, host) VALUES (%s, %s, %s)"
            " ON CONFLICT (id) DO UPDATE SET path = excluded.path, host = excluded.host,"
            " seen_at = now()",
            (workspace, path, host),
        )
    else:
        conn.execute(
            "UPDATE redline_workspaces SET path = %s, host = %s, seen_at = now() WHERE id = %s",
            (path, host, workspace),
        )


@dataclass
class Shown:
    """What a reviewer anywhere sees of a proposal: its diff, its hunks' addresses
    (``PATH#N``, for ``--only``) and the proposed text of each file it may edit."""

    diff: str
    hunks: list[str]
    proposed: dict[str, str]


def _shown(queue: WorkspaceQueue, record: QueueRecord) -> Shown:
    from redline.workspace.hunks import hunk_units
    from redline.workspace.preview import FileCreate, FileModify
    from redline.workspace.queue import QueueError

    try:
        preview = queue.preview(record)
    except QueueError as exc:
        return Shown(f"(the preview cannot be read: {exc})", [], {})
    if preview is None:
        return Shown("", [], {})
    text = preview.diff()
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + "\n… (cut: see `redline pending show` in the workspace)\n"
    hunks = [pg_text(unit.address) for unit in hunk_units(preview)]
    proposed: dict[str, str] = {}
    if record.applied_by == "preview":  # what `redline pending edit` may edit
        for change in preview.changes:
            # Only a text PostgreSQL stores unchanged: an edit must start from the real one.
            if isinstance(change, (FileModify, FileCreate)) and pg_text(change.new_text) == (
                change.new_text
            ):
                proposed[change.path] = change.new_text
        if sum(len(t) for t in proposed.values()) > MAX_PROPOSED_CHARS:
            proposed = {}
    return Shown(text, hunks, proposed)


def record_view(
    queue: WorkspaceQueue, record: QueueRecord, workspace: str, root: Path
) -> dict[str, object]:
    """What a reviewer is shown of ``record`` once mirrored (the row's values, raw)."""
    shown = _shown(queue, record)
    return view_of(
        team_id=team_id(workspace, record.id),
        workspace=workspace,
        path=shown_path(root),
        label=pg_text(record.label),
        source=pg_text(record.source.canonical),
        applied_by=record.applied_by,
        files=[pg_text(f) for f in record.files],
        added=record.added,
        removed=record.removed,
        diff=pg_text(shown.diff),
        hunks=shown.hunks,
        numbering=HUNK_NUMBERING,
        proposed=shown.proposed,
    )


def mirror(
    conn: psycopg.Connection[tuple[object, ...]],
    workspace: str,
    root: Path,
    queue: WorkspaceQueue,
    *,
    full: bool = True,
) -> MirrorResult:
    """Insert every local pending record not yet in the database, and close the rows of
    this workspace still open there whose record left the local queue here (applied,
    discarded, edited into a new id) — one transaction.

    ``full`` reads (and reconciles) the whole local queue; otherwise only the records the
    database does not know yet are read (the follower's frequent passes)."""
    from redline.workspace.queue import QueueError

    if full:
        records = queue.list()
        local_ids = [r.id for r in records]
    else:
        records, local_ids = [], queue.ids()
    with conn.transaction():
        register(conn, workspace, root)
        rows = conn.execute(
            "SELECT local_id FROM redline_actions WHERE workspace = %s AND state = ANY(%s)",
            (workspace, list(OPEN_STATES)),
        ).fetchall()
        known = {str(row[0]) for row in rows}
        seen = {
            str(row[0])
            for row in conn.execute(
                "SELECT local_id FROM redline_actions WHERE workspace = %s AND local_id = ANY(%s)",
                (workspace, local_ids),
            ).fetchall()
        }
        if not full:
            for local_id in local_ids:
                if local_id in seen:
                    continue
                try:
                    found = queue.get(local_id)
                except QueueError:
                    found = None  # unusable here: `redline pending list` names it
                if found is not None:
                    records.append(found)
        added: list[str] = []
        for record in records:
            if record.id in seen:
                continue
            view = record_view(queue, record, workspace, root)
            hunks = view["hunks"]
            assert isinstance(hunks, dict)
            conn.execute(
                "INSERT INTO redline_actions (team_id, workspace, local_id, label, source,"
                " applied_by, files, added, removed, diff, base_hash, patch_hash, hunks,"
                " proposed, view_hash, hunk_numbering, proposed_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                " to_timestamp(%s))"
                " ON CONFLICT DO NOTHING",
                (
                    view["id"],
                    workspace,
                    record.id,
                    view["label"],
                    view["source"],
                    record.applied_by,
                    json.dumps(view["files"]),
                    record.added,
                    record.removed,
                    view["diff"],
                    base_hash(record),
                    patch_hash(record),
                    json.dumps(hunks["addresses"]),
                    json.dumps(view["proposed"]),
                    view_hash(view),
                    HUNK_NUMBERING,
                    record.created_at,
                ),
            )
            added.append(record.id)
        closed: list[str] = []
        for local_id in sorted(known - set(local_ids)):
            resolution = queue.resolution(local_id)
            if resolution is not None and resolution.decision in ("apply", "discard"):
                state = "applied" if resolution.decision == "apply" else "discarded"
                who = f"local {resolution.resolved_by}"
                text = resolution.result_text
            elif resolution is not None and resolution.replaced_by:
                state, who = "gone", f"local {resolution.resolved_by}"
                text = f"replaced by {team_id(workspace, resolution.replaced_by)}"
                if resolution.decision:
                    text += f" ({resolution.decision})"
            else:
                state, who, text = "gone", "local", "it left the local queue"
            done = conn.execute(
                "UPDATE redline_actions SET state = %s, closed_by = %s, result_text = %s,"
                " finished_at = clock_timestamp()"
                " WHERE workspace = %s AND local_id = %s AND state = ANY(%s)",
                (state, who, pg_text(text), workspace, local_id, list(OPEN_STATES)),
            )
            if done.rowcount:
                closed.append(local_id)
        if added or closed:  # the team dashboards redraw (a wake-up, sent on commit)
            conn.execute("SELECT pg_notify(%s, '')", (CHANGES_CHANNEL,))
    return MirrorResult(added, closed)
