"""Schema version 3: the server decides who may decide, and a decision binds what was shown.

- ``redline_members(role, right, workspace)``: who may do what in *this* database (group
  roles are cluster-wide, so they no longer say anything). ``right`` is ``reviewer`` or
  ``agent-host``; an agent-host row with a ``workspace`` pre-assigns that id to the role.
- ``redline_decisions``: every decision, inserted only by :data:`DECIDE` — a ``SECURITY
  DEFINER`` function owned by the schema owner, with a fixed ``search_path`` and every name
  schema-qualified, that takes ``decided_by`` from ``session_user``, checks the role is a
  reviewer, refuses a second decision on an action, compares the reviewer's view hash with
  the row's and sends the wake-up itself.
- ``redline_workspaces.owner`` (``session_user``; the client cannot set it) and row-level
  security: a host writes only its own workspaces' rows (results and local closes, never
  a decision); hosts read only their own workspaces' actions and decisions.

:func:`upgrade` is the migration: it also revokes every privilege anyone but the owner held
on the redline tables (hand-written GRANTs included), turns the members of the old group
roles into ``redline_members`` rows, and voids every decision not yet carried out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redline.teamqueue.settings import TeamQueueError

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

#: The redline tables and functions (privileges on them are the owner's to give).
TABLES = (
    "redline_schema",
    "redline_workspaces",
    "redline_actions",
    "redline_decisions",
    "redline_members",
)
RIGHTS = ("reviewer", "agent-host")
#: The old group roles docs/team-queue.md told people to create, and the right each meant.
OLD_GROUPS = {"redline_reviewers": "reviewer", "redline_agents": "agent-host"}
VOIDED_BY_UPGRADE = "decision voided by the schema upgrade; decide again"
#: The SQLSTATE redline_decide raises when the row is not what the reviewer was shown.
CHANGED_SQLSTATE = "RLV01"
CHANGED = "the action changed while you read it; show it again"
LOCK_TIMEOUT = "5s"
HELD = "followers are holding rows: retry, or stop them"

#: The columns an agent host writes (insert) and may change afterwards (update).
HOST_INSERT = {
    "redline_workspaces": ("id", "path", "host", "seen_at"),
    "redline_actions": (
        "team_id",
        "workspace",
        "local_id",
        "label",
        "source",
        "applied_by",
        "files",
        "added",
        "removed",
        "diff",
        "base_hash",
        "patch_hash",
        "proposed_at",
        "hunks",
        "proposed",
        "view_hash",
        "hunk_numbering",
    ),
}
HOST_UPDATE = {
    "redline_workspaces": ("path", "host", "seen_at"),
    "redline_actions": ("state", "result_text", "finished_at", "closed_by"),
}

_OWNED = "(SELECT w.id FROM @S@.redline_workspaces AS w WHERE w.owner = session_user::text)"

SCHEMA_SQL = """
SET LOCAL lock_timeout = '@TIMEOUT@';
LOCK TABLE @S@.redline_workspaces, @S@.redline_actions IN ACCESS EXCLUSIVE MODE;

CREATE TABLE @S@.redline_members (
    role text NOT NULL,
    "right" text NOT NULL CHECK ("right" IN ('reviewer', 'agent-host')),
    workspace text,
    name text NOT NULL DEFAULT '',
    email text NOT NULL DEFAULT '',
    granted_at timestamptz NOT NULL DEFAULT now()
);
-- The lookup every decision and every host's write makes: (role, right) first.
CREATE UNIQUE INDEX redline_members_key
    ON @S@.redline_members (role, "right", (coalesce(workspace, '')));

ALTER TABLE @S@.redline_workspaces ADD COLUMN owner text;
ALTER TABLE @S@.redline_workspaces ALTER COLUMN owner SET DEFAULT session_user;

