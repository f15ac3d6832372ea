"""`redline exec --agent` against the scripted ACP agent (a real subprocess)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests import warm_python

from redline.workspace.journal import undo_history, undo_last

AGENT = Path(__file__).with_name("scripted_agent.py")
HANG_GUARD = 120


def run_exec(
    tmp_path: Path,
    workspace: Path,
    steps: list[dict[str, Any]],
    *extra: str,
    resolver: str | None = "apply-all",
) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]], str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    record = tmp_path / "record.jsonl"
    command = shlex.join([sys.executable, str(AGENT), str(script), str(record)])
    argv = [sys.executable, "-m", "redline", "exec", "--agent", command, "-C", str(workspace)]
    argv += ["--prompt", "do the task", "--json", *extra]
    if resolver:
        argv += ["--resolver", resolver]
    proc = warm_python.run(argv, capture_output=True, text=True, timeout=HANG_GUARD)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    heard = (
        [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    )
    return proc.returncode, events, heard, proc.stderr


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    print('hi')\n")
    return root


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_initialize_and_session_use_the_workspace(tmp_path: Path, workspace: Path) -> None:
    code, events, heard, _ = run_exec(tmp_path, workspace, [{"do": "text", "text": "hello"}])
    assert code == 0
    init = next(h for h in heard if h["event"] == "initialize")
    assert init == {"event": "initialize", "protocol_version": 1, "read": True, "write": True}
    assert next(h for h in heard if h["event"] == "new_session")["cwd"] == str(workspace)
    assert "".join(e["text"] for e in of(events, "acp_message")) == "hello"
    assert of(events, "agent_end")[-1]["status"] == "done"


def test_activity_is_typed(tmp_path: Path, workspace: Path) -> None:
    steps = [
        {"do": "thought", "text": "thinking hard"},
        {"do": "plan", "entries": ["read", "edit"]},
        {"do": "shell", "command": "ls"},
    ]
    code, events, _, _ = run_exec(tmp_path, workspace, steps)
    assert code == 0
    assert of(events, "acp_thought")[0]["text"] == "thinking hard"
    assert [e["content"] for e in of(events, "acp_plan")[0]["entries"]] == ["read", "edit"]
    call = of(events, "acp_tool_call")[0]
    assert (call["title"], call["kind"], call["raw_input"]) == (
        "Run ls",
        "execute",
        {"command": "ls"},
    )


def test_apply_all_writes_through_safe_apply_and_undo_reverts(
    tmp_path: Path, workspace: Path
) -> None:
    steps = [{"do": "fs_write", "path": "new.py", "content": "x = 1\n"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps)
    assert code == 0
    assert (workspace / "new.py").read_text() == "x = 1\n"
    pushed = of(events, "pending_pushed")[0]
    assert pushed["label"] == "Write: new.py"
    assert pushed["source_tool_name"] == "acp:write_text_file"
    assert pushed["preview"]["files"][0]["kind"] == "create"
    assert {"event": "write", "path": "new.py", "ok": True} in heard
    # The agent hears the resolution in one further prompt.
    prompts = [h["text"] for h in heard if h["event"] == "prompt"]
    assert len(prompts) == 2 and "Write: new.py: applied" in prompts[1]
    assert undo_history(workspace)[0].source_tool_name == "acp:write_text_file"
    undo_last(workspace)
    assert not (workspace / "new.py").exists()


def test_discard_all_refuses_the_write_with_the_reason(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "fs_write", "path": "app.py", "content": "changed\n"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="discard-all")
    assert code == 0
    assert (workspace / "app.py").read_text() == "def main():\n    print('hi')\n"
    write = next(h for h in heard if h["event"] == "write")
    assert write["error"] == "Discarded by the reviewer: auto-discarded by --resolver discard-all"
    prompts = [h["text"] for h in heard if h["event"] == "prompt"]
    assert (
        "Write: app.py: discarded. Reason: auto-discarded by --resolver discard-all" in prompts[1]
    )
    assert of(events, "pending_resolved")[0]["action"] == "discard"


def test_human_exits_3_while_the_write_is_held(tmp_path: Path, workspace: Path) -> None:
    steps = [
        {"do": "fs_write", "path": "app.py", "content": "changed\n"},
        {"do": "text", "text": "after the write"},
    ]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    assert (workspace / "app.py").read_text() == "def main():\n    print('hi')\n"
    assert of(events, "agent_end")[-1]["status"] == "awaiting_review"
    assert of(events, "agent_end")[-1]["pending"] == 1
    # The held write was never answered with success; the agent never went on.
    assert not any(h.get("ok") for h in heard if h["event"] == "write")
    assert "after the write" not in "".join(e["text"] for e in of(events, "acp_message"))


def test_human_is_the_default_resolver_for_agents(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "shell", "command": "make"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver=None)
    assert code == 3
    pushed = of(events, "pending_pushed")[0]
    assert (pushed["label"], pushed["source_tool_name"], pushed["preview"]) == (
        "Run make",
        "acp:execute",
        None,
    )
    # Stopping answers the held permission with cancelled, never as a discard.
    assert {"event": "permission", "call": "call-1", "outcome": "cancelled"} in heard


def test_confinement_outside_path_is_an_error_and_nothing_is_queued(
    tmp_path: Path, workspace: Path
) -> None:
    outside = tmp_path / "outside.txt"
    steps = [
        {"do": "fs_write", "path": str(outside), "content": "pwned\n"},
        {"do": "fs_read", "path": "/etc/hostname"},
        {"do": "fs_write", "path": ".git/config", "content": "x"},
    ]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 0
    assert not outside.exists()
    assert of(events, "pending_pushed") == []
    writes = [h for h in heard if h["event"] == "write"]
    assert all("Refused" in w["error"] for w in writes) and len(writes) == 2
    read = next(h for h in heard if h["event"] == "read")
    assert "outside the workspace" in read["error"]


def test_read_honours_line_and_limit_and_missing_is_empty(tmp_path: Path, workspace: Path) -> None:
    (workspace / "lines.txt").write_text("a\nb\nc\nd\n")
    steps = [
        {"do": "fs_read", "path": "lines.txt", "line": 2, "limit": 2},
        {"do": "fs_read", "path": "missing.txt"},
    ]
    code, _, heard, _ = run_exec(tmp_path, workspace, steps)
    assert code == 0
    reads = [h for h in heard if h["event"] == "read"]
    assert reads[0]["content"] == "b\nc\n"
    assert reads[1]["content"] == ""


def test_gemini_order_permission_then_write_is_applied_once(
    tmp_path: Path, workspace: Path
) -> None:
    new = "def main():\n    print('hello')\n"
    steps = [{"do": "gemini_edit", "path": "app.py", "content": new}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps)
    assert code == 0
    assert (workspace / "app.py").read_text() == new
    pushed = of(events, "pending_pushed")
    # Only the permission was queued: the write matched the approval and went straight in.
    assert [p["source_tool_name"] for p in pushed] == ["acp:edit"]
    assert pushed[0]["preview"]["files"][0] == {
        "kind": "modify",
        "path": "app.py",
        "added": 1,
        "removed": 1,
    }
    assert {"event": "permission", "call": "call-1", "outcome": "allow"} in heard
    assert any(
        "Applied the agent's write of app.py at once" in e["message"] for e in of(events, "notice")
    )
    history = undo_history(workspace)
    assert [h.source_tool_name for h in history] == ["acp:write_text_file"]


def test_claude_order_snippet_permission_then_self_write_is_recorded_for_undo(
    tmp_path: Path, workspace: Path
) -> None:
    steps = [{"do": "claude_edit", "path": "app.py", "old": "'hi'", "new": "'bye'"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps)
    assert code == 0
    assert {"event": "self_write", "path": "app.py"} in heard
    assert (workspace / "app.py").read_text() == "def main():\n    print('bye')\n"
    pushed = of(events, "pending_pushed")[0]
    # The snippet was found once: the Preview is the full-file change.
    assert pushed["label"] == "Edit app.py"
    assert pushed["preview"]["files"][0]["kind"] == "modify"
    assert any("recorded as applied" in e["message"] for e in of(events, "notice"))
    assert undo_history(workspace)[0].label.startswith("Edit app.py")
    undo_last(workspace)
    assert (workspace / "app.py").read_text() == "def main():\n    print('hi')\n"


def test_self_write_that_differs_from_the_approval_is_reported(
    tmp_path: Path, workspace: Path
) -> None:
    steps = [
        {"do": "claude_edit", "path": "app.py", "old": "'hi'", "new": "'bye'", "actually": "'evil'"}
    ]
    code, events, _, _ = run_exec(tmp_path, workspace, steps)
    assert code == 0
    notice = next(e for e in of(events, "notice") if "recorded as applied" in e["message"])
    assert "differs from what was approved" in notice["message"]
    assert "+    print('evil')" in notice["diff"]


def test_discarded_permission_answers_reject_once_and_reason_reaches_the_agent(
    tmp_path: Path, workspace: Path
) -> None:
    steps = [{"do": "claude_edit", "path": "app.py", "old": "'hi'", "new": "'bye'"}]
    code, _, heard, _ = run_exec(tmp_path, workspace, steps, resolver="discard-all")
    assert code == 0
    assert (workspace / "app.py").read_text() == "def main():\n    print('hi')\n"
    assert {"event": "permission", "call": "call-1", "outcome": "reject"} in heard
    prompts = [h["text"] for h in heard if h["event"] == "prompt"]
    assert "Edit app.py: discarded. Reason: auto-discarded" in prompts[1]
    assert undo_history(workspace) == []


def test_codex_acp_abort_is_a_reject_and_its_cancelled_turn_a_normal_end(
    tmp_path: Path, workspace: Path
) -> None:
    """codex-acp offers only `abort` to say no, and ends the turn `cancelled` when it is
    chosen: a reviewer's discard, so exit 0 and the reason in the follow-up prompt."""
    steps = [{"do": "codex_edit", "path": "app.py", "content": "print('bye')\n"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="discard-all")
    assert code == 0
    assert (workspace / "app.py").read_text() == "def main():\n    print('hi')\n"
    assert {"event": "permission", "call": "call-1", "outcome": "abort"} in heard
    prompts = [h["text"] for h in heard if h["event"] == "prompt"]
    assert len(prompts) == 2
    assert "Edit app.py: discarded. Reason: auto-discarded" in prompts[1]
    assert of(events, "agent_end")[-1]["status"] == "done"


def test_codex_acp_approved_edit_is_written(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "codex_edit", "path": "app.py", "content": "print('bye')\n"}]
    code, _, heard, _ = run_exec(tmp_path, workspace, steps, resolver="apply-all")
    assert code == 0
    assert {"event": "permission", "call": "call-1", "outcome": "approved"} in heard
    assert (workspace / "app.py").read_text() == "print('bye')\n"


