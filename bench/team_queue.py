"""The team queue under load, and through an outage (issue 33).

Starts a PostgreSQL server of its own (Debian's ``postgresql`` package, run as the
``postgres`` user when this runs as root, loopback only), then:

1. W workspaces each propose A/W file creations into their local queue, and each runs
   ``redline pending follow`` (a real process per workspace);
2. R reviewer processes race over the team queue: each repeatedly picks pending actions
   at random and decides them (apply or discard), pausing ``--think`` seconds between
   decisions, so many decisions collide and exactly one of each collision must win;
3. once every row is finished, it checks that every action was decided exactly once,
   applied or discarded exactly once in its own workspace (a file exists exactly for
   each apply, with its content; no ``failed``/``refused``/``conflict`` rows; every
   local queue empty) and prints decision → applied latency (p50/p95, from the
   database's own ``decided_at``/``finished_at``);
4. ``--outage S``: stops PostgreSQL for S seconds while the agents propose more, starts
   it again, and checks that every proposal made during the outage is mirrored and, once
   decided, carried out.

Usage: ``uv run python bench/team_queue.py [--actions 2000] [--workspaces 5]
[--reviewers 20] [--think 0.2] [--outage 30]``.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PASSWORD = "bench-pw"

REVIEWER = """
import random, sys, time
import psycopg
from redline.teamqueue.remote import decide

url, name, think, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
won = lost = 0
conn = psycopg.connect(url)
while True:
    rows = conn.execute(
        "SELECT team_id FROM redline_actions WHERE state = 'pending' ORDER BY random() LIMIT 5"
    ).fetchall()
    conn.commit()
    if not rows:
        left = conn.execute(
            "SELECT count(*) FROM redline_actions WHERE state IN ('pending', 'decided')"
        ).fetchone()[0]
        conn.commit()
        if left == 0:
            break
        time.sleep(0.05)
        continue
    team = rng.choice(rows)[0]
    verb = "apply" if int(team.split("@")[0][3:]) % 3 else "discard"
    if decide(conn, team, verb).won:
        won += 1
    else:
        lost += 1
    time.sleep(think * rng.random() * 2)
print(won, lost, flush=True)
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            raise SystemExit("PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = Path(found[-1]).parent
        self.base = Path(tempfile.mkdtemp(prefix="redline-pg-bench-", dir="/var/tmp"))
        self.data = self.base / "data"
        self.port = _free_port()
        self.root = os.geteuid() == 0
        (self.base / "pw").write_text(PASSWORD + "\n")
        if self.root:
            shutil.chown(self.base, "postgres", "postgres")
            shutil.chown(self.base / "pw", "postgres", "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "bench",
            f"--pwfile={self.base / 'pw'}",
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.root else []
        subprocess.run([*prefix, str(self.bin / tool), *args], check=True, capture_output=True)

    @property
    def url(self) -> str:
        """The superuser's: only to make the roles and the database."""
        return f"postgresql://bench:{PASSWORD}@127.0.0.1:{self.port}/postgres"

    def role_url(self, role: str) -> str:
        return f"postgresql://{role}:{PASSWORD}@127.0.0.1:{self.port}/redline"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data} -c max_connections=200"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.data / "log"),
            "-w",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def close(self) -> None:
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.base, ignore_errors=True)


def _propose(root: Path, start: int, count: int) -> None:
    from redline.workspace.preview import FileCreate, Preview
    from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

    with WorkspaceQueue(root) as queue:
        for index in range(start, start + count):
            queue.push(
                ActionDraft(
                    label=f"create f{index}.txt",
                    source=Source.current("exec", "bench"),
                    source_tool_name="write",
                    preview=Preview([FileCreate(f"f{index}.txt", f"content {index}\n")]),
                )
            )


def _count(url: str, where: str = "true") -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            f"SELECT count(*) FROM redline_actions WHERE {where}".encode()
        ).fetchone()
    return int(row[0]) if row else 0


def _await(what: str, check, limit: float) -> float:  # type: ignore[no-untyped-def]
    began = time.monotonic()
    while not check():
        if time.monotonic() - began > limit:
            raise SystemExit(f"FAILED: {what} did not happen within {limit:.0f} s")
        time.sleep(0.2)
    return time.monotonic() - began


def _review(server: Server, reviewers: int, think: float) -> tuple[int, int]:
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                REVIEWER,
                server.role_url(f"reviewer{n}"),
                f"reviewer{n}",
                str(think),
                str(n),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(reviewers)
    ]
    won = lost = 0
    for proc in procs:
        out, _ = proc.communicate(timeout=3600)
        mine, theirs = (int(x) for x in out.split())
        won, lost = won + mine, lost + theirs
    return won, lost


