"""A stored result says when it no longer describes the action (issue 39)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from redline.cli import main
from redline.rules import ActionFacts, RuleSet, decide_and_resolve
from redline.rules.hook import queue_resolver
from redline.workspace.queue import WorkspaceQueue
from redline.workspace.queue.check_results import read_check_results, write_check_results

from .conftest import CALC, RUFF, checks_toml, make_project, push_edit, user_config

UNUSED = CALC.replace("import os\n", "import os\nimport sys\n")


def pending_check(
    capfd: pytest.CaptureFixture[str], root: Path, *args: str
) -> tuple[int, str, str]:
    code = main(["pending", "-C", str(root), "check", *args])
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_a_changed_config_or_workspace_is_named(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str], git: bool
) -> None:
    root = make_project(tmp_path / "ws", git=git)
    user_config(isolated_user_config, checks_toml(("ruff", RUFF, "ruff-json", 60)))
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", CALC + "\n\ndef sub(a, b):\n    return a - b\n")
    code, out, _ = pending_check(capfd, root, action)
    assert code == 0 and "ruff: pass" in out and "out of date" not in out
    # Shown again, stored: current.
    code, out, _ = pending_check(capfd, root, action)
    assert code == 0 and "out of date" not in out

    # The check's command changes (a rule selected): the stored pass is out of date.
    changed = [*RUFF[:-1], "--select=F", "{files}"]
    user_config(isolated_user_config, checks_toml(("ruff", changed, "ruff-json", 60)))
    code, out, _ = pending_check(capfd, root, action)
    assert code == 1
    assert out.splitlines()[1:] == [
        "  ruff: pass",
        "    out of date (the check's config changed): --again reruns it",
    ]
    code, out, _ = pending_check(capfd, root, action, "--again")
    assert code == 0 and "out of date" not in out

    # A file the action does not touch changes in the workspace.
    (root / "tests" / "test_calc.py").write_text("# emptied\n")
    code, out, _ = pending_check(capfd, root, action, "--json")
    assert code == 1
    [entry] = json.loads(out)["checks"]
    assert entry["status"] == "pass"
    assert entry["out_of_date"] == "the files changed since"
    code, out, _ = pending_check(capfd, root, action)
    assert "    out of date (the files changed since): --again reruns it" in out.splitlines()
    queue.close()


def test_a_result_stored_before_says_age_unknown_and_a_rule_runs_it_again(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "ws", git=False)
    user_config(isolated_user_config, checks_toml(("ruff", RUFF, "ruff-json", 60)))
    (isolated_user_config / "rules.toml").write_text(
        '[[rule]]\nname = "linted"\ndecision = "apply"\nchecks = "pass"\n'
    )
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", UNUSED)
    # A results document as redline wrote it before results recorded their configuration.
    write_check_results(
        queue,
        action,
        {
            "id": action,
            "pid": 1,
            "pid_start": 0,
            "time": 0.0,
            "checks": [{"name": "ruff", "status": "pass", "new": [], "fixed": []}],
        },
    )
    code, out, _ = pending_check(capfd, root, action)
    assert code == 1
    assert out.splitlines()[1:] == ["  ruff: pass", "    age unknown: --again reruns it"]

    # `redline rules check` runs nothing and does not count the old pass.
    code = main(["rules", "-C", str(root), "check"])
    out, _ = capfd.readouterr()
    assert code == 0
    assert "ask by rule linted" in out
    assert "stored result is of unknown age" in out

    # A rule does not reuse it: the check runs again and finds the new import.
    record = queue.get(action)
    assert record is not None
    outcome = asyncio.run(
        decide_and_resolve(
            RuleSet(root),
            ActionFacts.of_record(record),
            record.id,
            record.label,
            queue_resolver(queue),
            preview=queue.preview(record),
        )
    )
    assert outcome is not None and not outcome.resolved
    assert "check ruff has 1 new finding(s)" in outcome.text
    stored = read_check_results(queue, action)
    assert stored is not None and stored["checks"][0]["status"] == "findings"
    assert stored["checks"][0]["config"] and stored["checks"][0]["base"]
    assert queue.get(action) is not None
    queue.close()


def test_a_timeout_changed_makes_a_timeout_out_of_date(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "ws", git=False)
    hang = [sys.executable, "-c", "import time; time.sleep(600)"]
    user_config(isolated_user_config, checks_toml(("slow", hang, "exit-code", 0.5)))
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", CALC + "# x\n")
    code, out, _ = pending_check(capfd, root, action)
    assert code == 1 and "slow: timeout" in out
    user_config(isolated_user_config, checks_toml(("slow", hang, "exit-code", 2)))
    code, out, _ = pending_check(capfd, root, action)
    assert "out of date (the check's config changed): --again reruns it" in out
    queue.close()
