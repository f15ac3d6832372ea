"""Real ruff and pytest on small generated projects, through ``redline pending check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.queue import WorkspaceQueue

from .conftest import BROKEN, CALC, STANDARD, make_project, push_edit, snapshot, user_config


def check(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, dict, str]:
    code = main(["pending", "-C", str(root), "check", *args, "--json"])
    out, err = capfd.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_only_the_new_findings_then_fixed(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str], git: bool
) -> None:
    root = make_project(tmp_path / "ws", git=git)
    user_config(isolated_user_config, STANDARD)
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", BROKEN)
    before = snapshot(root)

    code, data, err = check(capfd, root, action)

    assert code == 1, err
    assert data["id"] == action
    by_name = {c["name"]: c for c in data["checks"]}
    assert [c["name"] for c in data["checks"]] == ["ruff", "pytest"]
    ruff, tests = by_name["ruff"], by_name["pytest"]
    assert ruff["status"] == "findings"
    assert ruff["new"] == [
        {
            "path": "pkg/calc.py",
            "line": 2,
            "code": "F401",
            "message": "`sys` imported but unused",
        }
    ]
    assert ruff["fixed"] == []  # the old unused `os` is neither new nor fixed
    assert tests["status"] == "findings"
    assert [(f["path"], f["code"]) for f in tests["new"]] == [
        ("tests/test_calc.py", "tests/test_calc.py::test_mul")
    ]
    assert tests["fixed"] == []  # test_old_failure failed before too
    # Nothing ran in or wrote to the workspace.
    assert snapshot(root) == before

    # The results are stored with the action: a second call shows them without running.
    code2, again, _ = check(capfd, root, action)
    assert code2 == 1 and again == data

    # The proposal lands; a fix of both shows them as fixed.
    (root / "pkg" / "calc.py").write_text(BROKEN)
    queue.close()
    queue = WorkspaceQueue(root)
    fix = push_edit(queue, "pkg/calc.py", CALC)
    code3, fixed, err3 = check(capfd, root, fix)
    assert code3 == 0, err3
    fixed_by = {c["name"]: c for c in fixed["checks"]}
    assert fixed_by["ruff"]["status"] == "pass"
    assert fixed_by["ruff"]["new"] == []
    assert [(f["code"], f["line"]) for f in fixed_by["ruff"]["fixed"]] == [("F401", 2)]
    assert fixed_by["pytest"]["status"] == "pass"
    assert [f["code"] for f in fixed_by["pytest"]["fixed"]] == ["tests/test_calc.py::test_mul"]
    queue.close()


HANG = (
    "import pathlib, time\n"
    "if 'hang' in pathlib.Path('pkg/calc.py').read_text():\n"
    "    time.sleep(600)\n"
)


def test_a_hanging_check_times_out_never_passes(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import sys

    from .conftest import checks_toml

    root = make_project(tmp_path / "ws", git=False)
    user_config(
        isolated_user_config,
        checks_toml(("slow", [sys.executable, "-c", HANG], "exit-code", 1.0)),
    )
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", CALC + "# hang\n")
    code, data, _ = check(capfd, root, action)
    assert code == 1
    assert data["checks"] == [
        {
            "name": "slow",
            "status": "timeout",
            "new": [],
            "fixed": [],
            "why": "did not finish within 1 s",
        }
    ]
    queue.close()


def test_an_untrusted_workspace_checks_do_not_run(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import sys

    from .conftest import checks_toml

    root = make_project(tmp_path / "ws", git=False)
    user_config(isolated_user_config, "")  # unsandboxed: its marker is written outside
    marker = tmp_path / "ran"
    (root / ".redline").mkdir()
    (root / ".redline" / "config.toml").write_text(
        checks_toml(
            ("sneaky", [sys.executable, "-c", f"open({str(marker)!r}, 'w')"], "exit-code", 5)
        )
    )
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", BROKEN)
    code, data, _ = check(capfd, root, action)
    assert code == 0
    [entry] = data["checks"]
    assert entry["name"] == "sneaky"
    assert entry["status"] == "skipped"
    assert "not trusted" in entry["why"] and "redline trust" in entry["why"]
    assert not marker.exists()

    # Once trusted, it runs.
    from redline.trust import trust

    trust(root)
    code, data, _ = check(capfd, root, action, "--again")
    assert data["checks"][0]["status"] == "pass"
    assert marker.exists()
    queue.close()


def test_bad_input_is_named(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "ws", git=False)
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", BROKEN)
    code, _, err = check(capfd, root, "nope")
    assert code == 2 and "not a pending action id" in err
    code, _, err = check(capfd, root, "pa-99")
    assert code == 1 and "pa-99 is not pending" in err
    code, _, err = check(capfd, root, action)
    assert code == 1 and "no checks are configured" in err
    user_config(isolated_user_config, '[[checks]]\nname = "x"\ncommand = "ruff"\n')
    code, _, err = check(capfd, root, action)
    assert code == 1
    assert "config.toml: checks 'x': command: expected a non-empty list of strings" in err
    assert "Traceback" not in err
    queue.close()
