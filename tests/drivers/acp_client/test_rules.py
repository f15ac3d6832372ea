"""Review rules decide an ACP agent's pushed actions (docs/rules.md), headless."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.drivers.acp_client.test_exec_agent import of, run_exec

from redline.workspace.journal import undo_history

RULES = """
[[rule]]
name = "tests"
decision = "apply"
tools = ["acp:write_text_file"]
paths = ["tests/**"]

[[rule]]
name = "migrations"
decision = "discard"
tools = ["acp:*"]
paths = ["migrations/**"]
reason = "migrations are written by hand here"

[[rule]]
name = "shell"
decision = "apply"
tools = ["acp:exec*"]
"""


@pytest.fixture
def workspace(tmp_path: Path, isolated_user_config: Path) -> Path:
    (isolated_user_config / "rules.toml").write_text(RULES)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    return root


def prompts(heard: list[dict[str, Any]]) -> list[str]:
    return [h["text"] for h in heard if h["event"] == "prompt"]


def test_an_apply_rule_writes_without_review(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "fs_write", "path": "tests/test_a.py", "content": "assert True\n"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 0
    assert (workspace / "tests/test_a.py").read_text() == "assert True\n"
    assert {"event": "write", "path": "tests/test_a.py", "ok": True} in heard
    resolved = of(events, "pending_resolved")
    assert len(resolved) == 1
    assert (resolved[0]["action"], resolved[0]["by"], resolved[0]["rule"]) == (
        "apply",
        "rule",
        "tests",
    )
    assert of(events, "agent_end")[-1] == {**of(events, "agent_end")[-1], "pending": 0}
    # The agent hears which rule decided in the follow-up prompt; undo knows the write.
    assert "Write: tests/test_a.py: applied by rule tests" in prompts(heard)[1]
    assert undo_history(workspace)[0].source_tool_name == "acp:write_text_file"


def test_a_discard_rule_refuses_the_write_with_its_reason(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "fs_write", "path": "migrations/0007.py", "content": "drop()\n"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 0
    assert not (workspace / "migrations").exists()
    write = next(h for h in heard if h["event"] == "write")
    assert write["error"] == ("Discarded by rule migrations: migrations are written by hand here")
    resolved = of(events, "pending_resolved")[0]
    assert (resolved["action"], resolved["by"], resolved["rule"]) == (
        "discard",
        "rule",
        "migrations",
    )
    assert resolved["reason"] == "migrations are written by hand here"
    assert (
        "Write: migrations/0007.py: discarded by rule migrations. "
        "Reason: migrations are written by hand here" in prompts(heard)[1]
    )


def test_what_no_rule_decides_still_waits(tmp_path: Path, workspace: Path) -> None:
    steps = [
        {"do": "fs_write", "path": "tests/test_b.py", "content": "assert 1\n"},
        {"do": "fs_write", "path": "app.py", "content": "x = 2\n"},
        {"do": "text", "text": "after the write"},
    ]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    assert (workspace / "tests/test_b.py").exists()
    assert (workspace / "app.py").read_text() == "x = 1\n"
    assert [e["rule"] for e in of(events, "pending_resolved")] == ["tests"]
    assert of(events, "agent_end")[-1]["pending"] == 1
    assert not any(h.get("ok") for h in heard if h.get("path") == "app.py")


def test_a_bare_permission_needs_kinds_permission_or_the_tool_by_name(
    tmp_path: Path, workspace: Path, isolated_user_config: Path
) -> None:
    # Rule "shell" names acp:exec* (a glob): the engine leaves a preview-less action to a person.
    steps = [{"do": "shell", "command": "make"}]
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    assert of(events, "pending_resolved") == []
    assert {"event": "permission", "call": "call-1", "outcome": "cancelled"} in heard
    # Naming the tool exactly lets it allow the permission, answered like a person's apply.
    (isolated_user_config / "rules.toml").write_text(
        '[[rule]]\nname = "make"\ndecision = "apply"\ntools = ["acp:execute"]\n'
    )
    (tmp_path / "record.jsonl").unlink()
    code, events, heard, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 0
    assert {"event": "permission", "call": "call-1", "outcome": "allow"} in heard
    resolved = of(events, "pending_resolved")[0]
    assert (resolved["by"], resolved["rule"], resolved["source_tool_name"]) == (
        "rule",
        "make",
        "acp:execute",
    )
    assert "Run make: applied by rule make" in prompts(heard)[1]


def test_untrusted_workspace_rules_do_not_count(tmp_path: Path, workspace: Path) -> None:
    state = workspace / ".redline"
    state.mkdir(exist_ok=True)
    (state / "rules.toml").write_text(
        '[[rule]]\nname = "all"\ndecision = "apply"\ntools = ["acp:write_text_file"]\n'
    )
    steps = [{"do": "fs_write", "path": "app.py", "content": "x = 2\n"}]
    code, events, _, _ = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 3
    assert (workspace / "app.py").read_text() == "x = 1\n"
    # With --trust for this run they do.
    code, events, _, _ = run_exec(tmp_path, workspace, steps, "--trust", resolver="human")
    assert code == 0
    assert (workspace / "app.py").read_text() == "x = 2\n"
    assert of(events, "pending_resolved")[-1]["rule"] == "all"


def test_apply_all_does_not_run_rules(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "fs_write", "path": "migrations/0001.py", "content": "up()\n"}]
    code, events, _, _ = run_exec(tmp_path, workspace, steps, resolver="apply-all")
    assert code == 0
    assert (workspace / "migrations/0001.py").exists()
    assert of(events, "pending_resolved")[0]["by"] == "auto"


def test_a_session_rule_decides_what_already_waits(tmp_path: Path) -> None:
    import json
    import shlex
    import sys
    import threading

    from tests.drivers.acp_client.test_exec_agent import AGENT

    from redline.drivers.acp.session import AcpSession
    from redline.drivers.acp.spec import resolve_agent
    from redline.rules import Rule

    root = tmp_path / "ws"
    root.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"do": "fs_write", "path": "docs/a.md", "content": "# a\n"}]))
    record = tmp_path / "record.jsonl"
    command = shlex.join([sys.executable, str(AGENT), str(script), str(record)])
    session = AcpSession(root, resolve_agent(command, root), log_session=False)
    seen: list[Any] = []
    session.events.subscribe(seen.append)
    pushed = threading.Event()
    session.store.subscribe(lambda event: pushed.set() if event.kind == "push" else None)
    try:
        done = session.start_prompt("go")
        assert pushed.wait(120)  # hang guard only
        session.rules.add_session_rule(
            Rule(name="docs", decision="apply", tools=("acp:*",), paths=("docs/**",))
        )
        texts = session.apply_rules()
        # The write's own push may already have met the new rule; either way it decides once.
        assert all(t.startswith("Applied by rule docs: Write: docs/a.md.") for t in texts)
        assert done.result(timeout=120) == "done"
    finally:
        session.close()
    assert (root / "docs/a.md").read_text() == "# a\n"
    resolved = [e for e in seen if type(e).__name__ == "PendingResolved"]
    assert [(e.by, e.rule) for e in resolved] == [("rule", "docs")]