def test_the_reject_option_is_chosen_by_kind_then_by_what_it_says() -> None:
    from acp import schema

    from redline.drivers.acp.held import reject_option

    def options(*pairs: tuple[str, str, str]) -> list[schema.PermissionOption]:
        return [schema.PermissionOption(option_id=i, name=n, kind=k) for i, n, k in pairs]  # type: ignore[arg-type]

    both = options(
        ("always-no", "Never", "reject_always"),
        ("yes", "Yes", "allow_once"),
        ("once-no", "No", "reject_once"),
    )
    assert reject_option(both) == "once-no"
    assert reject_option(both[:2]) == "always-no"
    assert reject_option(options(("yes", "Yes", "allow_once"))) is None


def test_unverifiable_snippet_is_marked(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "claude_edit", "path": "app.py", "old": "not there", "new": "x"}]
    code, events, _, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    pushed = of(events, "pending_pushed")[0]
    assert pushed["label"] == "Edit app.py (not verifiable against the disk)"


def test_crash_mid_turn_is_an_error(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "text", "text": "about to die"}, {"do": "crash", "status": 7}]
    code, events, _, _ = run_exec(tmp_path, workspace, steps)
    assert code == 1
    exits = of(events, "acp_agent_exit")
    assert exits and exits[0]["returncode"] == 7 and not exits[0]["expected"]
    assert "exited with status 7" in of(events, "error")[0]["message"]


