"""Reviewing the team queue from anywhere: list, show and decide across workspaces.

A decision is one ``UPDATE … WHERE state is open``: of two reviewers deciding the same
action at once, PostgreSQL lets exactly one row update through; the other finds the row
decided and is told by whom. The decision copies the patch hash it was made on; the
announcement (``NOTIFY``) goes out when it commits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from redline.teamqueue.db import DECISIONS_CHANNEL
from redline.teamqueue.mirror import OPEN_STATES
from redline.teamqueue.settings import TeamQueueError, split_team_id

if TYPE_CHECKING:
    import psycopg

_COLUMNS = (
    "a.team_id, a.workspace, w.path, a.local_id, a.label, a.source, a.applied_by, a.files,"
    " a.added, a.removed, a.proposed_at, a.state, a.decision, a.decided_by, a.decided_at,"
    " a.reason, a.result_text, a.finished_at, a.patch_hash, a.base_hash"
)
_FROM = " FROM redline_actions a JOIN redline_workspaces w ON w.id = a.workspace"


def _iso(value: object) -> str | None:
    if isinstance(value, datetime):
        return value.astimezone().isoformat(timespec="seconds")
    return None


def _action(row: tuple[Any, ...]) -> dict[str, Any]:
    return {
        "id": row[0],
        "workspace": {"id": row[1], "path": row[2]},
        "local_id": row[3],
        "label": row[4],
        "source": row[5],
        "applied_by": row[6],
        "files": list(row[7] or []),
        "added": row[8],
        "removed": row[9],
        "created_at": _iso(row[10]),
        "state": row[11],
        "decision": row[12],
        "decided_by": row[13],
        "decided_at": _iso(row[14]),
        "reason": row[15],
        "result": row[16],
        "finished_at": _iso(row[17]),
        "patch_hash": row[18],
        "base_hash": row[19],
    }


def list_actions(
    conn: psycopg.Connection[tuple[object, ...]], workspace: str | None = None
) -> list[dict[str, Any]]:
    """The actions a reviewer may decide, of every workspace (or one), newest first."""
    query = _COLUMNS + _FROM + " WHERE a.state = ANY(%s)"
    params: list[object] = [list(OPEN_STATES)]
    if workspace is not None:
        query += " AND a.workspace = %s"
        params.append(workspace)
    query += " ORDER BY a.proposed_at DESC, a.team_id"
    rows = conn.execute(("SELECT " + query).encode(), params).fetchall()
    conn.commit()
    return [_action(row) for row in rows]


def show_action(conn: psycopg.Connection[tuple[object, ...]], team_id: str) -> dict[str, Any]:
    split_team_id(team_id)
    row = conn.execute(
        ("SELECT " + _COLUMNS + ", a.diff" + _FROM + " WHERE a.team_id = %s").encode(),
        (team_id,),
    ).fetchone()
    conn.commit()
    if row is None:
        raise TeamQueueError(f"no action {team_id} in the team queue")
    data = _action(row[:-1])
    data["diff"] = row[-1]
    extra = conn.execute(
        "SELECT hunks, proposed FROM redline_actions WHERE team_id = %s", (team_id,)
    ).fetchone()
    conn.commit()
    data["hunks"] = list(extra[0] or []) if extra else []  # type: ignore[call-overload]
    data["editable"] = sorted(dict(extra[1] or {})) if extra else []  # type: ignore[call-overload]
    return data


def proposed_text(
    conn: psycopg.Connection[tuple[object, ...]], team_id: str, path: str | None
) -> tuple[str, str]:
    """``(path, proposed text)`` of the file of ``team_id`` a remote reviewer edits
    (``path`` None: its only editable file); TeamQueueError naming why not."""
    split_team_id(team_id)
    row = conn.execute(
        "SELECT files, proposed, state FROM redline_actions WHERE team_id = %s", (team_id,)
    ).fetchone()
    conn.commit()
    if row is None:
        raise TeamQueueError(f"no action {team_id} in the team queue")
    files, proposed = list(row[0] or []), dict(row[1] or {})  # type: ignore[call-overload]
    if not proposed:
        raise TeamQueueError(
            f"{team_id} has no proposed text in the team queue to edit (no file preview, "
            "a text too large, or mirrored by an older redline): edit it in its workspace "
            "(`redline pending edit ID -C PATH`)"
        )
    if path is None:
        if len(proposed) != 1:
            raise TeamQueueError(
                f"{team_id} changes several files ({', '.join(sorted(proposed))}); name one "
                "with --file PATH"
            )
        path = next(iter(proposed))
    if path not in proposed:
        why = "is not changed by it" if path not in files else "cannot be edited from here"
        raise TeamQueueError(
            f"--file {path}: {path} {why} (editable: {', '.join(sorted(proposed))})"
        )
    return path, str(proposed[path])


class BadDecision(TeamQueueError):
    """A decision that names what the action does not have (a hunk, a file): bad input."""


def parts_json(only: list[str]) -> dict[str, Any]:
    """A decision's ``--only`` parts as the row stores them, with the hunk numbering they
    were read under (a follower refuses another numbering's)."""
    from redline.workspace.hunks import HUNK_NUMBERING

    return {"numbering": HUNK_NUMBERING, "parts": list(only)}


def check_only(only: list[str], files: list[str], hunks: list[str]) -> None:
    """Every ``--only`` item names a file or hunk of the mirrored proposal: ``PATH``,
    ``PATH#N`` or ``PATH#N-M`` (the workspace checks it again against its own preview)."""
    known = set(hunks)
    paths = set(files) | {h.rsplit("#", 1)[0] for h in hunks}
    for item in only:
        if item in paths:
            continue
        path, sep, numbers = item.rpartition("#") if "#" in item else (item, "", "")
        if not sep:
            if item not in paths:
                raise BadDecision(
                    f"--only {item!r}: not a file of this action (its files: "
                    f"{', '.join(sorted(paths)) or 'none'})"
                )
            continue
        first, dash, last = numbers.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise BadDecision(f"--only {item!r}: expected PATH, PATH#N or PATH#N-M")
        wanted = range(int(first), int(last if dash else first) + 1)
        if not hunks:  # mirrored by an older redline: the workspace checks
            continue
        missing = [n for n in wanted if f"{path}#{n}" not in known]
        if not wanted or missing:
            raise BadDecision(
                f"--only {item!r}: no such hunk (this action's hunks: {', '.join(hunks)})"
            )


@dataclass(frozen=True)
class Decided:
    """One reviewer's decision: ``won`` False when someone else had decided first."""

    won: bool
    text: str


def decide(
    conn: psycopg.Connection[tuple[object, ...]],
    team_id: str,
    verb: str,
    *,
    reviewer: str | None,
    reason: str = "",
    only: list[str] | None = None,
    edit: tuple[str, str] | None = None,
) -> Decided:
    """Record ``verb`` on ``team_id`` if it is still pending, and announce it.

    ``apply``/``discard`` take the whole action, or only the ``only`` parts (``PATH``,
    ``PATH#N``); ``edit`` carries ``(path, text)``: the workspace replaces its proposal
    with the edited one, which waits for its own decision."""
    from redline.teamqueue.mirror import pg_text

    if verb not in ("apply", "discard", "edit"):
        raise TeamQueueError(f"invalid decision {verb!r}: expected apply, discard or edit")
    if (verb == "edit") != (edit is not None):
        raise TeamQueueError("an edit decision carries the edited file and text, nothing else")
    if only is not None and not only:
        raise TeamQueueError("--only: name at least one PATH or PATH#N")
    from redline.teamqueue.edits import MAX_EDIT_CHARS

    if edit is not None and len(edit[1]) > MAX_EDIT_CHARS:
        raise BadDecision(f"{edit[0]}: the edited text is longer than {MAX_EDIT_CHARS} characters")
    if edit is not None and pg_text(edit[1]) != edit[1]:
        raise TeamQueueError(
            f"{edit[0]}: the edited text holds a NUL or an unpaired surrogate, which the "
            "team queue cannot carry; edit it in its workspace"
        )
    split_team_id(team_id)
    with conn.transaction():
        current = conn.execute(
            "SELECT state, files, hunks, proposed FROM redline_actions WHERE team_id = %s",
            (team_id,),
        ).fetchone()
        if current is not None and current[0] in OPEN_STATES:
            files = [str(f) for f in current[1] or []]  # type: ignore[attr-defined]
            if only is not None:
                check_only(only, files, [str(h) for h in current[2] or []])  # type: ignore[attr-defined]
            if edit is not None and edit[0] not in dict(current[3] or {}):  # type: ignore[call-overload]
                raise BadDecision(f"{edit[0]}: not a file of {team_id} that can be edited")
        row = conn.execute(
            "UPDATE redline_actions SET state = 'decided', decision = %s,"
            " decision_hash = patch_hash, decided_by = coalesce(%s, current_user::text),"
            " decided_role = current_user, reason = %s,"
            " decided_at = clock_timestamp(), only_parts = %s, edit_path = %s, edit_text = %s"
            " WHERE team_id = %s AND state = ANY(%s)"
            " RETURNING workspace, label, decided_by",
            (
                verb,
                reviewer,
                reason,
                json.dumps(parts_json(only)) if only is not None else None,
                edit[0] if edit else None,
                edit[1] if edit else None,
                team_id,
                list(OPEN_STATES),
            ),
        ).fetchone()
        if row is not None:
            conn.execute("SELECT pg_notify(%s, %s)", (DECISIONS_CHANNEL, f"{row[0]} {team_id}"))
    if row is not None:
        if edit is not None:
            done = f"replaced by your edit of {edit[0]} (a new action: decide it too)"
        else:
            done = "applied" if verb == "apply" else "discarded"
            if only:
                done += f" (only {', '.join(only)})"
        return Decided(
            True,
            f"Decided: {team_id} ({row[1]}) is to be {done}, by {row[2]}; its workspace "
            f"{row[0]} writes the result back.",
        )
    found = conn.execute(
        "SELECT state, decision, decided_by, decided_at, result_text FROM redline_actions"
        " WHERE team_id = %s",
        (team_id,),
    ).fetchone()
    conn.commit()
    if found is None:
        raise TeamQueueError(f"no action {team_id} in the team queue")
    state, decision, by, at, result = found
    return Decided(False, already_decided(team_id, state, decision, by, _iso(at), result))


def already_decided(
    team_id: str,
    state: object,
    decision: object,
    by: object,
    when: str | None,
    result: object,
) -> str:
    """``pa-3@WS was already decided: apply by alice at … (now applied): …`` — what a
    reviewer is told when someone else decided first."""
    how = f"{decision} by {by}" if decision else f"{state} by {by or 'its workspace'}"
    text = f"{team_id} was already decided: {how}" + (f" at {when}" if when else "")
    text += f" (now {state})" if state != "decided" else " (waiting for its workspace)"
    if result:
        text += f": {result}"
    return text


def decided_text(data: dict[str, Any]) -> str:
    """:func:`already_decided` for an action as :func:`show_action` returns it."""
    return already_decided(
        data["id"],
        data["state"],
        data["decision"],
        data["decided_by"],
        data["decided_at"],
        data["result"],
    )
