"""The checks' real sandbox (bubblewrap here): marker ``sandbox``, run by .ci/run under
CI=true, where a skip (no working sandbox on the machine) is a failure.

The adversarial proposal (tests/checks/escape.py) goes through ``redline pending check``
with the docs' pytest and ruff checks: the workspace and everything outside stay as they
were, no process outlives the check, no connection is made, and the check still reports.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from redline.checks import sandbox
from redline.cli import main
from redline.workspace.queue import WorkspaceQueue

from .conftest import PYTEST, RUFF, checks_toml, make_project, snapshot, user_config
from .escape import python_read_binds, trap

pytestmark = pytest.mark.sandbox


@pytest.fixture(autouse=True)
def real_sandbox() -> None:
    why = sandbox.unavailable()
    if why:
        pytest.skip(f"no sandbox can be made on this machine: {why}")


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def sandboxed_config(config_dir: Path, *checks: tuple[str, list[str], str, float]) -> None:
    text = checks_toml(*checks) + f"\n[check_runner]\nread = {python_read_binds()}\n"
    user_config(config_dir, text, sandbox_off=False)


def test_redline_sandbox_shows_every_probe_blocked(
    tmp_path: Path, fake_home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    code = main(["sandbox", "-C", str(ws), "--json"])
    out, err = capfd.readouterr()
    data = json.loads(out)
    assert data["sandbox"].startswith("bwrap ")
    names = [p["name"] for p in data["probes"]]
    for name in (
        "write-workspace",
        "write-home",
        "write-tmp",
        "write-state-key",
        "ssh-agent",
        "docker-socket",
        "session-bus",
        "loopback-tcp",
        "process-left",
    ):
        assert name in names
    assert {p["result"] for p in data["probes"]} == {"blocked"}, out
    assert code == 0, err
    code = main(["sandbox", "-C", str(ws)])
    out, _ = capfd.readouterr()
    assert code == 0 and "Every probe was blocked." in out and "REACHABLE" not in out


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_the_adversarial_proposal_stays_in_its_tree(
    tmp_path: Path,
    fake_home: Path,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
    git: bool,
) -> None:
    root = make_project(tmp_path / "ws", git=git)
    outside = tmp_path / "outside"
    outside.mkdir()
    sandboxed_config(
        isolated_user_config, ("ruff", RUFF, "ruff-json", 60), ("pytest", PYTEST, "pytest", 120)
    )
    before, home_before = snapshot(root), snapshot(fake_home)
    with trap(root, outside, fake_home) as aim:
        queue = WorkspaceQueue(root)
        action = _push_new_file(queue, "tests/test_escape.py", aim.source())
        code = main(["pending", "-C", str(root), "check", action, "--json"])
        out, err = capfd.readouterr()
        survivors = aim.survivors()
        queue.close()
    assert survivors == []
    assert aim.accepted == []
    assert snapshot(root) == before
    assert snapshot(fake_home) == home_before
    assert sorted(p.name for p in outside.iterdir()) == ["agent.sock"]
    # The check still reports: the proposal's failing test is its new finding.
    assert code == 1, err
    by_name = {c["name"]: c for c in json.loads(out)["checks"]}
    tests = by_name["pytest"]
    assert tests["status"] == "findings", tests
    assert [f["code"] for f in tests["new"]] == ["tests/test_escape.py::test_escape_reports"]
    assert by_name["ruff"]["status"] in ("pass", "findings")


def test_a_check_keeps_only_the_environment_it_names(
    tmp_path: Path,
    fake_home: Path,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = make_project(tmp_path / "ws", git=False)
    monkeypatch.setenv("REDLINE_TEST_SECRET", "s3cret")
    monkeypatch.setenv("REDLINE_TEST_NAMED", "named")
    show = "import os; print(sorted(os.environ)); open('env.txt', 'w').write(repr(os.environ))"
    probe = [sys.executable, "-c", show]
    text = checks_toml(("env", probe, "exit-code", 30))
    text += '\nenv = ["REDLINE_TEST_NAMED"]\n'
    text += f"\n[check_runner]\nread = {python_read_binds()}\n"
    user_config(isolated_user_config, text, sandbox_off=False)
    from redline.checks.config import load_checks
    from redline.checks.run import run_process
    from redline.checks.scratch import acquire

    [spec] = load_checks(root).checks
    with acquire(root, 1) as tree:
        tree.sync()
        outcome = run_process(spec.command, [], tree.tree, 30, None, spec.sandbox)
    assert outcome.state == "done" and outcome.status == 0, outcome
    names = outcome.stdout.strip()
    assert "REDLINE_TEST_NAMED" in names and "REDLINE_TEST_SECRET" not in names
    assert "'TERM', 'TMPDIR'" in names


def _push_new_file(queue: WorkspaceQueue, path: str, text: str) -> str:
    from redline.workspace.preview import FileCreate, Preview
    from redline.workspace.queue import ActionDraft, Source

    record = queue.push(
        ActionDraft(
            label=f"Create {path}",
            source=Source.current("exec", "test", "s1"),
            source_tool_name="write",
            preview=Preview([FileCreate(path, text)]),
        )
    )
    return record.id


def test_a_program_the_sandbox_does_not_show_is_an_error_not_a_pass(
    tmp_path: Path,
    fake_home: Path,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """An exit-code check failing alike on both sides would pass: a program the sandbox
    cannot start must be an error instead, naming what to do."""
    root = make_project(tmp_path / "ws", git=False)
    tools = tmp_path / "tools"
    tools.mkdir()
    tool = tools / "lint"
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    sandboxed_config(isolated_user_config, ("lint", [str(tool)], "exit-code", 30))
    queue = WorkspaceQueue(root)
    action = _push_new_file(queue, "pkg/new.py", "x = 1\n")
    code = main(["pending", "-C", str(root), "check", action, "--json"])
    out, _ = capfd.readouterr()
    queue.close()
    assert code == 1
    [entry] = json.loads(out)["checks"]
    assert entry["status"] == "error"
    assert f"cannot start {tool} in the sandbox" in entry["why"]
    assert "[check_runner] read" in entry["why"]
    # Once its folder may be read, it runs.
    text = checks_toml(("lint", [str(tool)], "exit-code", 30))
    text += f'\n[check_runner]\nread = ["{tools}"]\n'
    user_config(isolated_user_config, text, sandbox_off=False)
    code = main(["pending", "-C", str(root), "check", action, "--again", "--json"])
    out, _ = capfd.readouterr()
    assert code == 0, out
