"""Who may do what in one team queue: ``redline queue grant`` / ``revoke`` / ``status``.

Rights live in ``redline_members`` (per database; group roles are cluster-wide). Every
change is made by the owner of the redline tables, in one transaction: the member rows,
then the role's table privileges brought in line with its rights (:func:`sync_privileges`),
so no hand-written GRANT is needed or kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from redline.teamqueue.security import (
    HELD,
    HOST_INSERT,
    HOST_UPDATE,
    LOCK_TIMEOUT,
    OLD_GROUPS,
    TABLES,
    old_members,
    quoted,
    schema_of,
)
from redline.teamqueue.settings import TeamQueueError

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

NOT_OWNER = "must be run as the owner of the redline tables"
DECIDE_SIGNATURE = "redline_decide(text, text, text, jsonb, text, text, text)"


class BadMember(TeamQueueError):
    """Bad input to grant/revoke (a role that does not exist): exit 2."""


class NotOwner(TeamQueueError):
    """Run by a role that does not own the redline tables: exit 1."""


def require_owner(conn: Conn) -> str:
    """The redline tables' schema, if the connected role owns them; else :class:`NotOwner`."""
    row = conn.execute(
        "SELECT pg_catalog.pg_get_userbyid(c.relowner), current_user::text"
        " FROM pg_catalog.pg_class c WHERE c.oid = to_regclass('redline_schema')"
    ).fetchone()
    if row is None:
        raise TeamQueueError("the team queue's tables are missing: run `redline queue init`")
    if row[0] != row[1]:
        raise NotOwner(f"{NOT_OWNER} (they belong to {row[0]}; you are {row[1]})")
    return schema_of(conn)


def role_exists(conn: Conn, role: str) -> bool:
    row = conn.execute("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s", (role,)).fetchone()
    return row is not None


def add_member(
    conn: Conn,
    schema: str,
    role: str,
    right: str,
    *,
    workspace: str | None = None,
    name: str | None = None,
    email: str | None = None,
) -> None:
    s = quoted(conn, schema)
    conn.execute(
        (
            f'INSERT INTO {s}.redline_members (role, "right", workspace, name, email)'
            " VALUES (%s, %s, %s, coalesce(%s, ''), coalesce(%s, ''))"
            " ON CONFLICT (role, \"right\", (coalesce(workspace, ''))) DO UPDATE"
            " SET name = coalesce(%s, redline_members.name),"
            " email = coalesce(%s, redline_members.email)"
        ).encode(),
        (role, right, workspace, name, email, name, email),
    )


def rights_of(conn: Conn, schema: str, role: str) -> set[str]:
    s = quoted(conn, schema)
    rows = conn.execute(
        f'SELECT "right" FROM {s}.redline_members WHERE role = %s AND workspace IS NULL'.encode(),
        (role,),
    ).fetchall()
    return {str(row[0]) for row in rows}


def sync_privileges(conn: Conn, schema: str, role: str) -> None:
    """``role``'s privileges on the redline tables: exactly what its rights need."""
    s, who = quoted(conn, schema), quoted(conn, role)
    rights = rights_of(conn, schema, role)
    tables = ", ".join(f"{s}.{t}" for t in TABLES)
    run: list[str] = [
        f"REVOKE ALL ON {tables} FROM {who} CASCADE",
        f"REVOKE ALL ON FUNCTION {s}.{DECIDE_SIGNATURE}, {s}.redline_is(text) FROM {who}",
    ]
    if rights:
        run += [
            f"GRANT SELECT ON {s}.redline_schema, {s}.redline_members, {s}.redline_workspaces,"
            f" {s}.redline_actions, {s}.redline_decisions TO {who}",
            f"GRANT EXECUTE ON FUNCTION {s}.redline_is(text) TO {who}",
        ]
        usage = conn.execute(
            "SELECT has_schema_privilege(%s, %s, 'USAGE')", (role, schema)
        ).fetchone()
        if not (usage and usage[0]):
            run.append(f"GRANT USAGE ON SCHEMA {s} TO {who}")
    if "reviewer" in rights:
        run.append(f"GRANT EXECUTE ON FUNCTION {s}.{DECIDE_SIGNATURE} TO {who}")
    if "agent-host" in rights:
        for table, columns in HOST_INSERT.items():
            run.append(f"GRANT INSERT ({', '.join(columns)}) ON {s}.{table} TO {who}")
        for table, columns in HOST_UPDATE.items():
            run.append(f"GRANT UPDATE ({', '.join(columns)}) ON {s}.{table} TO {who}")
    for statement in run:
        conn.execute(statement.encode())


def _lock_timeout(conn: Conn) -> None:
    conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'".encode())


