"""A session follows its own workspace when a team queue is configured: `redline exec`
mirrors what it proposed before it exits, and the dashboard runs the follower while open."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from redline.cli import main
from redline.teamqueue.settings import team_id, workspace_id

from .helpers import make_workspace, open_queue, propose

pytestmark = pytest.mark.postgres


def _labels(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [str(r[0]) for r in conn.execute("SELECT label FROM redline_actions").fetchall()]


def test_exec_mirrors_its_proposals_before_it_exits(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    open_queue(pg_url)
    ws = make_workspace(tmp_path / "ws")
    plan = tmp_path / "plan.json"
    steps = [
        {"call": [{"tool": "write", "args": {"path": "notes.md", "content": "# Notes\n"}}]},
        {"say": "done"},
    ]
    plan.write_text(json.dumps({"name": "t", "steps": steps}))
    monkeypatch.setenv("REDLINE_QUEUE_URL", pg_url)
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")
    code = main(
        [
            "exec",
            "-C",
            str(ws),
            "--model",
            f"scripted:{plan}",
            "--prompt",
            "go",
            "--resolver",
            "human",
        ]
    )
    _out, err = capfd.readouterr()
    assert code == 3, err  # awaiting review
    assert any("notes.md" in label for label in _labels(pg_url)), err
    with psycopg.connect(pg_url) as conn:
        found = conn.execute(
            "SELECT team_id FROM redline_actions WHERE workspace = %s", (workspace_id(ws),)
        ).fetchall()
    assert [r[0] for r in found] == [team_id(workspace_id(ws), "pa-1")]


def test_the_dashboard_runs_the_follower_while_open(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_queue(pg_url)
    ws = make_workspace(tmp_path / "ws")
    record = propose(ws)
    monkeypatch.setenv("REDLINE_QUEUE_URL", pg_url)
    from redline.commands import dashboard

    seen: dict[str, Any] = {}

    def launch(session: Any, **_kw: Any) -> int:
        deadline = time.monotonic() + 60
        while "Edit a.txt" not in _labels(pg_url):  # awaiting a condition, not timing
            if time.monotonic() > deadline:  # a hang guard, not a speed check
                raise AssertionError("the dashboard's follower never mirrored")
            time.sleep(0.05)
        seen["mirrored"] = True
        session.close()
        return 0

    monkeypatch.setattr(dashboard, "launch", launch)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"name": "t", "steps": [{"say": "hello"}]}))
    assert main(["-C", str(ws), "--model", f"scripted:{plan}"]) == 0
    assert seen.get("mirrored") is True, record


def test_a_hook_call_follows_the_team_queue_while_it_waits(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`redline hook claude` with a team queue: its proposal is mirrored while it waits, a
    reviewer's apply from anywhere reaches it, and the agent is told to write the file."""
    import threading
    from concurrent.futures import Future

    from tests.drivers.hooks.test_claude_mapping import recorded

    from redline.commands import hook as hook_command
    from redline.drivers.hooks.answers import Rendered
    from redline.teamqueue.remote import decide

    open_queue(pg_url)
    ws = make_workspace(tmp_path / "ws")
    monkeypatch.setenv("REDLINE_QUEUE_URL", pg_url)
    done: Future[Rendered] = Future()

    def run() -> None:
        try:
            done.set_result(hook_command.handle("claude", recorded("pre-write.json", ws)))
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    team = team_id(workspace_id(ws), "pa-1")
    deadline = time.monotonic() + 60
    while "Write new.txt" not in _labels(pg_url):  # awaiting a condition
        assert not done.done(), done.result().stdout
        if time.monotonic() > deadline:  # a hang guard, not a speed check
            raise AssertionError("the hook never mirrored its proposal")
        time.sleep(0.05)
    with psycopg.connect(pg_url) as conn:
        assert decide(conn, team, "apply").won
    rendered = done.result(60)
    assert rendered.code == 0, rendered.stderr
    answer = json.loads(rendered.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow", answer
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            "SELECT a.state, d.decided_name FROM redline_actions a"
            " JOIN redline_decisions d ON d.id = a.decision_id WHERE a.team_id = %s",
            (team,),
        ).fetchone()
    assert row == ("applied", "redline_admin (team queue role)")
