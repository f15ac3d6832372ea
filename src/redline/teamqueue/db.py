"""Connecting to the team queue's PostgreSQL, and its versioned migrations.

Every error that leaves this module is a :class:`TeamQueueError` whose text went through
:func:`redline.redaction.redact_urls` (and has the URL's password removed even where the
driver quotes it), so no command prints a password.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeAlias

from redline.teamqueue.settings import TeamQueueError

if TYPE_CHECKING:
    import psycopg

#: The channel decisions are announced on (by ``redline_decide`` itself). Any role can
#: ``NOTIFY`` and every listener hears every payload, so a notification is only a wake-up:
#: the payload is empty and a listener reads what it may.
DECISIONS_CHANNEL = "redline_decisions"
#: The channel a row's other changes are announced on (a proposal mirrored, closed, or its
#: result written back), for the team dashboard; a wake-up too (empty payload).
CHANGES_CHANNEL = "redline_changes"
CONNECT_TIMEOUT_SECONDS = 5
#: The waits between attempts to reach the database again (the last one repeats).
RETRY_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)
#: How often a wait for notifications stops to see whether it was told to stop.
STOP_CHECK_SECONDS = 0.25


def retry_wait(failures: int) -> float:
    """How long to wait before the next attempt after ``failures`` failed ones."""
    return RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]


#: (version, SQL or a step run in the migration's transaction, given a way to say what it
#: did). Append only: a released migration never changes.
Step: TypeAlias = (
    str | Callable[["psycopg.Connection[tuple[object, ...]]", Callable[[str], None]], None]
)


def _to_3(conn: psycopg.Connection[tuple[object, ...]], say: Callable[[str], None]) -> None:
    from redline.teamqueue.members import convert_old_groups
    from redline.teamqueue.security import upgrade

    upgrade(conn, say)
    convert_old_groups(conn, say)


MIGRATIONS: tuple[tuple[int, Step], ...] = (
    (
        1,
        """
        CREATE TABLE redline_workspaces (
            id text PRIMARY KEY,
            path text NOT NULL,
            host text NOT NULL,
            seen_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE redline_actions (
            team_id text PRIMARY KEY,
            workspace text NOT NULL REFERENCES redline_workspaces (id),
            local_id text NOT NULL,
            label text NOT NULL,
            source text NOT NULL,
            applied_by text NOT NULL,
            files jsonb NOT NULL,
            added integer NOT NULL DEFAULT 0,
            removed integer NOT NULL DEFAULT 0,
            diff text NOT NULL DEFAULT '',
            base_hash text NOT NULL,
            patch_hash text NOT NULL,
            proposed_at timestamptz NOT NULL DEFAULT now(),
            state text NOT NULL DEFAULT 'pending' CHECK (state IN (
                'pending', 'decided', 'applied', 'discarded', 'failed', 'conflict',
                'refused', 'gone')),
            decision text CHECK (decision IN ('apply', 'discard')),
            decision_hash text,
            decided_by text,
            decided_role text,
            reason text NOT NULL DEFAULT '',
            decided_at timestamptz,
            result_text text NOT NULL DEFAULT '',
            finished_at timestamptz,
            UNIQUE (workspace, local_id)
        );
        CREATE INDEX redline_actions_by_state ON redline_actions (workspace, state);
        """,
    ),
    (
        2,
        # What a remote reviewer needs to pick hunks (``--only``) and to edit: the hunks'
        # addresses and each editable file's proposed text; the decision's parts and edit.
        """
        ALTER TABLE redline_actions
            ADD COLUMN hunks jsonb NOT NULL DEFAULT '[]'::jsonb,
            ADD COLUMN proposed jsonb NOT NULL DEFAULT '{}'::jsonb,
            ADD COLUMN only_parts jsonb,
            ADD COLUMN edit_path text,
            ADD COLUMN edit_text text;
        ALTER TABLE redline_actions DROP CONSTRAINT redline_actions_decision_check;
        ALTER TABLE redline_actions ADD CONSTRAINT redline_actions_decision_check
            CHECK (decision IN ('apply', 'discard', 'edit'));
        """,
    ),
    # Who may decide is the server's to say; a decision binds what was shown (security.py).
    (3, _to_3),
)
LATEST = MIGRATIONS[-1][0]


def redacted(text: str, url: str | None = None) -> str:
    """``text`` with URL credentials, and ``url``'s password wherever it appears, hidden."""
    from urllib.parse import unquote, urlsplit

    from redline.redaction import REDACTED, redact_urls

    if url:
        try:
            password = urlsplit(url).password
        except ValueError:
            password = None
        for secret in {password, unquote(password)} if password else ():
            text = text.replace(secret, REDACTED)
    return redact_urls(text)


def failure(what: str, exc: BaseException, url: str) -> TeamQueueError:
    from redline.redaction import redact_url

    cause = " ".join(str(exc).split()) or type(exc).__name__
    return TeamQueueError(redacted(f"{what} ({redact_url(url)}): {cause}", url))


def connect(url: str, *, autocommit: bool = False) -> psycopg.Connection[tuple[object, ...]]:
    """A new connection; TeamQueueError (redacted) when the server cannot be reached."""
    import psycopg

    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except (psycopg.Error, ValueError) as exc:
        raise failure("cannot connect to the team queue", exc, url) from None


@contextmanager
def session(url: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A connection for one command; database errors become TeamQueueError (redacted)."""
    import psycopg

    conn = connect(url)
    try:
        yield conn
    except psycopg.Error as exc:
        raise failure("the team queue refused the request", exc, url) from None
    finally:
        conn.close()


def schema_version(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """The newest migration applied (0: none; ``redline queue init`` has not run)."""
    with conn.transaction():
        row = conn.execute("SELECT to_regclass('redline_schema') IS NOT NULL").fetchone()
        if not row or not row[0]:
            return 0
        found = conn.execute("SELECT coalesce(max(version), 0) FROM redline_schema").fetchone()
    return int(found[0]) if found else 0  # type: ignore[call-overload]


def require_schema(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    version = schema_version(conn)
    if version < LATEST:
        raise TeamQueueError(
            f"the team queue's database has schema version {version}, this redline needs "
            f"{LATEST}: run `redline queue init --queue URL` (once, as a role that may create "
            "tables)"
        )
    if version > LATEST:
        raise TeamQueueError(
            f"the team queue's database has schema version {version}, newer than this "
            f"redline knows ({LATEST}): upgrade redline"
        )


def migrate(
    conn: psycopg.Connection[tuple[object, ...]],
    say: Callable[[str], None] = lambda _line: None,
) -> list[int]:
    """Apply the migrations not yet applied, in one transaction; the versions applied now
    ([] when up to date). Safe to run at once from several processes. Only the owner of the
    redline tables may (``must be run as the owner of the redline tables``); ``say`` hears
    what a migration changed (privileges revoked, decisions voided)."""
    applied: list[int] = []
    with conn.transaction():
        # One initialiser at a time; a second one waits, then finds nothing left to do.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('redline_schema'))")
        exists = conn.execute("SELECT to_regclass('redline_schema') IS NOT NULL").fetchone()
        if exists and exists[0]:
            from redline.teamqueue.members import require_owner

            require_owner(conn)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS redline_schema ("
            " version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        rows = conn.execute("SELECT version FROM redline_schema").fetchall()
        done = {int(row[0]) for row in rows}  # type: ignore[call-overload]
        if done and max(done) > LATEST:
            raise TeamQueueError(
                f"the team queue's database has schema version {max(done)}, newer than "
                f"this redline knows ({LATEST}): upgrade redline"
            )
        for version, step in MIGRATIONS:
            if version in done:
                continue
            if isinstance(step, str):
                conn.execute(step.encode())
            else:
                step(conn, say)
            conn.execute("INSERT INTO redline_schema (version) VALUES (%s)", (version,))
            applied.append(version)
    return applied
