"""Codex's shell tool through hooks, over the payloads recorded from Codex 0.171.0.

The model calls ``exec_command``; Codex sends it to PreToolUse/PostToolUse hooks as
``tool_name: "Bash"`` with ``tool_input: {command}`` (tests/fixtures/hooks/codex/
PreToolUse.Bash.json; answers.Bash.json: a deny blocks the command and its reason reaches
the model, a matcher ``exec_command`` never fires).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.drivers.hooks.test_codex_gateway import answer_of, start_hook
from tests.drivers.hooks.test_codex_mapping import FIXTURES, recorded
from tests.drivers.hooks.test_gateway import decide, pending

from redline.commands import hook as hook_command
from redline.drivers.hooks.install import MATCHERS
from redline.drivers.hooks.mapping import reviewed_tool
from redline.drivers.hooks.payload import parse_payload
from redline.review.follower import follow
from redline.workspace.queue import WorkspaceQueue

COMMAND = "echo ran > out.txt"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    return ws


@pytest.fixture
def queue(root: Path) -> Iterator[WorkspaceQueue]:
    q = WorkspaceQueue(root)
    follow(q, lambda: None)()
    yield q
    q.close()


@pytest.fixture
def review_shell(isolated_user_config: Path) -> None:
    (isolated_user_config / "config.toml").write_text(
        "[hooks]\nreview_shell = true\n", encoding="utf-8"
    )


def test_the_recorded_shell_payload_is_a_shell_tool(root: Path) -> None:
    payload = parse_payload("codex", recorded("PreToolUse.Bash.json", root))
    assert (payload.tool_name, payload.tool_input) == ("Bash", {"command": COMMAND})
    assert payload.is_pre and payload.tool_use_id and payload.session_id
    assert reviewed_tool(payload) == "shell"


def test_without_review_shell_the_shell_passes_through(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path
) -> None:
    rendered = hook_command.handle("codex", recorded("PreToolUse.Bash.json", root))
    assert (rendered.code, rendered.stdout, rendered.stderr) == (0, "", "")
    assert queue.list() == []


@pytest.mark.usefixtures("review_shell")
def test_review_shell_makes_the_command_a_permission_action_and_discard_denies(
    root: Path, queue: WorkspaceQueue
) -> None:
    future = start_hook(recorded("PreToolUse.Bash.json", root))
    [record] = pending(queue)
    assert record.source.canonical == "hook:codex"
    assert record.source_tool_name == "hook:Bash"
    assert record.preview is None and record.files == []  # a permission: nothing to preview
    assert record.label == f"Bash: {COMMAND}"
    assert record.details["tool_input"] == {"command": COMMAND}
    decide(queue, record.id, "discard", "no shell today")
    output = answer_of(future.result(30))
    # The shape Codex obeyed when recorded (answers.Bash.json, "deny_json").
    assert output == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "Discarded by the reviewer: no shell today",
    }
    assert not (root / "out.txt").exists()


@pytest.mark.usefixtures("review_shell")
def test_review_shell_apply_allows_the_command(root: Path, queue: WorkspaceQueue) -> None:
    future = start_hook(recorded("PreToolUse.Bash.json", root))
    [record] = pending(queue)
    decide(queue, record.id, "apply", "fine")
    output = answer_of(future.result(30))
    assert output["permissionDecision"] == "allow"
    assert "updatedInput" not in output  # the command runs as the model wrote it
    post = hook_command.handle("codex", recorded("PostToolUse.Bash.json", root))
    assert (post.code, post.stdout) == (0, "")  # nothing to record: no file change was approved


def test_the_codex_hook_matches_the_shell_tool_as_codex_names_it() -> None:
    answers = json.loads((FIXTURES / "answers.Bash.json").read_text(encoding="utf-8"))
    fired = {e["matcher"]: e["hook_calls"] for e in answers["experiments"]}
    assert fired["Bash"] and not fired["exec_command"]  # what Codex 0.171.0 did
    assert "Bash" in MATCHERS["codex"].split("|")
    assert "apply_patch" in MATCHERS["codex"].split("|")