CREATE TABLE @S@.redline_decisions (
    id bigserial PRIMARY KEY,
    team_id text NOT NULL REFERENCES @S@.redline_actions (team_id),
    workspace text NOT NULL,
    decision text NOT NULL CHECK (decision IN ('apply', 'discard', 'edit')),
    only_parts jsonb,
    edit_path text,
    edit_text text,
    reason text NOT NULL DEFAULT '',
    view_hash text NOT NULL,
    patch_hash text NOT NULL,
    decided_by text NOT NULL,
    decided_name text NOT NULL,
    decided_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    voided text
);
CREATE INDEX redline_decisions_by_action ON @S@.redline_decisions (team_id);
-- Not partial: a "voided IS NULL" index would tempt the planner away from the primary key
-- when a follower joins its decided rows to their decisions.
CREATE INDEX redline_decisions_by_reviewer ON @S@.redline_decisions (decided_by);

ALTER TABLE @S@.redline_actions
    ADD COLUMN view_hash text,
    ADD COLUMN hunk_numbering integer NOT NULL DEFAULT 1,
    ADD COLUMN decision_id bigint REFERENCES @S@.redline_decisions (id),
    ADD COLUMN closed_by text;

-- Past decisions become history rows (who decided them was never checked); a local
-- close keeps its closer in closed_by.
INSERT INTO @S@.redline_decisions (team_id, workspace, decision, only_parts, edit_path,
        edit_text, reason, view_hash, patch_hash, decided_by, decided_name, decided_at, voided)
    SELECT a.team_id, a.workspace, a.decision, a.only_parts, a.edit_path, a.edit_text,
           a.reason, '', coalesce(a.decision_hash, ''), coalesce(a.decided_role, ''),
           coalesce(a.decided_by, '') || ' (before schema 3: not checked)',
           coalesce(a.decided_at, now()),
           CASE WHEN a.state = 'decided' THEN '@VOIDED@' END
    FROM @S@.redline_actions AS a WHERE a.decision IS NOT NULL;
UPDATE @S@.redline_actions AS a SET decision_id = d.id
    FROM @S@.redline_decisions AS d WHERE d.team_id = a.team_id AND a.state <> 'decided';
UPDATE @S@.redline_actions SET closed_by = decided_by
    WHERE decision IS NULL AND decided_by IS NOT NULL;
"""

DROP_OLD_SQL = """
ALTER TABLE @S@.redline_actions
    DROP COLUMN decision,
    DROP COLUMN decision_hash,
    DROP COLUMN decided_by,
    DROP COLUMN decided_role,
    DROP COLUMN reason,
    DROP COLUMN decided_at,
    DROP COLUMN only_parts,
    DROP COLUMN edit_path,
    DROP COLUMN edit_text;
