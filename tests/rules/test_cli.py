"""``redline rules list`` and ``redline rules check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.commands import rules as rules_command
from redline.rules import ActionFacts, FileFact, user_rules_file

RULES = """[[rule]]
name = "tests"
decision = "apply"
tools = ["edit", "write"]
paths = ["tests/**"]
max_changed_lines = 40

[[rule]]
name = "migrations"
decision = "discard"
paths = ["migrations/**"]
reason = "hand-written"
"""


def write_user(text: str) -> Path:
    path = user_rules_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_list_shows_rules_and_where_they_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_user(RULES)
    (tmp_path / ".redline").mkdir(mode=0o700)
    (tmp_path / ".redline" / "rules.toml").write_text(
        '[[rule]]\nname = "repo"\ndecision = "apply"\n', encoding="utf-8"
    )
    assert main(["rules", "-C", str(tmp_path), "list"]) == 0
    out = capsys.readouterr().out
    assert f"1. tests  apply  (user: {path}:1)" in out
    assert "tools edit, write · paths tests/** · at most 40 changed lines" in out
    assert f"2. migrations  discard  (user: {path}:8)" in out and "reason: hand-written" in out
    assert "repo" not in out.split("not trusted")[0].split("rules.toml: ignored")[0]
    assert "rules.toml: ignored, this workspace is not trusted" in out
    assert main(["rules", "-C", str(tmp_path), "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in data["rules"]] == ["tests", "migrations"]
    assert data["rules"][0]["line"] == 1 and data["rules"][0]["origin"] == "user"
    assert data["ignored_workspace_file"].endswith(".redline/rules.toml")


def test_list_with_no_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "-C", str(tmp_path), "list"]) == 0
    assert "No review rules" in capsys.readouterr().out


def test_a_malformed_file_is_named_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_user(RULES + '\n[[rule]]\nname = "x"\ndecision = "apply"\nkind = ["modify"]\n')
    assert main(["rules", "-C", str(tmp_path), "list"]) == 1
    captured = capsys.readouterr()
    assert f"{path}:17: kind: unknown key (did you mean 'kinds'?)" in captured.err
    assert "No review rules" in captured.out  # nothing from that file is used


def test_bad_workspace_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "-C", str(tmp_path / "missing"), "check"]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_check_says_which_rule_would_decide_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_user(RULES)
    pending = [
        (
            "pa-3",
            ActionFacts(
                "write",
                files=(FileFact(("tests/t.py",), "create"),),
                added=3,
                label="Write: tests/t.py",
            ),
        ),
        (
            "pa-2",
            ActionFacts(
                "edit",
                files=(FileFact(("migrations/1.py",), "modify"),),
                added=1,
                removed=1,
                label="Edit: migrations/1.py",
            ),
        ),
        (
            "pa-1",
            ActionFacts(
                "edit", files=(FileFact(("src/a.py",), "modify"),), added=1, label="Edit: src/a.py"
            ),
        ),
        (
            "pa-4",
            ActionFacts(
                "edit",
                files=(FileFact(("tests/u.py",), "modify"),),
                added=1,
                stale=True,
                label="Edit: tests/u.py",
            ),
        ),
    ]
    monkeypatch.setattr(rules_command, "pending_facts", lambda root: pending)
    assert main(["rules", "-C", str(tmp_path), "check"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "pa-3  Write: tests/t.py  [write]"
    assert out[1].startswith("     apply by rule tests: rule tests (")
    assert "tool write; 1 file(s) under paths; 3 ≤ 40 changed lines" in out[1]
    assert out[3].startswith("     discard by rule migrations: ")
    assert out[5] == "     ask: no rule matched; a person reviews it"
    assert out[7].startswith("     ask by rule tests: ") and "the action is stale" in out[7]
    assert main(["rules", "-C", str(tmp_path), "check", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(a["id"], a["decision"], a["rule"]) for a in data["actions"]] == [
        ("pa-3", "apply", "tests"),
        ("pa-2", "discard", "migrations"),
        ("pa-1", "ask", None),
        ("pa-4", "ask", "tests"),
    ]
    assert data["actions"][1]["reason"] == "hand-written"


def test_check_without_a_queue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rules_command, "pending_facts", lambda root: None)
    assert main(["rules", "-C", str(tmp_path), "check"]) == 0
    assert "no workspace queue" in capsys.readouterr().out


def test_check_reads_the_workspace_queue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.workspace.queue.helpers import create_draft, edit_draft

    from redline.workspace.queue import WorkspaceQueue

    write_user(RULES)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("a = 1\n", encoding="utf-8")
    with WorkspaceQueue(tmp_path) as queue:
        first = queue.push(create_draft("migrations/1.py", "x\n"))
        second = queue.push(edit_draft(tmp_path, "tests/t.py"))
        third = queue.push(edit_draft(tmp_path, "tests/t.py", "a = 3\n"))
    (tmp_path / "tests" / "t.py").write_text("a = 2\n", encoding="utf-8")  # both edits stale
    assert main(["rules", "-C", str(tmp_path), "check", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    got = [(a["id"], a["decision"], a["rule"]) for a in data["actions"]]
    assert got == [
        (third.id, "ask", "tests"),
        (second.id, "ask", "tests"),
        (first.id, "discard", "migrations"),
    ]
    assert "stale" in data["actions"][0]["why"]
