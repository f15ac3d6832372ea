"""Every check run starts from the synced workspace plus the proposal, nothing else.

The sequence of issue 39: an unapproved proposal whose test plants ``tests/conftest.py``
(forcing every report to "passed") in its working folder must not turn another
proposal's failing test into a pass. The actions are queued by ``redline pending import``
(branches), as another process would.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from redline.checks.sandbox import Sandbox
from redline.cli import main

from .conftest import CALC, PYTEST, checks_toml, make_project, snapshot, user_config

#: Run unsandboxed: the default test run needs no user namespaces (marker ``sandbox``).
OFF = Sandbox(enabled=False)

PLANT = '''import pathlib

CONFTEST = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""


def test_plant():
    pathlib.Path(__file__).with_name("conftest.py").write_text(CONFTEST)
'''


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def branch(root: Path, name: str, path: str, text: str) -> None:
    git(root, "checkout", "-q", "-b", name)
    (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", name)
    git(root, "checkout", "-q", "-")


def pending(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["pending", "-C", str(root), *args])
    out, err = capfd.readouterr()
    return code, out, err


def check(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> dict[str, dict]:
    code, out, err = pending(capfd, root, "check", *args, "--json")
    data = json.loads(out)
    by_name = {c["name"]: c for c in data["checks"]}
    by_name["exit"] = {"code": code, "err": err}
    return by_name


def test_a_planted_conftest_never_reaches_another_actions_run(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "ws", git=True)
    user_config(isolated_user_config, checks_toml(("tests", PYTEST, "pytest", 120)))
    branch(root, "evil", "tests/test_evil.py", PLANT)
    branch(root, "broken", "pkg/calc.py", CALC.replace("a * b", "a - b"))
    before = snapshot(root)
    code, out, err = pending(capfd, root, "import", "evil")
    assert code == 0 and out.startswith("pa-1: "), err
    code, out, err = pending(capfd, root, "import", "broken")
    assert code == 0 and out.startswith("pa-2: "), err
    evil, broken = "pa-1", "pa-2"

    first = check(capfd, root, broken)
    assert first["tests"]["status"] == "findings", first
    assert [f["code"] for f in first["tests"]["new"]] == ["tests/test_calc.py::test_mul"]
    assert first["exit"]["code"] == 1

    planted = check(capfd, root, evil)
    assert planted["tests"]["status"] == "pass", planted  # its own test passes

    again = check(capfd, root, broken, "--again")
    assert again["tests"]["status"] == "findings", again
    assert [f["code"] for f in again["tests"]["new"]] == ["tests/test_calc.py::test_mul"]
    assert again["exit"]["code"] == 1
    # Neither proposal reached the workspace.
    assert snapshot(root) == before


LEAVE = (
    "import os, pathlib, sys\n"
    "if os.path.exists('planted.txt'):\n"
    "    sys.exit('planted.txt is here: ' + pathlib.Path('planted.txt').read_text())\n"
    "pathlib.Path('planted.txt').write_text(sys.argv[1])\n"
)


def test_no_run_sees_what_another_run_wrote(tmp_path: Path) -> None:
    """The base run's writes are gone before the proposal run; two checks running at once
    never share a tree; the next action's runs start clean too."""
    import sys

    from redline.checks.config import CheckSpec
    from redline.checks.run import check_preview
    from redline.workspace.preview import FileModify, Preview, sha256_bytes

    root = make_project(tmp_path / "ws", git=False)
    specs = [
        CheckSpec(name, (sys.executable, "-c", LEAVE, name), "exit-code", sandbox=OFF)
        for name in "ab"
    ]
    old = (root / "pkg" / "calc.py").read_text()
    for round_ in range(3):
        new = old + f"# {round_}\n"
        preview = Preview([FileModify("pkg/calc.py", sha256_bytes(old.encode()), old, new)])
        results = check_preview(root, preview, specs, jobs=2)
        assert [(r.name, r.status, r.new) for r in results] == [
            ("a", "pass", ()),
            ("b", "pass", ()),
        ], results
    assert not (root / "planted.txt").exists()