def _verify(url: str, roots: dict[str, Path]) -> dict[str, int]:
    import psycopg

    from redline.workspace.queue import WorkspaceQueue

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT a.workspace, a.local_id, a.label, a.state, d.decision"
            " FROM redline_actions a JOIN redline_decisions d ON d.id = a.decision_id"
        ).fetchall()
    states: dict[str, int] = {}
    for workspace, _local, label, state, decision in rows:
        states[state] = states.get(state, 0) + 1
        name = label.split()[-1]
        path = roots[workspace] / name
        expected = {"apply": "applied", "discard": "discarded"}[decision]
        if state != expected:
            raise SystemExit(f"FAILED: {workspace} {label}: {decision} ended {state}")
        index = name[1:-4]
        if (state == "applied") != path.exists():
            raise SystemExit(f"FAILED: {path} exists={path.exists()} but the row is {state}")
        if state == "applied" and path.read_text() != f"content {index}\n":
            raise SystemExit(f"FAILED: {path} has the wrong content")
    for root in roots.values():
        with WorkspaceQueue(root) as queue:
            left = queue.list()
            if left:
                raise SystemExit(f"FAILED: {root} still has {len(left)} pending")
    return states


def _latency(url: str) -> list[float]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT extract(epoch FROM a.finished_at - d.decided_at)"
            " FROM redline_actions a JOIN redline_decisions d ON d.id = a.decision_id"
        ).fetchall()
    return sorted(float(row[0]) * 1000 for row in rows)


def _pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=2000)
    parser.add_argument("--workspaces", type=int, default=5)
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--think", type=float, default=0.2, help="mean pause between decisions")
    parser.add_argument("--outage", type=float, default=0.0, help="seconds PostgreSQL is down")
    parser.add_argument("--outage-actions", type=int, default=50, help="per workspace")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="redline-bench-teamq-"))
    os.environ["REDLINE_CONFIG_DIR"] = str(work / "config")
    os.environ["XDG_STATE_HOME"] = str(work / "state")
    server = Server()
    followers: list[subprocess.Popen[bytes]] = []
    try:
        import psycopg

        from redline.teamqueue.db import migrate
        from redline.teamqueue.members import grant
        from redline.teamqueue.settings import workspace_id

        # As docs/team-queue.md sets it up: tables owned by a role that is not a superuser,
        # one agent-host role for the followers, one reviewer role per reviewer.
        with psycopg.connect(server.url, autocommit=True) as conn:
            for role in ["owner", "host"] + [f"reviewer{n}" for n in range(args.reviewers)]:
                conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'".encode())
            conn.execute(b"CREATE DATABASE redline OWNER owner")
        owner_url = server.role_url("owner")
        with psycopg.connect(owner_url) as conn:
            migrate(conn)
            grant(conn, "host", "agent-host")
            for n in range(args.reviewers):
                grant(conn, f"reviewer{n}", "reviewer")
        roots: dict[str, Path] = {}
        per = args.actions // args.workspaces
        began = time.monotonic()
        for n in range(args.workspaces):
            root = work / f"ws{n}"
            root.mkdir()
            _propose(root, 0, per)
            roots[workspace_id(root)] = root
        print(
            f"proposed {per * args.workspaces} actions in {args.workspaces} workspaces "
            f"in {time.monotonic() - began:.1f} s"
        )
        logs = work / "logs"
        logs.mkdir()
        for ident, root in roots.items():
            followers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "redline",
                        "pending",
                        "follow",
                        "-C",
                        str(root),
                        "--queue",
                        server.role_url("host"),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=(logs / f"{ident}.log").open("w"),
                )
            )
        total = per * args.workspaces
        took = _await("mirroring", lambda: _count(owner_url) == total, 600)
        print(f"mirrored {total} in {took:.1f} s")
        began = time.monotonic()
        won, lost = _review(server, args.reviewers, args.think)
        _await(
            "every decision carried out",
            lambda: _count(owner_url, "state IN ('pending', 'decided')") == 0,
            600,
        )
        print(
            f"{args.reviewers} reviewers: {won} decisions won, {lost} lost a race, "
            f"in {time.monotonic() - began:.1f} s"
        )
        if won != total:
            raise SystemExit(f"FAILED: {won} decisions won for {total} actions")
        states = _verify(owner_url, roots)
        lat = _latency(owner_url)
        print(f"verified: {states}; no action lost or carried out twice")
        print(
            f"decision -> applied: p50 {_pct(lat, 50):.0f} ms, p95 {_pct(lat, 95):.0f} ms, "
            f"max {lat[-1]:.0f} ms (n={len(lat)})"
        )
        if args.outage > 0:
            server.stop("fast")
            down = time.monotonic()
            for n, root in enumerate(roots.values()):
                _propose(root, 100000 + n * 1000, args.outage_actions)
            time.sleep(max(0.0, args.outage - (time.monotonic() - down)))
            server.start()
            more = args.outage_actions * len(roots)
            took = _await(
                "syncing after the outage", lambda: _count(owner_url) == total + more, 600
            )
            print(
                f"PostgreSQL down {args.outage:.0f} s while {more} actions were proposed; "
                f"all mirrored {took:.1f} s after it came back"
            )
            won, lost = _review(server, args.reviewers, 0.0)
            _await(
                "decisions after the outage",
                lambda: _count(owner_url, "state IN ('pending', 'decided')") == 0,
                600,
            )
            states = _verify(owner_url, roots)
            print(f"after the outage: {won} more decisions carried out; verified: {states}")
        return 0
    finally:
        for proc in followers:
            proc.send_signal(signal.SIGTERM)
        for proc in followers:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        server.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
