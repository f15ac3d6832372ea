"""A real PostgreSQL server for the team queue's tests (``@pytest.mark.postgres``).

One server per test session (per xdist worker), started from Debian's ``postgresql``
package: ``initdb`` into a folder under /var/tmp that the ``postgres`` user can reach
(never root's private temp folders), run through ``runuser -u postgres`` when the tests
run as root (PostgreSQL refuses root), listening on 127.0.0.1 only, on a free port, with a
password (so the tests can check it never shows). Each test gets its own database.

Without the binaries every such test skips with a reason; under ``CI=true`` that skip is a
failure (tests/conftest.py).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PASSWORD = "pg-s3cret-Zq7"
USER = "redline_admin"


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PgServer:
    bin_dir: Path
    data: Path
    port: int
    as_postgres: bool

    def _cmd(self, *args: str) -> list[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_postgres else []
        return prefix + list(args)

    def url(self, database: str = "postgres", *, user: str = USER, password: str = PASSWORD) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data}"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        subprocess.run(
            self._cmd(
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                options,
                "-l",
                str(self.data / "server.log"),
                "-w",
                "-t",
                "60",
                "start",
            ),
            check=True,
            capture_output=True,
        )

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(
            self._cmd(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"),
            check=False,
            capture_output=True,
        )

    def admin(self):  # type: ignore[no-untyped-def]
        import psycopg

        return psycopg.connect(self.url(), autocommit=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    bin_dir = _bin_dir()
    if bin_dir is None or not (bin_dir / "pg_ctl").exists():
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql); see .ci/run")
    as_postgres = os.geteuid() == 0
    if as_postgres and shutil.which("runuser") is None:
        pytest.skip("running as root and runuser is missing: PostgreSQL refuses to run as root")
    # /var/tmp, not pytest's tmp_path: that is under root's private temp folder, which the
    # postgres user cannot enter.
    base = Path(tempfile.mkdtemp(prefix="redline-pg-", dir="/var/tmp"))
    data = base / "data"
    pwfile = base / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if as_postgres:
        shutil.chown(base, "postgres", "postgres")
        shutil.chown(pwfile, "postgres", "postgres")
    server = PgServer(bin_dir, data, _free_port(), as_postgres)
    try:
        subprocess.run(
            server._cmd(
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                USER,
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ),
            check=True,
            capture_output=True,
        )
        server.start()
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(base, ignore_errors=True)
        detail = (exc.stderr or b"").decode(errors="replace").strip()
        pytest.fail(f"PostgreSQL is installed but would not start: {detail}")
    try:
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh database of its own for one test (its URL carries the password)."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    with pg_server.admin() as conn:
        conn.execute(f"CREATE DATABASE {name}".encode())
    yield pg_server.url(name)
    try:
        with pg_server.admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())
    except Exception:  # the server may be stopped by a fault test; the session stops it anyway
        pass


@dataclass
class Team:
    """A team queue whose tables belong to a role that is NOT a superuser, and login roles
    for hosts and reviewers made the way an administrator makes them (``CREATE ROLE``),
    given their rights by ``redline queue grant`` (roles are per server: each name gets
    this queue's suffix)."""

    server: PgServer
    database: str
    suffix: str
    owner: str
    roles: list[str]

    def url(self, role: str) -> str:
        return self.server.url(self.database, user=role, password=f"pw-{self.suffix}")

    @property
    def owner_url(self) -> str:
        return self.url(self.owner)

    def role(self, name: str) -> str:
        """A new LOGIN role (no rights in the queue yet); its full name."""
        full = f"{name}_{self.suffix}"
        with self.server.admin() as conn:
            conn.execute(
                f"CREATE ROLE {full} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD 'pw-{self.suffix}'".encode()
            )
        self.roles.append(full)
        return full

    def init(self) -> None:
        from redline.teamqueue.db import migrate

        with psycopg_connect(self.owner_url) as conn:
            migrate(conn)

    def grant(self, role: str, right: str, **kw: object) -> list[str]:
        from redline.teamqueue.members import grant

        with psycopg_connect(self.owner_url) as conn:
            return grant(conn, role, right, **kw)  # type: ignore[arg-type]

    def host(self, base: str = "build") -> tuple[str, str]:
        """A new agent-host role: (role, url)."""
        role = self.role(base)
        self.grant(role, "agent-host")
        return role, self.url(role)

    def reviewer(self, base: str = "alice", **kw: object) -> tuple[str, str]:
        """A new reviewer role: (role, url)."""
        role = self.role(base)
        self.grant(role, "reviewer", **kw)
        return role, self.url(role)


def psycopg_connect(url: str, *, autocommit: bool = False):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(url, autocommit=autocommit)


@pytest.fixture
def team(pg_server: PgServer) -> Iterator[Team]:
    """A fresh database owned by a non-superuser role, with the schema initialised."""
    suffix = uuid.uuid4().hex[:8]
    owner = f"owner_{suffix}"
    database = f"t_{suffix}"
    with pg_server.admin() as conn:
        conn.execute(
            f"CREATE ROLE {owner} LOGIN NOSUPERUSER NOCREATEROLE NOBYPASSRLS "
            f"PASSWORD 'pw-{suffix}'".encode()
        )
        conn.execute(f"CREATE DATABASE {database} OWNER {owner}".encode())
    found = Team(pg_server, database, suffix, owner, [])
    found.init()
    try:
        yield found
    finally:
        try:
            with pg_server.admin() as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)".encode())
                for role in [*found.roles, owner]:
                    conn.execute(f"DROP ROLE IF EXISTS {role}".encode())
        except Exception:  # the server may be stopped by a fault test
            pass
