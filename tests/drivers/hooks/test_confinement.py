"""``redline hook`` confines paths as the rest of redline does (``workspace.paths``), and
refuses a payload without a usable ``cwd`` — checked in a separate process, with the
recorded payloads of all three agents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hooks"
HIDDEN = (".GIT/config", ".Redline/x", "sub/nested/.git/config", "sub/.Git/hooks/pre-commit")
NO_CWD = object()


def payload(agent: str, root: Path, rel: str, cwd: object = None) -> bytes:
    """A recorded payload of ``agent`` writing ``rel`` (absolute) in ``root``."""
    if agent == "claude":
        data: dict[str, Any] = json.loads((FIXTURES / "claude" / "pre-write.json").read_bytes())
        data["tool_input"] = {"file_path": str(root / rel), "content": "x = 1\n"}
    elif agent == "gemini":
        data = json.loads(
            (FIXTURES / "gemini" / "BeforeTool.write_file.new_file.json").read_bytes()
        )
        data["tool_input"] = {"file_path": str(root / rel), "content": "x = 1\n"}
    else:
        data = json.loads((FIXTURES / "codex" / "PreToolUse.apply_patch.update.json").read_bytes())
        data["tool_input"] = {
            "command": f"*** Begin Patch\n*** Add File: {rel}\n+x = 1\n*** End Patch\n"
        }
    if cwd is NO_CWD:
        del data["cwd"]
    else:
        data["cwd"] = str(root) if cwd is None else cwd
    return json.dumps(data).encode()


def run_hook(agent: str, raw: bytes, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CONFIG_DIR"] = str(cwd.parent / "config-home")
    env["REDLINE_HOOK_SERVER"] = "off"  # as the whole suite: no hook server left behind
    return subprocess.run(
        [sys.executable, "-m", "redline", "hook", agent],
        input=raw.decode(),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (ws / "sub" / "nested" / ".git").mkdir(parents=True)
    (ws / "sub" / "nested" / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    return ws


def queued(root: Path) -> list[str]:
    actions = root / ".redline" / "queue" / "actions"
    return sorted(p.name for p in actions.iterdir()) if actions.is_dir() else []


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
@pytest.mark.parametrize("rel", HIDDEN, ids=["GIT", "Redline", "nested-git", "sub-Git"])
def test_a_protected_path_in_any_case_is_denied_at_once(agent: str, rel: str, root: Path) -> None:
    proc = run_hook(agent, payload(agent, root, rel), root)
    assert proc.returncode in (0, 2), proc.stderr
    said = proc.stdout + proc.stderr
    assert "redline never touches files inside" in said
    assert "did not answer" not in said
    assert queued(root) == []  # denied, never queued
    if agent in ("claude", "codex"):
        decision = json.loads(proc.stdout)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny"
    else:
        assert json.loads(proc.stdout)["decision"] == "deny"


def test_a_symlinked_folder_into_git_is_denied(root: Path) -> None:
    (root / "gitlink").symlink_to(root / ".git")
    proc = run_hook("claude", payload("claude", root, "gitlink/config"), root)
    assert "redline never touches files inside .git/" in proc.stdout
    assert queued(root) == []
    assert (root / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
@pytest.mark.parametrize(
    ("cwd", "why"),
    [("", "`cwd` is empty"), ("ws", "is a relative path"), (NO_CWD, "`cwd` is missing")],
    ids=["empty", "relative", "missing"],
)
def test_a_payload_without_a_usable_cwd_is_refused(
    agent: str, cwd: object, why: str, root: Path, tmp_path: Path
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    proc = run_hook(agent, payload(agent, root, "new.txt", cwd), here)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert why in proc.stderr
    assert sorted(os.listdir(here)) == []  # nothing created where the hook ran
    assert not (root / ".redline").exists()
    assert not (root / "new.txt").exists()


def test_a_cwd_that_is_no_folder_is_refused(root: Path, tmp_path: Path) -> None:
    proc = run_hook("claude", payload("claude", root, "new.txt", str(root / "gone")), tmp_path)
    assert proc.returncode == 2
    assert "is not an existing folder" in proc.stderr
    assert not (root / "gone").exists()


def test_a_symlinked_folder_inside_the_workspace_names_the_real_path(root: Path) -> None:
    from tests.drivers.hooks.test_gateway import answer_of, decide, pending, start_hook

    from redline.workspace.queue import WorkspaceQueue

    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("a = 1\n")
    (root / "tests").symlink_to("src")
    queue = WorkspaceQueue(root)
    try:
        future = start_hook(payload("claude", root, "tests/app.py"))
        (record,) = pending(queue)
        # Queued like an ACP or MCP proposal: the real path, and the path asked beside it.
        assert record.files == ["src/app.py"]
        assert record.via == {"src/app.py": "tests/app.py"}
        decide(queue, record.id, "discard", "no")
        assert answer_of(future.result(timeout=60))["permissionDecision"] == "deny"
    finally:
        queue.close()
