"""Rules with ``checks = "pass"``: apply only what every check passes, ask otherwise."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from redline.rules import ActionFacts, RuleSet, RulesFileError, decide_and_resolve, parse_rules
from redline.rules.hook import queue_resolver
from redline.workspace.queue import WorkspaceQueue

from .conftest import CALC, RUFF, checks_toml, make_project, push_edit, user_config

RULE = '[[rule]]\nname = "linted"\ndecision = "apply"\nchecks = "pass"\n'


def decide(queue: WorkspaceQueue, action_id: str):  # type: ignore[no-untyped-def]
    record = queue.get(action_id)
    assert record is not None
    return asyncio.run(
        decide_and_resolve(
            RuleSet(queue.root),
            ActionFacts.of_record(record),
            record.id,
            record.label,
            queue_resolver(queue),
            preview=queue.preview(record),
        )
    )


def test_applies_a_clean_change_asks_for_a_new_finding(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    root = make_project(tmp_path / "ws", git=False)
    user_config(isolated_user_config, checks_toml(("ruff", RUFF, "ruff-json", 60)))
    (isolated_user_config / "rules.toml").write_text(RULE)
    queue = WorkspaceQueue(root)

    dirty = push_edit(queue, "pkg/calc.py", CALC.replace("import os\n", "import os\nimport re\n"))
    outcome = decide(queue, dirty)
    assert outcome is not None and not outcome.resolved
    assert outcome.decision.decision == "ask"
    assert "check ruff has 1 new finding(s)" in outcome.text
    assert "checks: ruff 1 new" in outcome.text
    assert queue.get(dirty) is not None  # still pending
    assert "import re" not in (root / "pkg" / "calc.py").read_text()
    asyncio.run(queue_resolver(queue)("discard", "no", dirty, outcome.decision))

    clean = push_edit(queue, "pkg/calc.py", CALC + "\n\ndef sub(a, b):\n    return a - b\n")
    outcome = decide(queue, clean)
    assert outcome is not None and outcome.resolved, outcome
    assert "def sub" in (root / "pkg" / "calc.py").read_text()
    queue.close()


def test_without_checks_configured_it_asks(tmp_path: Path, isolated_user_config: Path) -> None:
    root = make_project(tmp_path / "ws", git=False)
    (isolated_user_config / "rules.toml").write_text(RULE)
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", CALC + "# more\n")
    outcome = decide(queue, action)
    assert outcome is not None and not outcome.resolved
    assert "no checks are configured" in outcome.text
    assert queue.get(action) is not None
    queue.close()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (RULE.replace('"pass"', '"green"'), 'expected "pass"'),
        (RULE.replace('"apply"', '"ask"'), "only an apply rule waits for checks"),
    ],
)
def test_bad_checks_key(text: str, problem: str) -> None:
    with pytest.raises(RulesFileError, match=problem):
        parse_rules(text.encode(), "rules.toml", "user")


def test_rules_list_and_check_show_and_evaluate_the_checks_condition(
    tmp_path: Path, isolated_user_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from redline.cli import main

    root = make_project(tmp_path / "ws", git=False)
    (isolated_user_config / "rules.toml").write_text(RULE)
    assert main(["rules", "-C", str(root), "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == '     every action · checks = "pass": applies only once every check passes'
    assert out[3] == "     checks: no checks are configured, so it never applies"

    user_config(isolated_user_config, checks_toml(("ruff", RUFF, "ruff-json", 60)))
    assert main(["rules", "-C", str(root), "list", "--json"]) == 0
    [rule] = json.loads(capsys.readouterr().out)["rules"]
    assert rule["checks"] == "pass"
    assert rule["checks_in_force"] == "waits on checks ruff"

    queue = WorkspaceQueue(root)
    dirty = push_edit(queue, "pkg/calc.py", CALC.replace("import os\n", "import os\nimport re\n"))
    # Not run yet: it would wait, and `rules check` runs nothing.
    assert main(["rules", "-C", str(root), "check"]) == 0
    out = capsys.readouterr().out
    assert "ask by rule linted" in out
    assert f"check ruff has not run on it (`redline pending check {dirty}` runs it)" in out
    assert main(["pending", "-C", str(root), "check", dirty]) == 1
    capsys.readouterr()
    assert main(["rules", "-C", str(root), "check", "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)["actions"]
    assert item["decision"] == "ask" and item["rule"] == "linted"
    assert item["checks"] == {
        "passed": False,
        "why": "check ruff has 1 new finding(s)",
        "summary": "checks: ruff 1 new",
    }
    asyncio.run(queue_resolver(queue)("discard", "no", dirty, decide_nothing()))

    clean = push_edit(queue, "pkg/calc.py", CALC + "\n\ndef sub(a, b):\n    return a - b\n")
    assert main(["pending", "-C", str(root), "check", clean]) == 0
    capsys.readouterr()
    assert main(["rules", "-C", str(root), "check"]) == 0
    out = capsys.readouterr().out
    assert "apply by rule linted" in out and "every check passed" in out
    queue.close()


def decide_nothing():  # type: ignore[no-untyped-def]
    from redline.rules import Decision

    return Decision("discard", rule="test")
