"""Workspaces with proposals in their local queue, and running the CLI in-process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, QueueRecord, Source, WorkspaceQueue


def make_workspace(path: Path, *, git: bool = False, text: str = "one\n") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "a.txt").write_text(text)
    if git:
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
        env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
        subprocess.run(["git", "init", "-q", str(path)], check=True)
        subprocess.run(["git", "-C", str(path), "add", "a.txt"], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(path),
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e.invalid",
                "commit",
                "-qm",
                "root",
            ],
            check=True,
        )
    return path


def propose(root: Path, name: str = "a.txt", add: str = "more\n") -> QueueRecord:
    old = (root / name).read_text()
    preview = Preview([FileModify(name, sha256_bytes(old.encode()), old, old + add)])
    with WorkspaceQueue(root) as queue:
        return queue.push(
            ActionDraft(
                label=f"Edit {name}",
                source=Source.current("exec", "test", "s1"),
                source_tool_name="edit",
                preview=preview,
            )
        )


def cli(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capfd.readouterr()
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


def open_queue(url: str, *, name: str | None = None) -> None:
    """The schema made and the connecting role (the tables' owner) given both rights, as
    ``redline queue init`` + ``redline queue grant`` do."""
    import psycopg

    from redline.teamqueue.db import migrate
    from redline.teamqueue.members import grant

    with psycopg.connect(url) as conn:
        migrate(conn)
        role = conn.execute("SELECT session_user::text").fetchone()[0]  # type: ignore[index]
        conn.commit()
        grant(conn, role, "reviewer", name=name)
        grant(conn, role, "agent-host")


def forge_decision(
    url: str,
    team: str,
    *,
    patch_hash: str | None = None,
    decision: str = "apply",
    by: str = "mallory",
    only: list[str] | None = None,
    edit: tuple[str, str] | None = None,
    raw_only: object = None,
) -> None:
    """A decision written past ``redline_decide`` (by someone with the owner's power): the
    follower must still check it against its own proposal. ``raw_only``: the stored parts
    exactly as given (e.g. as an older redline wrote them), instead of ``only``'s."""
    import json

    import psycopg

    from redline.teamqueue.remote import parts_json

    with psycopg.connect(url) as conn:
        (decision_id,) = conn.execute(  # type: ignore[misc]
            "INSERT INTO redline_decisions (team_id, workspace, decision, only_parts,"
            " edit_path, edit_text, view_hash, patch_hash, decided_by, decided_name)"
            " SELECT team_id, workspace, %s, %s, %s, %s, view_hash, coalesce(%s, patch_hash),"
            " %s, %s FROM redline_actions WHERE team_id = %s RETURNING id",
            (
                decision,
                json.dumps(raw_only)
                if raw_only is not None
                else json.dumps(parts_json(only))
                if only is not None
                else None,
                edit[0] if edit else None,
                edit[1] if edit else None,
                patch_hash,
                by,
                by,
                team,
            ),
        ).fetchone()
        conn.execute(
            "UPDATE redline_actions SET state = 'decided', decision_id = %s WHERE team_id = %s",
            (decision_id, team),
        )