def grant(
    conn: Conn,
    role: str,
    right: str,
    *,
    workspaces: list[str] | None = None,
    name: str | None = None,
    email: str | None = None,
) -> list[str]:
    """Give ``role`` a right (and, for an agent host, pre-assign ``workspaces``); the lines
    saying what changed."""
    import psycopg

    said: list[str] = []
    try:
        with conn.transaction():
            _lock_timeout(conn)
            schema = require_owner(conn)
            if not role_exists(conn, role):
                raise BadMember(
                    f"role {role!r} does not exist (queue grant never creates login roles: "
                    f"CREATE ROLE {role} LOGIN first)"
                )
            s = quoted(conn, schema)
            add_member(conn, schema, role, right, name=name, email=email)
            said.append(f"{role} is {article(right)} {right}" + _shown_name(name, email))
            for ident in workspaces or []:
                add_member(conn, schema, role, right, workspace=ident)
                before = conn.execute(
                    f"SELECT owner FROM {s}.redline_workspaces WHERE id = %s".encode(), (ident,)
                ).fetchone()
                conn.execute(
                    (
                        f"INSERT INTO {s}.redline_workspaces (id, path, host, owner)"
                        " VALUES (%s, '', '', %s)"
                        " ON CONFLICT (id) DO UPDATE SET owner = excluded.owner"
                    ).encode(),
                    (ident, role),
                )
                was = f" (was {before[0]})" if before and before[0] and before[0] != role else ""
                said.append(f"workspace {ident} belongs to {role}{was}")
                for other in conn.execute(
                    (
                        f"DELETE FROM {s}.redline_members WHERE workspace = %s AND role <> %s"
                        " RETURNING role"
                    ).encode(),
                    (ident, role),
                ).fetchall():
                    said.append(f"workspace {ident} is no longer assigned to {other[0]}")
            sync_privileges(conn, schema, role)
    except psycopg.errors.LockNotAvailable:
        raise TeamQueueError(HELD) from None
    return said


def article(right: str) -> str:
    return "an" if right[0] in "aeiou" else "a"


def _shown_name(name: str | None, email: str | None) -> str:
    if name and email:
        return f" (decisions name {name} <{email}>)"
    if name or email:
        return f" (decisions name {name or f'<{email}>'})"
    return ""


def revoke(conn: Conn, role: str, what: str, *, workspace: str | None = None) -> list[str]:
    """Take a right (``reviewer``, ``agent-host``, ``all``) or one workspace (``workspace``)
    from ``role``. Revoking a reviewer voids its decisions not yet carried out."""
    import psycopg

    said: list[str] = []
    try:
        with conn.transaction():
            _lock_timeout(conn)
            schema = require_owner(conn)
            s = quoted(conn, schema)
            if workspace is not None:
                gone = conn.execute(
                    (
                        f"DELETE FROM {s}.redline_members WHERE role = %s AND workspace = %s"
                        " RETURNING 1"
                    ).encode(),
                    (role, workspace),
                ).fetchall()
                owned = conn.execute(
                    (
                        f"UPDATE {s}.redline_workspaces SET owner = NULL"
                        " WHERE id = %s AND owner = %s RETURNING id"
                    ).encode(),
                    (workspace, role),
                ).fetchall()
                if not gone and not owned:
                    raise BadMember(f"workspace {workspace} does not belong to {role}")
                said.append(f"workspace {workspace} no longer belongs to {role} (it has no owner)")
                return said
            rights = ("reviewer", "agent-host") if what == "all" else (what,)
            for right in rights:
                # Deleting the row first waits for a decision being made right now, so the
                # voiding below sees it.
                gone = conn.execute(
                    (
                        f'DELETE FROM {s}.redline_members WHERE role = %s AND "right" = %s'
                        " RETURNING 1"
                    ).encode(),
                    (role, right),
                ).fetchall()
                if gone:
                    said.append(f"{role} is no longer {article(right)} {right}")
                if right == "reviewer":
                    said += void_decisions(conn, schema, role)
            if not said:
                raise BadMember(f"{role} has no {' or '.join(rights)} right to revoke")
            if role_exists(conn, role):
                sync_privileges(conn, schema, role)
    except psycopg.errors.LockNotAvailable:
        raise TeamQueueError(HELD) from None
    return said


def void_decisions(conn: Conn, schema: str, role: str) -> list[str]:
    """``role``'s decisions not yet carried out, back to pending (noted in the row)."""
    s = quoted(conn, schema)
    note = f"decision by {role} voided: its reviewer right was revoked; decide again"
    rows = conn.execute(
        (
            f"UPDATE {s}.redline_actions a SET state = 'pending', result_text = %s,"
            " decision_id = NULL"
            f" FROM {s}.redline_decisions d"
            " WHERE d.id = a.decision_id AND a.state = 'decided' AND d.decided_by = %s"
            " RETURNING a.team_id, d.id, d.decision"
        ).encode(),
        (note, role),
    ).fetchall()
    said: list[str] = []
    for team, decision_id, verb in rows:
        conn.execute(
            f"UPDATE {s}.redline_decisions SET voided = %s WHERE id = %s".encode(),
            (note, decision_id),
        )
        said.append(f"voided: {team} ({verb} by {role}): {note}")
    if rows:
        conn.execute("SELECT pg_notify('redline_changes', '')")
    return said


