"""The newcomer's case end to end: ``exec --resolver human`` leaves its action in the
queue, another process reviews it with ``redline pending``, ``exec --resume`` continues."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.model.providers.fake_openai import FakeOpenAI

from redline.cli import main

HANG_GUARD = 120.0


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")


def plan(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"name": "test", "steps": steps}), encoding="utf-8")
    return f"scripted:{path}"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return ws


def redline(*args: str) -> subprocess.CompletedProcess[str]:
    """``redline ARGS`` in a process of its own."""
    env = {**os.environ, "REDLINE_SCRIPTED_WAIT_SCALE": "0"}
    return subprocess.run(
        [sys.executable, "-m", "redline", *args],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env=env,
        check=False,
    )


WRITE = {"call": [{"tool": "write", "args": {"path": "notes.md", "content": "# Notes\n"}}]}


def exec_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code = main(["exec", *args, "--json"])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines() if line.strip()]


def test_human_exec_then_pending_apply_then_resume_reports_the_resolution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_openai: FakeOpenAI
) -> None:
    ws = workspace(tmp_path)
    model = plan(tmp_path, [WRITE, {"say": "waiting"}])
    code, events = exec_json(
        capsys, "-C", str(ws), "--model", model, "--resolver", "human", "--prompt", "add notes"
    )
    assert code == 3
    pushed = next(e for e in events if e["type"] == "pending_pushed")
    action_id = pushed["action_id"]
    assert pushed["diffs"][0]["path"] == "notes.md"
    assert "+# Notes" in pushed["diffs"][0]["diff"]
    assert not (ws / "notes.md").exists()

    # Another process sees the action, with its source, and applies it.
    listed = redline("pending", "-C", str(ws), "list", "--json")
    assert listed.returncode == 0, listed.stderr
    actions = json.loads(listed.stdout)["actions"]
    assert [a["id"] for a in actions] == [action_id]
    assert actions[0]["source"]["kind"] == "exec"
    assert actions[0]["applied_by"] == "preview"
    shown = redline("pending", "-C", str(ws), "show", action_id)
    assert shown.returncode == 0 and "+# Notes" in shown.stdout
    applied = redline("pending", "-C", str(ws), "apply", action_id, "--reason", "looks right")
    assert applied.returncode == 0, applied.stderr
    assert (ws / "notes.md").read_text(encoding="utf-8") == "# Notes\n"

    # The session continues, the resolution reported in its first request.
    fake_openai.enqueue_text("thanks")
    code, events = exec_json(
        capsys,
        "-C",
        str(ws),
        "--resume",
        "--model",
        "openai:fake-model",
        "--base-url",
        fake_openai.base_url,
    )
    assert code == 0, events
    messages = fake_openai.requests[0]["messages"]
    reports = [
        m for m in messages if m["role"] == "user" and "pending actions were resolved" in str(m)
    ]
    assert len(reports) == 1
    text = str(reports[0]["content"])
    assert f"applied {action_id}" in text and "Reason: looks right" in text
    # The earlier conversation came along: the prompt and the write call with its result.
    assert any(m["role"] == "user" and m["content"] == "add notes" for m in messages)
    assert any(m["role"] == "tool" for m in messages)


def test_resume_with_actions_still_pending_exits_3_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    model = plan(tmp_path, [WRITE, {"say": "waiting"}])
    code, _ = exec_json(
        capsys, "-C", str(ws), "--model", model, "--resolver", "human", "--prompt", "x"
    )
    assert code == 3
    # A plan with no steps: any model call would fail the run.
    empty = plan(tmp_path, [])
    assert main(["exec", "-C", str(ws), "--resume", "--model", empty]) == 3
    assert "still has pending actions" in capsys.readouterr().err


def test_human_exec_text_output_prints_the_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    model = plan(tmp_path, [WRITE, {"say": "waiting"}])
    code = main(["exec", "-C", str(ws), "--model", model, "--resolver", "human", "--prompt", "x"])
    assert code == 3
    out = capsys.readouterr().out
    assert "+# Notes" in out and "b/notes.md" in out


def test_resume_flags_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    model = plan(tmp_path, [{"say": "hi"}])
    assert main(["exec", "-C", str(ws), "--model", model, "--session", "abc"]) == 2
    assert "--session ID needs --resume" in capsys.readouterr().err
    assert main(["exec", "-C", str(ws), "--model", model, "--resume"]) == 2
    assert "no session to resume" in capsys.readouterr().err
    code = main(["exec", "-C", str(ws), "--model", model, "--resume", "--session", "../x"])
    assert code == 2


def test_resume_takes_the_newest_exec_session_and_reports_an_edited_apply(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_openai: FakeOpenAI,
) -> None:
    from redline.sdk import create_agent_session

    ws = workspace(tmp_path)
    model = plan(tmp_path, [WRITE, {"say": "waiting"}])
    code, events = exec_json(
        capsys, "-C", str(ws), "--model", model, "--resolver", "human", "--prompt", "add notes"
    )
    assert code == 3
    exec_sid = events[0]["session_id"]
    # A dashboard session opened afterwards: newer, but not one `exec --resume` continues.
    dashboard = create_agent_session(ws, plan(tmp_path, []), source_kind="agent")
    dashboard.close()
    newer = ws / ".redline" / "sessions" / f"{dashboard.session_id}.jsonl"
    older = ws / ".redline" / "sessions" / f"{exec_sid}.jsonl"
    os.utime(newer, (older.stat().st_mtime + 60, older.stat().st_mtime + 60))

    # The person edits the proposal, then applies the edited action, with a reason.
    monkeypatch.setenv("EDITOR", "sed -i s/Notes/Edited/")
    monkeypatch.delenv("VISUAL", raising=False)
    assert main(["pending", "-C", str(ws), "edit", "pa-1"]) == 0
    assert main(["pending", "-C", str(ws), "apply", "pa-2", "--reason", "shorter title"]) == 0
    assert (ws / "notes.md").read_text(encoding="utf-8") == "# Edited\n"
    capsys.readouterr()

    fake_openai.enqueue_text("thanks")
    argv = ["exec", "-C", str(ws), "--resume", "--model", "openai:fake-model"]
    code = main([*argv, "--base-url", fake_openai.base_url])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.splitlines()[0] == (
        f"Resuming session {exec_sid} (the newest `redline exec` session here); "
        "telling the agent about 1 decision made meanwhile."
    )
    messages = fake_openai.requests[0]["messages"]
    report = next(str(m["content"]) for m in messages if "pending actions were resolved" in str(m))
    assert "applied pa-2 (Write notes.md)" in report or "applied pa-2" in report
    assert "Reason: shorter title" in report
    assert "edited by the reviewer" in report and "+# Edited" in report
    assert any(m["role"] == "user" and m["content"] == "add notes" for m in messages)


def test_resume_never_takes_a_dashboard_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from redline.sdk import create_agent_session

    ws = workspace(tmp_path)
    create_agent_session(ws, plan(tmp_path, []), source_kind="agent").close()
    assert main(["exec", "-C", str(ws), "--resume", "--model", plan(tmp_path, [])]) == 2
    err = capsys.readouterr().err
    assert "no log of a `redline exec` session" in err and "--session ID" in err