def test_stderr_goes_to_the_session_log(tmp_path: Path, workspace: Path) -> None:
    code, _, _, _ = run_exec(tmp_path, workspace, [{"do": "text", "text": "x"}])
    assert code == 0
    (log,) = (workspace / ".redline" / "sessions").glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines[0]["kind"] == "acp"
    assert any(
        line.get("type") == "acp_stderr" and line["text"] == "scripted agent started"
        for line in lines
    )


def test_bad_input(tmp_path: Path, workspace: Path) -> None:
    base = [sys.executable, "-m", "redline", "exec", "-C", str(workspace), "--prompt", "x"]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *extra], capture_output=True, text=True, timeout=HANG_GUARD)

    both = run("--agent", "gemini", "--model", "scripted:x.json")
    assert both.returncode == 2 and "exclude each other" in both.stderr
    agent_resolver = run("--agent", "gemini", "--resolver", "agent")
    assert agent_resolver.returncode == 2 and "no resolve tool" in agent_resolver.stderr
    missing = run("--agent", "codex", "--resolver", "human")
    if missing.returncode == 2 and "not found" in missing.stderr:
        assert "npm install -g @zed-industries/codex-acp" in missing.stderr
    nothing = run("--agent", "no-such-agent-program-xyz")
    assert nothing.returncode == 2 and "not found on PATH" in nothing.stderr