"""

FUNCTIONS_SQL = """
CREATE FUNCTION @S@.redline_is(p_right text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT EXISTS (
        SELECT 1 FROM @S@.redline_members AS m
        WHERE m.role = session_user::text AND m."right" = p_right AND m.workspace IS NULL)
$fn$;
REVOKE ALL ON FUNCTION @S@.redline_is(text) FROM PUBLIC;

CREATE FUNCTION @S@.redline_decide(
    p_team_id text, p_decision text, p_reason text, p_only_parts jsonb,
    p_edit_path text, p_edit_text text, p_view_hash text)
RETURNS TABLE (won boolean, workspace text, label text, decided_by text)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
DECLARE
    v_name text;
    v_email text;
    v_shown text;
    v_row record;
    v_id bigint;
BEGIN
    SELECT m.name, m.email INTO v_name, v_email FROM @S@.redline_members AS m
        WHERE m.role = session_user::text AND m."right" = 'reviewer' AND m.workspace IS NULL
        FOR KEY SHARE OF m;  -- a revoke running now waits, then voids this decision
    IF NOT FOUND THEN
        RAISE EXCEPTION 'role % is not a reviewer of this team queue', session_user
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'the owner of the redline tables runs: redline queue grant ROLE --reviewer';
    END IF;
    IF p_decision IS NULL OR p_decision NOT IN ('apply', 'discard', 'edit') THEN
        RAISE EXCEPTION 'invalid decision %: expected apply, discard or edit', p_decision
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (p_decision = 'edit') <> (p_edit_path IS NOT NULL AND p_edit_text IS NOT NULL)
            OR (p_decision <> 'edit' AND (p_edit_path IS NOT NULL OR p_edit_text IS NOT NULL)) THEN
        RAISE EXCEPTION 'an edit decision carries the edited file and text, nothing else'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_only_parts IS NOT NULL AND NOT (
            pg_catalog.jsonb_typeof(p_only_parts) = 'object'
            AND pg_catalog.jsonb_typeof(p_only_parts -> 'numbering') = 'number'
            AND pg_catalog.jsonb_typeof(p_only_parts -> 'parts') = 'array') THEN
        RAISE EXCEPTION 'the parts of a decision are {"numbering": N, "parts": [...]}'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT a.workspace, a.label, a.state, a.view_hash, a.patch_hash INTO v_row
        FROM @S@.redline_actions AS a WHERE a.team_id = p_team_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no action % in the team queue', p_team_id USING ERRCODE = 'no_data_found';
    END IF;
    IF v_row.state NOT IN ('pending', 'conflict', 'failed', 'refused') THEN
        RETURN QUERY SELECT false, v_row.workspace, v_row.label, NULL::text;
        RETURN;
    END IF;
    IF v_row.view_hash IS NULL OR p_view_hash IS DISTINCT FROM v_row.view_hash THEN
        RAISE EXCEPTION '@CHANGED@' USING ERRCODE = '@CHANGED_STATE@';
    END IF;
    v_shown := CASE
        WHEN v_name <> '' AND v_email <> '' THEN v_name || ' <' || v_email || '>'
        WHEN v_name <> '' THEN v_name
        WHEN v_email <> '' THEN '<' || v_email || '>'
        ELSE session_user::text || ' (team queue role)' END;
    INSERT INTO @S@.redline_decisions (team_id, workspace, decision, only_parts, edit_path,
            edit_text, reason, view_hash, patch_hash, decided_by, decided_name, decided_at)
        VALUES (p_team_id, v_row.workspace, p_decision, p_only_parts, p_edit_path,
            p_edit_text, coalesce(p_reason, ''), v_row.view_hash, v_row.patch_hash,
            session_user::text, v_shown, pg_catalog.clock_timestamp())
        RETURNING id INTO v_id;
    UPDATE @S@.redline_actions AS a SET state = 'decided', decision_id = v_id,
            result_text = '', finished_at = NULL
        WHERE a.team_id = p_team_id;
    -- A wake-up only: followers read what they may (LISTEN/NOTIFY has no privileges).
    PERFORM pg_catalog.pg_notify('redline_decisions', '');
    RETURN QUERY SELECT true, v_row.workspace, v_row.label, v_shown;
END
$fn$;
REVOKE ALL ON FUNCTION
    @S@.redline_decide(text, text, text, jsonb, text, text, text) FROM PUBLIC;
"""

POLICIES_SQL = """
ALTER TABLE @S@.redline_workspaces ENABLE ROW LEVEL SECURITY;
ALTER TABLE @S@.redline_actions ENABLE ROW LEVEL SECURITY;
ALTER TABLE @S@.redline_decisions ENABLE ROW LEVEL SECURITY;
ALTER TABLE @S@.redline_members ENABLE ROW LEVEL SECURITY;

CREATE POLICY redline_read ON @S@.redline_workspaces FOR SELECT USING (true);
CREATE POLICY redline_register ON @S@.redline_workspaces FOR INSERT
    WITH CHECK (owner = session_user::text AND (SELECT @S@.redline_is('agent-host')));
CREATE POLICY redline_relabel ON @S@.redline_workspaces FOR UPDATE
    USING (owner = session_user::text AND (SELECT @S@.redline_is('agent-host')))
    WITH CHECK (owner = session_user::text);

CREATE POLICY redline_read ON @S@.redline_actions FOR SELECT
    USING ((SELECT @S@.redline_is('reviewer')) OR workspace IN @OWNED@);
CREATE POLICY redline_mirror ON @S@.redline_actions FOR INSERT
    WITH CHECK ((SELECT @S@.redline_is('agent-host')) AND workspace IN @OWNED@
                AND state = 'pending' AND decision_id IS NULL);
CREATE POLICY redline_result ON @S@.redline_actions FOR UPDATE
    USING ((SELECT @S@.redline_is('agent-host')) AND workspace IN @OWNED@)
    WITH CHECK (workspace IN @OWNED@ AND state <> 'decided');

CREATE POLICY redline_read ON @S@.redline_decisions FOR SELECT
    USING ((SELECT @S@.redline_is('reviewer')) OR workspace IN @OWNED@);

CREATE POLICY redline_read ON @S@.redline_members FOR SELECT USING (true);
"""


def schema_of(conn: Conn) -> str:
    """The schema the redline tables live in (where ``redline_schema`` is)."""
    row = conn.execute(
        "SELECT n.nspname FROM pg_catalog.pg_class c"
        " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.oid = to_regclass('redline_schema')"
    ).fetchone()
    if row is None:
        raise TeamQueueError("the team queue's tables are missing: run `redline queue init`")
    return str(row[0])


def quoted(conn: Conn, name: str) -> str:
    from psycopg import sql

    return sql.Identifier(name).as_string(conn)


def fill(text: str, schema: str) -> str:
    return (
        text.replace("@OWNED@", _OWNED)
        .replace("@S@", schema)
        .replace("@TIMEOUT@", LOCK_TIMEOUT)
        .replace("@VOIDED@", VOIDED_BY_UPGRADE)
        .replace("@CHANGED@", CHANGED)
        .replace("@CHANGED_STATE@", CHANGED_SQLSTATE)
    )


def granted(conn: Conn, schema: str) -> list[tuple[str, str, str]]:
    """``(table, grantee, privilege)`` for every privilege on a redline table, sequence or
    function held by a role other than its owner (``PUBLIC`` included), from the catalog:
    table-level and column-level (``UPDATE (a, b)``)."""
    rows = conn.execute(
        """
        SELECT c.relname, coalesce(r.rolname, 'PUBLIC'), a.privilege_type, ''
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        CROSS JOIN LATERAL aclexplode(c.relacl) a
        LEFT JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
        WHERE n.nspname = %(s)s AND c.relname LIKE 'redline\\_%%' AND a.grantee <> c.relowner
        UNION ALL
        SELECT c.relname, coalesce(r.rolname, 'PUBLIC'), a.privilege_type, att.attname
        FROM pg_catalog.pg_attribute att
        JOIN pg_catalog.pg_class c ON c.oid = att.attrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        CROSS JOIN LATERAL aclexplode(att.attacl) a
        LEFT JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
        WHERE n.nspname = %(s)s AND c.relname LIKE 'redline\\_%%' AND a.grantee <> c.relowner
        ORDER BY 1, 2, 3, 4
        """,
        {"s": schema},
    ).fetchall()
    found: dict[tuple[str, str, str], list[str]] = {}
    for table, grantee, privilege, column in rows:
        key = (str(table), str(grantee), str(privilege))
        found.setdefault(key, [])
        if column:
            found[key].append(str(column))
    return [
        (table, grantee, f"{privilege} ({', '.join(columns)})" if columns else privilege)
        for (table, grantee, privilege), columns in found.items()
    ]


def revoke_all_grants(conn: Conn, schema: str, say: Callable[[str], None]) -> None:
    """Revoke every privilege on the redline tables from every role but the owner."""
    held = granted(conn, schema)
    for table, grantee, privilege in held:
        say(f"revoked {privilege} on {table} from {grantee}")
    s = quoted(conn, schema)
    for table, grantee in dict.fromkeys((t, g) for t, g, _p in held):
        who = "PUBLIC" if grantee == "PUBLIC" else quoted(conn, grantee)
        conn.execute(f"REVOKE ALL ON {s}.{quoted(conn, table)} FROM {who} CASCADE".encode())
    left = granted(conn, schema)
    if left:
        shown = "; ".join(f"{p} on {t} to {g}" for t, g, p in left)
        raise TeamQueueError(
            f"these privileges could not be revoked by the owner of the redline tables "
            f"(granted by another role): {shown}; revoke them as a superuser, then run "
            "`redline queue init` again"
        )


def old_members(conn: Conn) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT g.rolname, r.rolname FROM pg_catalog.pg_auth_members m"
        " JOIN pg_catalog.pg_roles g ON g.oid = m.roleid"
        " JOIN pg_catalog.pg_roles r ON r.oid = m.member"
        " WHERE g.rolname = ANY(%s) ORDER BY 2, 1",
        (list(OLD_GROUPS),),
    ).fetchall()
    return [(str(group), str(member)) for group, member in rows]


def _fill_view_hashes(conn: Conn, schema: str) -> None:
    """Every row's view hash, from the values it holds (what reviewers were shown); a
    follower still checks it against the proposal its workspace made."""
    from redline.teamqueue.hashes import view_hash

    s = quoted(conn, schema)
    rows = conn.execute(
        (
            f"SELECT a.team_id, a.workspace, w.path, a.label, a.source, a.applied_by, a.files,"
            f" a.added, a.removed, a.diff, a.hunks, a.hunk_numbering, a.proposed"
            f" FROM {s}.redline_actions a JOIN {s}.redline_workspaces w ON w.id = a.workspace"
        ).encode()
    ).fetchall()
    for row in rows:
        digest = view_hash(view_from_row(row))
        conn.execute(
            f"UPDATE {s}.redline_actions SET view_hash = %s WHERE team_id = %s".encode(),
            (digest, row[0]),
        )


def view_from_row(row: Any) -> dict[str, Any]:
    """:func:`~redline.teamqueue.hashes.view_of` of ``(team_id, workspace, path, label,
    source, applied_by, files, added, removed, diff, hunks, numbering, proposed)``."""
    from redline.teamqueue.hashes import view_of

    return view_of(
        team_id=str(row[0]),
        workspace=str(row[1]),
        path=str(row[2]),
        label=str(row[3]),
        source=str(row[4]),
        applied_by=str(row[5]),
        files=[str(f) for f in row[6] or []],
        added=int(row[7]),
        removed=int(row[8]),
        diff=str(row[9]),
        hunks=[str(h) for h in row[10] or []],
        numbering=int(row[11]),
        proposed={str(k): str(v) for k, v in dict(row[12] or {}).items()},
    )


def upgrade(conn: Conn, say: Callable[[str], None]) -> None:
    """Migration 3, inside the caller's transaction (see the module's text)."""
    import psycopg

    schema = schema_of(conn)
    s = quoted(conn, schema)
    try:
        conn.execute(fill(SCHEMA_SQL, s).encode())
    except psycopg.errors.LockNotAvailable:
        raise TeamQueueError(HELD) from None
    revoke_all_grants(conn, schema, say)
    for team, decision, by in conn.execute(
        (
            f"SELECT team_id, decision, coalesce(decided_by, decided_role, '?')"
            f" FROM {s}.redline_actions WHERE state = 'decided' ORDER BY team_id"
        ).encode()
    ).fetchall():
        say(f"voided: {team} ({decision} by {by}): {VOIDED_BY_UPGRADE}")
    conn.execute(
        (
            f"UPDATE {s}.redline_actions SET state = 'pending', result_text = %s,"
            " decision_id = NULL WHERE state = 'decided'"
        ).encode(),
        (VOIDED_BY_UPGRADE,),
    )
    conn.execute(fill(DROP_OLD_SQL, s).encode())
    conn.execute(fill(FUNCTIONS_SQL, s).encode())
    conn.execute(fill(POLICIES_SQL, s).encode())
    _fill_view_hashes(conn, schema)
    for ident, path in conn.execute(
        f"SELECT id, path FROM {s}.redline_workspaces WHERE owner IS NULL ORDER BY id".encode()
    ).fetchall():
        say(
            f"workspace {ident} ({path}) has no owner yet; nothing is mirrored into it until "
            f"you run `redline queue grant ROLE --agent-host --workspace {ident}` for the "
            "role its follower connects as"
        )
