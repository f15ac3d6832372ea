"""A hook's allowed write staged or committed per ``[git] on_apply`` once it is recorded
(real git, the gateway's unit-test style: the hook command in-process, the agent's write
done by the test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded
from tests.drivers.hooks.test_gateway import answer_of, decide, pending, start_hook
from tests.workspace.gitrepo import git, init_repo, isolate_git, write_config

from redline.cli import main
from redline.commands import hook as hook_command
from redline.review.follower import follow
from redline.workspace.preview import sha256_bytes
from redline.workspace.queue import WorkspaceQueue


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    ws = init_repo(tmp_path / "ws", {"a.txt": "hello\nworld\n", "b.txt": "b\n", "c.txt": "c\n"})
    # The person's own work: a staged edit, an unstaged one, an untracked file.
    (ws / "b.txt").write_text("b staged\n")
    git(ws, "add", "b.txt")
    (ws / "c.txt").write_text("c unstaged\n")
    (ws / "notes.txt").write_text("mine\n")
    return ws


@pytest.fixture
def queue(root: Path) -> Iterator[WorkspaceQueue]:
    q = WorkspaceQueue(root)
    follow(q, lambda: None)()
    yield q
    q.close()


def allowed_and_written(root: Path, queue: WorkspaceQueue, written: str) -> tuple[str, str]:
    """The hook proposes a.txt's edit, the reviewer applies it, the agent writes
    ``written``; returns the action id and what the post-tool hook said."""
    future = start_hook(recorded("pre-edit.json", root))
    [record] = pending(queue)
    result = decide(queue, record.id, "apply", "keeps the greeting")
    assert not result.is_error, result.text
    assert answer_of(future.result(30))["permissionDecision"] == "allow"
    assert git(root, "rev-list", "--count", "HEAD").strip() == "1"  # nothing yet
    (root / "a.txt").write_text(written, encoding="utf-8")
    post = hook_command.handle("claude", recorded("post-edit.json", root))
    assert post.code == 0, post.stderr
    return record.id, post.stdout + post.stderr


def test_commit_mode_commits_the_agents_write_with_trailers(
    root: Path,
    queue: WorkspaceQueue,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    action_id, said = allowed_and_written(root, queue, "hello\nthere\n")
    assert f"git: committed {action_id}" in said
    assert git(root, "rev-list", "--count", "HEAD").strip() == "2"
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["a.txt"]
    assert git(root, "show", "HEAD:a.txt") == "hello\nthere\n"
    message = git(root, "log", "-1", "--format=%B")
    assert f"Redline-Action: {action_id}" in message
    assert "Redline-Source: hook:claude" in message
    assert "Redline-Reason: keeps the greeting" in message
    assert "Redline-Reviewer: Rita Reviewer <rita@example.invalid>" in message
    # The person's own changes are as they were.
    assert git(root, "diff", "--cached", "--name-only").split() == ["b.txt"]
    assert git(root, "diff", "--name-only").split() == ["c.txt"]
    assert (root / "notes.txt").read_text() == "mine\n"
    # redline log links the commit to the decision made before the agent wrote.
    capfd.readouterr()
    assert main(["log", "-C", str(root), "--json"]) == 0
    decisions = json.loads(capfd.readouterr().out)["decisions"]
    assert [d["id"] for d in decisions] == [action_id]
    head = git(root, "rev-parse", "HEAD").strip()
    assert decisions[0]["commit"] == head and decisions[0]["decision"] == "applied"
    # And undo takes the commit back with the write.
    assert main(["undo", "-C", str(root)]) == 0
    assert git(root, "rev-list", "--count", "HEAD").strip() == "1"
    assert (root / "a.txt").read_text() == "hello\nworld\n"


def test_stage_mode_stages_exactly_the_agents_write(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "stage"\n')
    action_id, said = allowed_and_written(root, queue, "hello\nthere\n")
    assert f"git: staged {action_id}" in said
    assert sorted(git(root, "diff", "--cached", "--name-only").split()) == ["a.txt", "b.txt"]
    assert git(root, "show", ":a.txt") == "hello\nthere\n"
    assert git(root, "diff", "--name-only").split() == ["c.txt"]


def test_a_write_other_than_approved_is_not_committed(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    _action_id, said = allowed_and_written(root, queue, "hello\nsomething else\n")
    assert "differs from what the reviewer approved" in said
    assert "git: a.txt was not committed" in said
    assert git(root, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(root, "diff", "--cached", "--name-only").split() == ["b.txt"]


def test_no_git_step_by_default(root: Path, queue: WorkspaceQueue) -> None:
    _action_id, said = allowed_and_written(root, queue, "hello\nthere\n")
    assert "git:" not in said
    assert git(root, "diff", "--cached", "--name-only").split() == ["b.txt"]


def test_a_committed_claude_edit_says_who_assisted_from_the_transcript(
    root: Path,
    queue: WorkspaceQueue,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Issue 48: the post-tool hook reads the model from Claude Code's transcript."""
    from tests.drivers.hooks.test_agent_model import TRANSCRIPT

    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    future = start_hook(recorded("pre-edit.json", root))
    [record] = pending(queue)
    assert not decide(queue, record.id, "apply").is_error
    assert answer_of(future.result(30))["permissionDecision"] == "allow"
    (root / "a.txt").write_text("hello\nthere\n", encoding="utf-8")
    post = json.loads(recorded("post-edit.json", root))
    post.update(transcript_path=str(TRANSCRIPT), tool_use_id="toolu_scripted_2_0")
    done = hook_command.handle("claude", json.dumps(post).encode())
    assert done.code == 0, done.stderr
    message = git(root, "log", "-1", "--format=%B")
    assert "Assisted-by: claude-code:claude-opus-5-5" in message
    assert f"Redline-Action: {record.id}" in message and "Redline-Workspace: g" in message
    assert "Redline-Reviewer: Rita Reviewer <rita@example.invalid>" in message
    capfd.readouterr()
    assert main(["log", "-C", str(root), "--json"]) == 0
    [decision] = json.loads(capfd.readouterr().out)["decisions"]
    assert decision["assisted_by"] == "claude-code:claude-opus-5-5" and decision["why"] is None
    assert decision["via"] == "cli"
    assert decision["applied"] == {
        "a.txt": {
            "sha256": sha256_bytes(b"hello\nthere\n"),
            "blob": git(root, "rev-parse", "HEAD:a.txt").strip(),
        }
    }
    assert main(["log", "-C", str(root), "--verify"]) == 0