@dataclass
class Status:
    members: list[dict[str, Any]] = field(default_factory=list)
    owners: dict[str, list[str]] = field(default_factory=dict)
    unowned: list[str] = field(default_factory=list)
    connected_as: str = ""
    warnings: list[str] = field(default_factory=list)


def status(conn: Conn) -> Status:
    """Who holds which rights, which workspaces each host owns, and what to worry about."""
    schema = schema_of(conn)
    s = quoted(conn, schema)
    found = Status()
    with conn.transaction():
        me = conn.execute(
            "SELECT session_user::text, r.rolsuper, r.rolbypassrls FROM pg_catalog.pg_roles r"
            " WHERE r.rolname = session_user"
        ).fetchone()
        if me is not None:
            found.connected_as = str(me[0])
            if me[1]:
                found.warnings.append(
                    f"you are connected as {me[0]}, a superuser: superusers pass every check "
                    "of the team queue (row-level security, rights); review as your own role"
                )
            elif me[2]:
                found.warnings.append(
                    f"you are connected as {me[0]}, a BYPASSRLS role: it passes the team "
                    "queue's row-level security; review as a role without BYPASSRLS"
                )
        public = conn.execute(
            "SELECT has_schema_privilege('public', %s, 'CREATE')", (schema,)
        ).fetchone()
        if public and public[0]:
            found.warnings.append(
                f"PUBLIC may create objects in the schema {schema}: any role can add "
                f"tables or functions next to the redline tables (REVOKE CREATE ON SCHEMA "
                f"{schema} FROM PUBLIC)"
            )
        rows = conn.execute(
            (
                f'SELECT role, "right", workspace, name, email FROM {s}.redline_members'
                ' ORDER BY role, "right", workspace NULLS FIRST'
            ).encode()
        ).fetchall()
        for role, right, workspace, name, email in rows:
            if workspace is None:
                found.members.append({"role": role, "right": right, "name": name, "email": email})
        for ident, owner in conn.execute(
            f"SELECT id, owner FROM {s}.redline_workspaces ORDER BY id".encode()
        ).fetchall():
            if owner is None:
                found.unowned.append(str(ident))
            else:
                found.owners.setdefault(str(owner), []).append(str(ident))
    return found


def convert_old_groups(conn: Conn, say: Callable[[str], None]) -> None:
    """Migration 3's part here: the members of the old group roles become member rows,
    and every member's privileges are set from its rights."""
    schema = schema_of(conn)
    s = quoted(conn, schema)
    for group, member in old_members(conn):
        right = OLD_GROUPS[group]
        add_member(conn, schema, member, right)
        say(f"member: {member} is {article(right)} {right} (was in the group role {group})")
    for (role,) in conn.execute(
        f"SELECT DISTINCT role FROM {s}.redline_members ORDER BY role".encode()
    ).fetchall():
        sync_privileges(conn, schema, str(role))


def whoami(conn: Conn) -> str:
    """The connected role as decisions name it, or ``ROLE (not a reviewer here)``."""
    import psycopg

    try:
        row = conn.execute(
            "SELECT session_user::text, m.name, m.email FROM (SELECT 1) one"
            " LEFT JOIN redline_members m ON m.role = session_user::text"
            " AND m.\"right\" = 'reviewer' AND m.workspace IS NULL"
        ).fetchone()
    except psycopg.errors.InsufficientPrivilege:  # no right at all here
        conn.rollback()
        row = conn.execute("SELECT session_user::text, NULL, NULL").fetchone()
    conn.commit()
    assert row is not None
    role, name, email = str(row[0]), row[1], row[2]
    if name is None:
        return f"{role} (not a reviewer here)"
    return display_name(role, str(name), str(email or ""))


def display_name(role: str, name: str, email: str) -> str:
    """How decisions name a reviewer: ``Alice A <a@x>``, else ``alice (team queue role)``."""
    if name and email:
        return f"{name} <{email}>"
    if name:
        return name
    if email:
        return f"<{email}>"
    return f"{role} (team queue role)"


__all__ = [
    "NOT_OWNER",
    "BadMember",
    "NotOwner",
    "Status",
    "add_member",
    "display_name",
    "grant",
    "revoke",
    "status",
    "sync_privileges",
]
