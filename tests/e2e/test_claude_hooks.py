"""End to end: the real Claude Code (npm, pinned) with redline's hook installed, against the
scripted Anthropic server; a person decides with ``redline pending`` from another process.

Needs the agent binary in ``$REDLINE_AGENTS_DIR`` (``scripts/install-agents.sh``); skipped
locally with the reason when it is absent, a failure under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.agents import require_agent
from tests.e2e.anthropic_server import ScriptedAnthropic

pytestmark = pytest.mark.e2e

REDLINE = str(Path(sys.executable).with_name("redline"))


@pytest.fixture
def claude() -> str:
    return str(require_agent("claude"))


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "a.txt").write_text("hello\nworld\n", encoding="utf-8")
    done = subprocess.run(
        [REDLINE, "hooks", "install", "claude", "-C", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    yield root


def start_claude(
    claude: str, root: Path, server: ScriptedAnthropic, home: Path
) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "IS_SANDBOX"}
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=server.url,
        ANTHROPIC_API_KEY="dummy",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    return subprocess.Popen(
        [claude, "-p", "do it", "--permission-mode", "acceptEdits"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def redline(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REDLINE, *args], cwd=root, capture_output=True, text=True, check=False, timeout=60
    )


def wait_pending(root: Path, agent: subprocess.Popen[str]) -> dict[str, object]:
    """Block on the queue until the hook's action shows up (``pending list --json``)."""
    probe = (
        "import sys, threading\n"
        "from pathlib import Path\n"
        "from redline.workspace.queue import WorkspaceQueue\n"
        "from redline.review.follower import follow\n"
        "queue = WorkspaceQueue(Path(sys.argv[1]))\n"
        "event = threading.Event()\n"
        "stop = follow(queue, event.set)\n"
        "while not queue.list():\n"
        "    event.wait(1.0); event.clear()\n"
        "stop()\n"
        "print(queue.list()[0].id)\n"
    )
    waiter = subprocess.Popen(
        [sys.executable, "-c", probe, str(root)], stdout=subprocess.PIPE, text=True
    )
    try:
        out, _ = waiter.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        waiter.kill()
        agent.kill()
        raise AssertionError(f"no pending action; agent said: {agent.communicate()}") from None
    return {"id": out.strip()}


