"""``redline exec`` end to end, on the scripted provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from redline.cli import main

pytest.importorskip("redline.workspace.journal")


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")


def plan(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"name": "test", "steps": steps}), encoding="utf-8")
    return f"scripted:{path}"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return ws


def run_exec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code = main(["exec", *args, "--json"])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines() if line.strip()]


WRITE = {"call": [{"tool": "write", "args": {"path": "notes.md", "content": "# Notes\n"}}]}


def test_agent_resolver_applies_and_exits_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    model = plan(tmp_path, [WRITE, {"resolve": "apply", "reason": "wanted"}, {"say": "done"}])
    code, events = run_exec(capsys, "-C", str(ws), "--model", model, "--prompt", "add notes")
    assert code == 0
    assert (ws / "notes.md").read_text(encoding="utf-8") == "# Notes\n"
    kinds = [e["type"] for e in events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    assert all({"type", "seq", "time", "session_id"} <= e.keys() for e in events)
    resolved = next(e for e in events if e["type"] == "pending_resolved")
    assert (resolved["action"], resolved["by"], resolved["reason"]) == ("apply", "agent", "wanted")
    pushed = next(e for e in events if e["type"] == "pending_pushed")
    assert (
        pushed["source_tool_name"] == "write"
        and pushed["preview"]["files"][0]["path"] == "notes.md"
    )
    tool_end = next(e for e in events if e["type"] == "tool_end" and e["name"] == "write")
    first_line = tool_end["result"]["content"][0]["text"].splitlines()[0]
    assert (
        first_line
        == "Preview only: nothing has been written yet. Call resolve to apply or discard."
    )


def test_forced_scripted_provider_applies_with_scripted_plan_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    model = plan(tmp_path, [WRITE, {"say": "moving on"}])
    code, events = run_exec(capsys, "-C", str(ws), "--model", model, "--prompt", "x")
    assert code == 0
    resolved = next(e for e in events if e["type"] == "pending_resolved")
    assert resolved["reason"] == "scripted plan"


def test_human_resolver_stops_awaiting_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    model = plan(
        tmp_path, [WRITE, {"resolve": "apply", "reason": "skipped under human"}, {"say": "x"}]
    )
    code, events = run_exec(
        capsys, "-C", str(ws), "--model", model, "--prompt", "x", "--resolver", "human"
    )
    assert code == 3
    assert not (ws / "notes.md").exists()
    assert events[-1]["status"] == "awaiting_review"
    assert not any(e["type"] == "tool_start" and e["name"] == "resolve" for e in events)


@pytest.mark.parametrize(("resolver", "written"), [("apply-all", True), ("discard-all", False)])
def test_auto_resolvers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], resolver: str, written: bool
) -> None:
    ws = workspace(tmp_path)
    model = plan(tmp_path, [WRITE, {"say": "ok"}])
    code, events = run_exec(
        capsys, "-C", str(ws), "--model", model, "--prompt", "x", "--resolver", resolver
    )
    assert code == 0
    assert (ws / "notes.md").exists() is written
    resolved = next(e for e in events if e["type"] == "pending_resolved")
    assert resolved["by"] == "auto"
    assert resolved["reason"] in (
        "auto-applied by --resolver apply-all",
        "auto-discarded by --resolver discard-all",
    )


def test_failing_applies_end_awaiting_review_after_three_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    # Two creates of the same file: the top one applies, the other then finds the file there.
    twice = {
        "call": [
            {"tool": "write", "args": {"path": "n.md", "content": "one\n"}},
            {"tool": "write", "args": {"path": "n.md", "content": "two\n"}},
        ]
    }
    code, events = run_exec(
        capsys, "-C", str(ws), "--model", plan(tmp_path, [twice]), "--prompt", "x"
    )
    assert code == 3
    assert (ws / "n.md").read_text(encoding="utf-8") == "two\n"
    failed = [
        e for e in events if e["type"] == "tool_end" and e["name"] == "resolve" and e["is_error"]
    ]
    assert len(failed) == 3
    assert events[-1]["status"] == "awaiting_review"


def test_apply_all_failure_ends_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    twice = {
        "call": [
            {"tool": "write", "args": {"path": "n.md", "content": "one\n"}},
            {"tool": "write", "args": {"path": "n.md", "content": "two\n"}},
        ]
    }
    code, events = run_exec(
        capsys,
        "-C",
        str(ws),
        "--model",
        plan(tmp_path, [twice]),
        "--prompt",
        "x",
        "--resolver",
        "apply-all",
    )
    assert code == 1
    assert events[-1]["status"] == "error"


def test_max_turns_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    steps = [{"call": [{"tool": "ls", "args": {}}]} for _ in range(5)]
    code, events = run_exec(
        capsys, "-C", str(ws), "--model", plan(tmp_path, steps), "--prompt", "x", "--max-turns", "2"
    )
    assert code == 1
    assert events[-1]["status"] == "max_turns"


def test_bad_input_exit_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    code, events = run_exec(capsys, "-C", str(ws), "--model", f"scripted:{bad}", "--prompt", "x")
    assert code == 2
    assert len(events) == 1
    assert {"type", "seq", "time", "session_id", "message"} == events[0].keys()
    assert events[0]["type"] == "error"
    assert "invalid JSON" in events[0]["message"]
    code, events = run_exec(capsys, "-C", str(ws), "--prompt", "x")
    assert code == 2 and "no model configured" in events[0]["message"]
    code, events = run_exec(capsys, "-C", str(ws), "--model", "gpt4", "--prompt", "x")
    assert code == 2 and "expected scripted:PLAN.json" in events[0]["message"]
    assert main(["exec", "--resolver", "nobody"]) == 2


def test_session_log_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    code, events = run_exec(
        capsys, "-C", str(ws), "--model", plan(tmp_path, [WRITE, {"say": "ok"}]), "--prompt", "x"
    )
    assert code == 0
    logs = list((ws / ".redline" / "sessions").glob("*.jsonl"))
    assert len(logs) == 1
    lines = logs[0].read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["schema"] == 1
    with logs[0].open("a", encoding="utf-8") as handle:
        handle.write('{"type": "tool_st')  # a torn last line
    code, replayed = run_exec(capsys, "--replay", str(logs[0]))
    assert code == 0
    assert [e["seq"] for e in replayed] == [e["seq"] for e in events]
    assert (ws / ".redline" / ".gitignore").read_text(encoding="utf-8").strip() == "*"


def test_readable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path)
    model = plan(tmp_path, [{"say": "hello there"}])
    assert main(["exec", "-C", str(ws), "--model", model, "--prompt", "x"]) == 0
    out = capsys.readouterr().out
    assert "assistant: hello there" in out
    assert "== agent end: done" in out


def test_plugin_errors_reach_the_json_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    broken = tmp_path / "broken.py"
    broken.write_text("import does_not_exist_anywhere\n", encoding="utf-8")
    model = plan(tmp_path, [{"say": "hi"}])
    code, events = run_exec(
        capsys, "-C", str(ws), "--model", model, "--prompt", "x", "--tools", str(broken)
    )
    assert code == 0
    errors = [e for e in events if e["type"] == "plugin_error"]
    assert len(errors) == 1 and "broken.py" in errors[0]["message"]
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)


def test_unusable_state_folder_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path)
    (ws / ".redline").write_text("not a folder", encoding="utf-8")
    code, events = run_exec(
        capsys, "-C", str(ws), "--model", plan(tmp_path, [{"say": "hi"}]), "--prompt", "x"
    )
    assert code == 1
    assert events[0]["type"] == "error" and ".redline" in events[0]["message"]


def test_exec_commits_with_its_providers_model_and_logs_via_model(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    isolated_user_config: Path,
) -> None:
    """Issue 48: redline's own runtime names its provider's model in Assisted-by; the
    model's own resolve is logged ``via model``."""
    from tests.workspace.gitrepo import git, init_repo, isolate_git, write_config

    isolate_git(monkeypatch, tmp_path / "home")
    ws = init_repo(tmp_path / "ws", {"app.py": "print('hi')\n"})
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    model = plan(tmp_path, [WRITE, {"resolve": "apply", "reason": "wanted"}, {"say": "done"}])
    code, _events = run_exec(capsys, "-C", str(ws), "--model", model, "--prompt", "add notes")
    assert code == 0
    message = git(ws, "log", "-1", "--format=%B")
    assert "Assisted-by: redline:scripted:test" in message, message
    assert "Redline-Workspace: g" in message and "Redline-Source: exec" in message
    assert main(["log", "-C", str(ws), "--json"]) == 0
    [decision] = json.loads(capsys.readouterr().out)["decisions"]
    assert decision["resolved_by"] == "agent" and decision["via"] == "model"
    assert decision["assisted_by"] == "redline:scripted:test"