def test_without_the_model_the_log_says_why(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    allowed_and_written(root, queue, "hello\nthere\n")  # the recorded transcript is gone
    assert "Assisted-by" not in git(root, "log", "-1", "--format=%B")
    capfd.readouterr()
    assert main(["log", "-C", str(root), "--json"]) == 0
    [decision] = json.loads(capfd.readouterr().out)["decisions"]
    assert decision["assisted_by"] is None
    assert decision["why"].startswith("claude-code's transcript does not name the model")


def test_a_committed_codex_patch_names_the_model_its_payload_reported(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Issue 48: Codex sends ``model`` in every hook payload (recorded: ``gpt-5.5``)."""
    from tests.drivers.hooks import test_codex_gateway as codex
    from tests.drivers.hooks.test_codex_mapping import recorded as codex_recorded

    isolate_git(monkeypatch, tmp_path / "home")
    ws = init_repo(tmp_path / "cx", {"hello.txt": "hello\n", "gone.txt": "bye\n"})
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    q = WorkspaceQueue(ws)
    follow(q, lambda: None)()
    try:
        future = codex.start_hook(codex_recorded("PreToolUse.apply_patch.update.json", ws))
        [record] = pending(q)
        assert not decide(q, record.id, "apply").is_error
        assert codex.answer_of(future.result(30))["permissionDecision"] == "allow"
        patch = json.loads(codex_recorded("PreToolUse.apply_patch.update.json", ws))
        codex.apply_as_codex(ws, patch["tool_input"]["command"])
        assert codex.post(ws, patch["tool_input"]["command"]).code == 0
    finally:
        q.close()
    message = git(ws, "log", "-1", "--format=%B")
    assert "Assisted-by: codex:gpt-5.5" in message and "Redline-Source: hook:codex" in message
    capfd.readouterr()
    assert main(["log", "-C", str(ws), "--json"]) == 0
    [decision] = json.loads(capfd.readouterr().out)["decisions"]
    assert decision["assisted_by"] == "codex:gpt-5.5" and decision["via"] == "cli"
