"""Reviewing the team queue from anywhere: list, show and decide across workspaces.

A decision is one call of ``redline_decide`` (security.py), the only writer of
``redline_decisions``: it locks the row, so of two reviewers deciding the same action at
once exactly one wins and the other is told by whom; it records the reviewer the server
knows (``session_user``), never a name the client sends; it compares the view hash the
reviewer's client computed from what it showed with the row's, and announces the decision
when it commits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from redline.teamqueue.mirror import OPEN_STATES
from redline.teamqueue.settings import TeamQueueError, split_team_id

if TYPE_CHECKING:
    import psycopg

# A row's decision is read by its key, in a subquery per row (an index lookup), never
# through a join the planner could turn into a scan of every decision per row.
_DECISION = "(SELECT d.{0} FROM redline_decisions d WHERE d.id = a.decision_id)"
_COLUMNS = (
    "a.team_id, a.workspace, w.path, a.local_id, a.label, a.source, a.applied_by, a.files,"
    " a.added, a.removed, a.proposed_at, a.state, "
    + ", ".join(_DECISION.format(c) for c in ("decision", "decided_name", "decided_at", "reason"))
    + ", a.result_text, a.finished_at, a.patch_hash, a.base_hash, a.closed_by"
)
_FROM = " FROM redline_actions a JOIN redline_workspaces w ON w.id = a.workspace"
#: What :func:`show_action` reads besides: the rest of what a reviewer is shown.
_VIEW = ", a.diff, a.hunks, a.hunk_numbering, a.proposed"


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
        "closed_by": row[20],
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
    # Newest proposal first (the proposal's own time); one instant: the higher local id.
    query += " ORDER BY a.proposed_at DESC, a.workspace, length(a.local_id) DESC, a.local_id DESC"
    rows = conn.execute(("SELECT " + query).encode(), params).fetchall()
    conn.commit()
    return [_action(row) for row in rows]


def show_action(conn: psycopg.Connection[tuple[object, ...]], team_id: str) -> dict[str, Any]:
    """One action with everything a reviewer is shown, and ``view_hash``: the hash of that
    view, which a decision made on it carries (:func:`view_hash_of`)."""
    split_team_id(team_id)
    row = conn.execute(
        ("SELECT " + _COLUMNS + _VIEW + _FROM + " WHERE a.team_id = %s").encode(),
        (team_id,),
    ).fetchone()
    conn.commit()
    if row is None:
        raise TeamQueueError(f"no action {team_id} in the team queue")
    data = _action(row[:21])
    diff, hunks, numbering, proposed = row[21:]
    data["diff"] = diff
    data["hunks"] = [str(h) for h in hunks or []]  # type: ignore[attr-defined]
    data["hunk_numbering"] = numbering
    data["proposed"] = {str(k): str(v) for k, v in dict(proposed or {}).items()}  # type: ignore[call-overload]
    data["editable"] = sorted(data["proposed"])
    data["view_hash"] = view_hash_of(data)
    return data


def view_hash_of(data: dict[str, Any]) -> str:
    """The view hash of an action as :func:`show_action` returns it: computed from the
    values shown, so a row changed after it was read no longer matches."""
    from redline.teamqueue.hashes import view_hash, view_of

    return view_hash(
        view_of(
            team_id=data["id"],
            workspace=data["workspace"]["id"],
            path=data["workspace"]["path"],
            label=data["label"],
            source=data["source"],
            applied_by=data["applied_by"],
            files=data["files"],
            added=data["added"],
            removed=data["removed"],
            diff=data["diff"],
            hunks=data["hunks"],
            numbering=data["hunk_numbering"],
            proposed=data["proposed"],
        )
    )


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


class ViewChanged(TeamQueueError):
    """The row is not what the reviewer was shown (exit 1: show it again)."""


def decide(
    conn: psycopg.Connection[tuple[object, ...]],
    team_id: str,
    verb: str,
    *,
    reason: str = "",
    only: list[str] | None = None,
    edit: tuple[str, str] | None = None,
    view_hash: str | None = None,
) -> Decided:
    """Record ``verb`` on ``team_id`` if it is still open, through ``redline_decide``.

    ``apply``/``discard`` take the whole action, or only the ``only`` parts (``PATH``,
    ``PATH#N``); ``edit`` carries ``(path, text)``: the workspace replaces its proposal
    with the edited one, which waits for its own decision. ``view_hash`` is the hash of
    what the reviewer was shown (:func:`show_action`); without one, the action is read now
    and the decision binds what it holds at this moment. The reviewer is whoever the
    server says is connected."""
    import psycopg

    from redline.teamqueue.mirror import pg_text
    from redline.teamqueue.security import CHANGED, CHANGED_SQLSTATE

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
    # The view is computed again from the row as it is now: a row changed since the
    # reviewer read it no longer gives their hash; the server compares this one with the
    # hash the workspace mirrored (and the workspace's follower with its own record).
    current = show_action(conn, team_id)
    if (
        view_hash is not None
        and view_hash != current["view_hash"]
        and (current["state"] in OPEN_STATES)
    ):
        raise ViewChanged(f"{team_id}: {CHANGED}")
    if current["state"] in OPEN_STATES:
        if only is not None:
            check_only(only, current["files"], current["hunks"])
        if edit is not None and edit[0] not in current["proposed"]:
            raise BadDecision(f"{edit[0]}: not a file of {team_id} that can be edited")
    try:
        with conn.transaction():
            row = conn.execute(
                "SELECT won, workspace, label, decided_by"
                " FROM redline_decide(%s, %s, %s, %s, %s, %s, %s)",
                (
                    team_id,
                    verb,
                    reason,
                    json.dumps(parts_json(only)) if only is not None else None,
                    edit[0] if edit else None,
                    edit[1] if edit else None,
                    current["view_hash"],
                ),
            ).fetchone()
    except psycopg.Error as exc:
        if exc.sqlstate == CHANGED_SQLSTATE:
            raise ViewChanged(f"{team_id}: {CHANGED}") from None
        if isinstance(exc, psycopg.errors.InsufficientPrivilege):
            diag = exc.diag.message_primary or str(exc)
            hint = f" ({exc.diag.message_hint})" if exc.diag.message_hint else ""
            raise TeamQueueError(f"{team_id}: refused: {diag}{hint}") from None
        if isinstance(exc, psycopg.errors.NoDataFound):
            raise TeamQueueError(f"no action {team_id} in the team queue") from None
        raise
    if row is not None and row[0]:
        if edit is not None:
            done = f"replaced by your edit of {edit[0]} (a new action: decide it too)"
        else:
            done = "applied" if verb == "apply" else "discarded"
            if only:
                done += f" (only {', '.join(only)})"
        return Decided(
            True,
            f"Decided: {team_id} ({row[2]}) is to be {done}, by {row[3]}; its workspace "
            f"{row[1]} writes the result back.",
        )
    found = show_action(conn, team_id)
    return Decided(False, decided_text(found))


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
        data["decided_by"] or data.get("closed_by"),
        data["decided_at"],
        data["result"],
    )