def finish(agent: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = agent.communicate(timeout=120)
    assert agent.returncode == 0, err
    return out, err


def test_discard_reason_reaches_the_model(claude: str, workspace: Path, tmp_path: Path) -> None:
    turns = [
        [
            {
                "tool_use": "Write",
                "input": {"file_path": str(workspace / "new.txt"), "content": "new\n"},
            }
        ]
    ]
    with ScriptedAnthropic(turns) as server:
        agent = start_claude(claude, workspace, server, tmp_path / "home")
        action = wait_pending(workspace, agent)
        done = redline(
            workspace, "pending", "discard", str(action["id"]), "--reason", "not this file"
        )
        assert done.returncode == 0, done.stderr
        finish(agent)
        results = server.tool_results()
    assert not (workspace / "new.txt").exists()
    assert any(
        "Discarded by the reviewer: not this file" in json.dumps(r.get("content")) for r in results
    ), results


def test_apply_writes_and_undo_restores(claude: str, workspace: Path, tmp_path: Path) -> None:
    target = workspace / "a.txt"
    turns = [
        [{"tool_use": "Read", "input": {"file_path": str(target)}}],
        [
            {
                "tool_use": "Edit",
                "input": {"file_path": str(target), "old_string": "world", "new_string": "there"},
            }
        ],
    ]
    with ScriptedAnthropic(turns) as server:
        agent = start_claude(claude, workspace, server, tmp_path / "home")
        action = wait_pending(workspace, agent)
        done = redline(workspace, "pending", "apply", str(action["id"]))
        assert done.returncode == 0, done.stderr
        finish(agent)
    assert target.read_text(encoding="utf-8") == "hello\nthere\n"
    undone = redline(workspace, "undo")
    assert undone.returncode == 0, undone.stderr + undone.stdout
    assert target.read_text(encoding="utf-8") == "hello\nworld\n"


def test_reviewer_edit_is_what_lands(claude: str, workspace: Path, tmp_path: Path) -> None:
    target = workspace / "a.txt"
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'reviewed\\n' > \"$1\"\n", encoding="utf-8")
    editor.chmod(0o755)
    turns = [
        [
            {
                "tool_use": "Write",
                "input": {"file_path": str(workspace / "b.txt"), "content": "proposed\n"},
            }
        ]
    ]
    with ScriptedAnthropic(turns) as server:
        agent = start_claude(claude, workspace, server, tmp_path / "home")
        action = wait_pending(workspace, agent)
        env = {**os.environ, "VISUAL": str(editor), "EDITOR": str(editor)}
        edited = subprocess.run(
            [REDLINE, "pending", "edit", str(action["id"])],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert edited.returncode == 0, edited.stderr
        new_id = edited.stdout.strip().rsplit(" is now ", 1)[1].split(" ")[0]
        applied = redline(workspace, "pending", "apply", new_id)
        assert applied.returncode == 0, applied.stderr
        finish(agent)
        results = server.tool_results()
    assert (workspace / "b.txt").read_text(encoding="utf-8") == "reviewed\n"
    assert target.read_text(encoding="utf-8") == "hello\nworld\n"
    assert results and not results[0].get("is_error"), results


def test_a_redline_that_cannot_run_blocks_the_edit(
    claude: str, workspace: Path, tmp_path: Path
) -> None:
    settings = workspace / ".claude" / "settings.local.json"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(text.replace(REDLINE, str(tmp_path / "gone" / "redline")), encoding="utf-8")
    turns = [
        [
            {
                "tool_use": "Write",
                "input": {"file_path": str(workspace / "new.txt"), "content": "new\n"},
            }
        ]
    ]
    with ScriptedAnthropic(turns) as server:
        agent = start_claude(claude, workspace, server, tmp_path / "home")
        finish(agent)
        results = server.tool_results()
    assert not (workspace / "new.txt").exists()
    assert results and results[0].get("is_error") is True


def test_killing_redline_mid_wait_blocks_the_edit(
    claude: str, workspace: Path, tmp_path: Path
) -> None:
    turns = [
        [
            {
                "tool_use": "Write",
                "input": {"file_path": str(workspace / "new.txt"), "content": "new\n"},
            }
        ]
    ]
    with ScriptedAnthropic(turns) as server:
        agent = start_claude(claude, workspace, server, tmp_path / "home")
        wait_pending(workspace, agent)
        pid = _hook_pid(workspace)
        os.kill(pid, 9)
        finish(agent)
        results = server.tool_results()
    assert not (workspace / "new.txt").exists()
    assert results and results[0].get("is_error") is True


def _hook_pid(root: Path) -> int:
    from redline.workspace.queue import WorkspaceQueue

    queue = WorkspaceQueue(root)
    try:
        return queue.list()[0].source.pid
    finally:
        queue.close()


def test_a_committed_hook_edit_says_who_assisted_and_verifies(
    claude: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 48's "done when": the real Claude Code's Edit, applied by a person, committed
    with Assisted-by (the model read from Claude Code's transcript in the post-tool hook),
    Redline-Action, Redline-Workspace and the reviewer; ``redline log --verify`` passes, and
    fails once the commit is amended to hold other bytes."""
    root = tmp_path / "repo"
    root.mkdir()
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "REDLINE_CONFIG_DIR": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    for key, value in env.items():  # redline, git and the agent's hook all read these
        monkeypatch.setenv(key, value)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text('[git]\non_apply = "commit"\n')

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    git("init", "-q", "-b", "main")
    git("config", "user.name", "Rita Reviewer")
    git("config", "user.email", "rita@example.invalid")
    target = root / "a.txt"
    target.write_text("hello\nworld\n", encoding="utf-8")
    git("add", "a.txt")
    git("commit", "-q", "-m", "base")
    installed = redline(root, "hooks", "install", "claude", "-C", str(root))
    assert installed.returncode == 0, installed.stderr
    turns = [
        [{"tool_use": "Read", "input": {"file_path": str(target)}}],
        [
            {
                "tool_use": "Edit",
                "input": {"file_path": str(target), "old_string": "world", "new_string": "there"},
            }
        ],
    ]
    home = tmp_path / "home"
    with ScriptedAnthropic(turns) as server:
        agent = start_claude(claude, root, server, home)
        action = wait_pending(root, agent)
        done = redline(root, "pending", "apply", str(action["id"]))
        assert done.returncode == 0, done.stderr
        finish(agent)
    record = os.environ.get("REDLINE_RECORD_TRANSCRIPT")
    if record:  # how tests/fixtures/hooks/claude/transcript.jsonl was made
        [transcript] = (home / ".claude" / "projects").rglob("*.jsonl")
        Path(record).write_bytes(transcript.read_bytes())
    message = git("log", "-1", "--format=%B")
    assert f"Redline-Action: {action['id']}" in message
    assert "Redline-Workspace: g" in message
    assert "Redline-Reviewer: Rita Reviewer <rita@example.invalid>" in message
    assisted = [line for line in message.splitlines() if line.startswith("Assisted-by:")]
    assert len(assisted) == 1 and assisted[0].startswith("Assisted-by: claude-code:claude-")
    logged = redline(root, "log", "--json")
    [decision] = json.loads(logged.stdout)["decisions"]
    assert decision["via"] == "cli" and decision["resolved_by"] == "person"
    assert decision["assisted_by"] == assisted[0].split(": ", 1)[1]
    assert decision["applied"]["a.txt"]["blob"] == git("rev-parse", "HEAD:a.txt").strip()
    assert redline(root, "log", "--verify").returncode == 0
    target.write_text("hello\nsomething else\n", encoding="utf-8")
    git("commit", "-q", "--amend", "--no-edit", "a.txt")
    failed = redline(root, "log", "--verify")
    assert failed.returncode == 1 and "mismatch" in failed.stdout