def test_stop_sends_session_cancel(started: Any) -> None:
    import signal

    run = started([{"do": "text", "text": "working"}, {"do": "wait_cancel"}], "--prompt", "go")

    def waiting(events: list[dict[str, Any]]) -> bool:  # the agent waits for the cancel
        return "waiting" in "".join(e["text"] for e in of(events, "acp_message"))

    run.wait_for("the agent's turn", waiting)
    run.proc.send_signal(signal.SIGINT)
    code, _ = run.finish()
    assert code == 1
    assert {"event": "cancel"} in run.heard()
    assert of(run.events, "agent_end")[-1]["status"] == "aborted"


def test_human_keeps_a_verified_permission_diff_as_a_preview_action(
    tmp_path: Path, workspace: Path
) -> None:
    steps = [{"do": "claude_edit", "path": "app.py", "old": "'hi'", "new": "'bye'"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    (replaced,) = of(events, "pending_replaced")
    assert replaced["old_action_id"] == "pa-1" and replaced["label"] == "Edit app.py"
    assert replaced["preview"]["files"][0]["path"] == "app.py"
    assert of(events, "agent_end")[-1]["pending"] == 1
    assert {"event": "permission", "call": "call-1", "outcome": "cancelled"} in heard
    assert (workspace / "app.py").read_text() == "def main():\n    print('hi')\n"


def test_an_acp_agents_model_reaches_the_decisions_log(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, isolated_user_config: Path
) -> None:
    """Issue 48: session/new's current model (a ``model`` config option) is the model
    ``Assisted-by`` names for the agent's edits."""
    from redline.cli import main

    monkeypatch.setenv("SCRIPTED_AGENT_MODEL", "gemini-9-pro")
    new = "def main():\n    print('bye')\n"
    code, _events, _heard, err = run_exec(
        tmp_path, workspace, [{"do": "gemini_edit", "path": "app.py", "content": new}]
    )
    assert code == 0, err
    [decision] = _log(main, workspace)
    assert decision["assisted_by"].endswith(":gemini-9-pro"), decision
    assert decision["assisted_by"].startswith(decision["source"].split(":", 1)[1])
    assert decision["why"] is None and decision["via"] == "exec"


def _log(main: Any, root: Path) -> list[dict[str, Any]]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["log", "-C", str(root), "--json"]) == 0
    return list(json.loads(out.getvalue())["decisions"])
