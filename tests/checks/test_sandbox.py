"""The checks' sandbox without running it (no user namespaces needed): the bwrap command
line, the causes of an unavailable sandbox, the macOS profile, the config keys, and what
`pending check`, a rule and the probes do when there is no sandbox. The real sandbox is
tested in test_sandbox_real.py (marker ``sandbox``)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from redline.checks import sandbox
from redline.checks.config import load_checks
from redline.checks.sandbox import Sandbox, bwrap_argv, diagnose, environment
from redline.checks.sandbox_macos import profile
from redline.cli import main
from redline.config import ConfigError
from redline.workspace.queue import WorkspaceQueue

from .conftest import CALC, checks_toml, make_project, push_edit, user_config


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for folder in (".ssh", ".aws", ".config/gh", ".local/state"):
        (home / folder).mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y\n")
    (home / ".pypirc").write_text("[pypi]\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def pairs(argv: list[str], option: str, width: int = 2) -> list[tuple[str, ...]]:
    """Each ``option A [B]`` in ``argv``, as a tuple of its operands."""
    return [
        tuple(argv[i + 1 : i + 1 + width]) for i, part in enumerate(argv[:-1]) if part == option
    ]


def test_the_bwrap_command_line(
    tmp_path: Path, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    (ws / ".redline").mkdir(parents=True)
    tree, private = tmp_path / "tree", tmp_path / "tmp"
    tree.mkdir()
    private.mkdir()
    secret_dir = fake_home / "secrets"
    secret_dir.mkdir()
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("VIRTUAL_ENV", "/venv")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("XDG_STATE_HOME", str(fake_home / ".local" / "state"))
    (fake_home / ".local" / "state" / "redline").mkdir()
    box = Sandbox(workspace=str(ws), hide=(str(secret_dir),), env=("VIRTUAL_ENV",))
    argv = bwrap_argv("/usr/bin/bwrap", box, ["python", "-m", "pytest"], str(tree), str(private))

    assert argv[0] == "/usr/bin/bwrap"
    assert argv[-4:] == ["--", "python", "-m", "pytest"]
    for flag in ("--unshare-all", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert ("ALL",) in pairs(argv, "--cap-drop", 1)
    ro = pairs(argv, "--ro-bind")
    assert ("/", "/") not in ro and all(dest != "/" for _, dest in ro)
    assert (str(fake_home), str(fake_home)) in ro
    assert (str(ws), str(ws)) in ro
    assert ("/usr", "/usr") in ro or ("usr/bin", "/bin") in pairs(argv, "--symlink")
    tmpfs = [t for (t,) in pairs(argv, "--tmpfs", 1)]
    for fresh in ("/tmp", "/run", "/var/run", "/dev/shm"):
        assert fresh in tmpfs
    for hidden in (".ssh", ".aws", ".config/gh", ".local/state/redline", "secrets"):
        assert str(fake_home / hidden) in tmpfs, hidden
        assert (str(fake_home / hidden),) in pairs(argv, "--remount-ro", 1)
    assert str(ws / ".redline") in tmpfs
    for hidden in (".netrc", ".pypirc"):
        assert ("/dev/null", str(fake_home / hidden)) in ro
    assert not any(".gnupg" in part for part in argv)  # absent: nothing to hide
    assert pairs(argv, "--bind") == [(str(private), str(private)), (str(tree), str(tree))]
    assert (str(tree),) in pairs(argv, "--chdir", 1)
    assert "--clearenv" in argv
    env = dict(pairs(argv, "--setenv"))
    assert env["TERM"] == "dumb" and env["TMPDIR"] == "/tmp"
    assert env["VIRTUAL_ENV"] == "/venv" and env["LC_ALL"] == "C.UTF-8"
    assert env["HOME"] == str(fake_home)
    assert "SECRET_TOKEN" not in env and "hunter2" not in argv


def test_the_environment_keeps_only_what_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("TZ", "UTC")
    env = environment(Sandbox(env=("NODE_OPTIONS",)))
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["TZ"] == "UTC" and env["TERM"] == "dumb"
    assert set(env) <= {"PATH", "HOME", "LANG", "TZ", "TERM", "TMPDIR", "NODE_OPTIONS"} | {
        name for name in env if name.startswith("LC_")
    }


@pytest.mark.parametrize(
    ("facts", "cause", "remedy"),
    [
        ({"max_user_namespaces": "0"}, "user.max_user_namespaces=0", "sysctl -w"),
        (
            {"apparmor_restrict": "1", "uid": "1000"},
            "kernel.apparmor_restrict_unprivileged_userns=1",
            "AppArmor profile",
        ),
        (
            {"unprivileged_userns_clone": "0", "uid": "1000"},
            "kernel.unprivileged_userns_clone=0",
            "sysctl -w",
        ),
        ({"nested": "Codex's sandbox"}, "inside another sandbox (Codex's sandbox)", "outside"),
        (
            {"container": "docker", "seccomp": "2"},
            "container's seccomp profile",
            "--security-opt",
        ),
        ({}, "bwrap cannot make a sandbox here", "fix that"),
    ],
)
def test_each_cause_is_named_with_what_to_do(
    facts: dict[str, str], cause: str, remedy: str
) -> None:
    why = diagnose("bwrap: setting up uid map: Permission denied", facts)
    assert cause in why and remedy in why
    assert " — " in why and 'sandbox = "off"' in why
    assert "setting up uid map: Permission denied" in why


def test_bwrap_missing_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "kind", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    why = sandbox.unavailable()
    assert why.startswith("bwrap is not installed — install the bubblewrap package")
    assert sandbox.unavailable_why([Sandbox()]) == f"sandbox unavailable: {why}"
    assert sandbox.unavailable_why([Sandbox(enabled=False), None]) == ""


def test_the_macos_profile(tmp_path: Path) -> None:
    tree, private = tmp_path / "tree", tmp_path / 'odd "tmp"'
    text = profile(str(tree), str(private), [str(tmp_path / "home" / ".ssh")])
    lines = text.splitlines()
    assert lines[:4] == ["(version 1)", "(allow default)", "(deny network*)", "(deny file-write*)"]
    real = os.path.realpath(tmp_path)
    assert f'  (subpath "{real}/tree")' in lines
    assert f'  (subpath "{real}/odd \\"tmp\\"")' in lines  # quoted, not a way out
    deny = lines.index("(deny file-read* file-write*")
    assert lines[deny + 1] == f'  (subpath "{real}/home/.ssh"))'
    # The run's folders are allowed again after the hidden ones (last match wins).
    assert (
        lines[-1].startswith("  (subpath") and lines.index("(allow file-read* file-write*") > deny
    )


def test_macos_runs_the_check_under_sandbox_exec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "kind", lambda: "sandbox-exec")
    wrapped = sandbox.launch(Sandbox(), ["ruff", "check"], tmp_path, str(tmp_path / "t"))
    assert wrapped.argv[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert wrapped.argv[2].startswith("(version 1)")
    assert wrapped.argv[-3:] == ["--", "ruff", "check"]
    assert wrapped.env is not None and wrapped.env["TMPDIR"] == str(tmp_path / "t")
    assert sandbox.launch(Sandbox(enabled=False), ["x"], tmp_path, "t").argv == ["x"]


# -- the config keys ----------------------------------------------------------------------
ENTRY = '[[checks]]\nname = "t"\ncommand = ["true"]\n'


def test_sandbox_is_on_unless_the_user_says_off(tmp_path: Path, isolated_user_config: Path) -> None:
    config_file = isolated_user_config / "config.toml"
    config_file.write_text(ENTRY + 'env = ["VIRTUAL_ENV"]\n')
    config = load_checks(tmp_path)
    assert config.sandbox.enabled and config.sandbox.workspace == str(tmp_path)
    [check] = config.checks
    assert check.sandbox.enabled and check.sandbox.env == ("VIRTUAL_ENV",)
    config_file.write_text(
        ENTRY + '[check_runner]\nsandbox = "off"\nhide = ["~/work-secrets"]\nread = ["/srv/x"]\n'
    )
    config = load_checks(tmp_path)
    assert not config.checks[0].sandbox.enabled
    assert config.sandbox.hide == (os.path.expanduser("~/work-secrets"),)
    assert config.sandbox.read == ("/srv/x",)


@pytest.mark.parametrize("trusted", [False, True])
def test_a_workspace_cannot_turn_it_off(
    tmp_path: Path, isolated_user_config: Path, trusted: bool
) -> None:
    (isolated_user_config / "config.toml").write_text(ENTRY)
    (tmp_path / ".redline").mkdir()
    (tmp_path / ".redline" / "config.toml").write_text(
        '[check_runner]\nsandbox = "off"\nread = ["/"]\nhide = ["/srv/theirs"]\n'
    )
    config = load_checks(tmp_path, trusted=trusted)
    assert config.checks[0].sandbox.enabled
    assert config.sandbox.read == ()
    assert config.sandbox.hide == ("/srv/theirs",)  # hiding more only makes it stricter
    assert len(config.notes) == 2
    assert "check_runner.sandbox ignored: only your own config.toml" in config.notes[0]
    assert "check_runner.read ignored" in config.notes[1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[check_runner]\nsandbox = "maybe"\n', 'check_runner.sandbox: expected "on" or "off"'),
        ('[check_runner]\nhide = ["relative/path"]\n', "check_runner.hide: expected a list"),
        ("[check_runner]\nread = 3\n", "check_runner.read: expected a list of absolute"),
        ("[check_runner]\nnet = true\n", "check_runner.net: unknown key"),
        (ENTRY + 'env = ["NOT-A-NAME"]\n', "checks 't': env: expected a list of environment"),
        (ENTRY + 'env = "PATH"\n', "env: expected a list"),
    ],
)
def test_bad_sandbox_keys_are_named(
    tmp_path: Path, isolated_user_config: Path, text: str, message: str
) -> None:
    (isolated_user_config / "config.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"config\.toml: ") as info:
        load_checks(tmp_path)
    assert message in str(info.value)


# -- no sandbox: every check is an error, `pending check` exits 1 ------------------------
MARKER_CHECK = [sys.executable, "-c", "import sys; open(sys.argv[1], 'w')", "{marker}"]


def _marker_check(marker: Path) -> str:
    command = [part.replace("{marker}", str(marker)) for part in MARKER_CHECK]
    return checks_toml(("t", command, "exit-code", 30))


def test_no_sandbox_means_error_and_exit_1(
    tmp_path: Path,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "kind", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    root = make_project(tmp_path / "ws", git=False)
    marker = tmp_path / "ran"
    user_config(isolated_user_config, _marker_check(marker), sandbox_off=False)
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", CALC + "\n")
    code = main(["pending", "-C", str(root), "check", action, "--json"])
    out, _ = capfd.readouterr()
    assert code == 1
    [entry] = json.loads(out)["checks"]
    assert entry["status"] == "error"
    assert entry["why"].startswith("sandbox unavailable: bwrap is not installed — install")
    assert not marker.exists()  # nothing ran

    # A workspace's sandbox = "off" changes nothing, and says so.
    (root / ".redline" / "config.toml").write_text('[check_runner]\nsandbox = "off"\n')
    code = main(["pending", "-C", str(root), "check", action, "--again"])
    out, err = capfd.readouterr()
    assert code == 1 and "sandbox unavailable" in out
    assert "check_runner.sandbox ignored: only your own config.toml" in err
    assert not marker.exists()

    # The user's own sandbox = "off": it runs, unsandboxed.
    user_config(isolated_user_config, _marker_check(marker))
    code = main(["pending", "-C", str(root), "check", action, "--again", "--json"])
    out, _ = capfd.readouterr()
    assert code == 0, out
    assert json.loads(out)["checks"][0]["status"] == "pass"
    assert marker.exists()
    queue.close()


def test_a_checks_pass_rule_never_applies_without_a_sandbox(
    tmp_path: Path, isolated_user_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redline.checks.gate import checks_gate

    monkeypatch.setattr(sandbox, "kind", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    root = make_project(tmp_path / "ws", git=False)
    user_config(isolated_user_config, _marker_check(tmp_path / "m"), sandbox_off=False)
    queue = WorkspaceQueue(root)
    action = push_edit(queue, "pkg/calc.py", CALC + "\n")
    record = queue.get(action)
    assert record is not None
    answer = checks_gate(root, action, queue.preview(record))
    assert not answer.passed and "sandbox unavailable: bwrap is not installed" in answer.why
    queue.close()


def test_the_probes_see_an_escape(
    tmp_path: Path, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no sandbox at all every probe must say REACHABLE: the probes can tell."""
    from redline.checks.sandbox_probes import REACHABLE, run_probes
    from redline.workspace.auth import key_path

    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    key = key_path()
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_bytes(b"k" * 32)
    ws = tmp_path / "ws"
    ws.mkdir()
    rows = {p.name: p.result for p in run_probes(Sandbox(enabled=False), ws)}
    expected_reachable = {
        "write-workspace",
        "write-home",
        "write-tmp",
        "write-state-key",
        "open-state-key",
        "read-state-key",
        "ssh-agent",
        "loopback-tcp",
        "process-left",
    }
    if not os.path.exists(f"/run/user/{os.getuid()}/bus"):
        expected_reachable.add("session-bus")
    assert {name for name, result in rows.items() if result == REACHABLE} >= expected_reachable
    # What the probes wrote is gone again.
    assert not [p for p in ws.iterdir() if p.name.startswith(".redline-probe")]
    assert not [p for p in fake_home.iterdir() if p.name.startswith(".redline-probe")]


def test_redline_sandbox_off_or_unavailable_is_exit_1(
    tmp_path: Path,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = tmp_path / "ws"
    (ws / ".redline").mkdir(parents=True)
    (ws / ".redline" / "config.toml").write_text('[check_runner]\nsandbox = "off"\n')
    monkeypatch.setattr(sandbox, "kind", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    code = main(["sandbox", "-C", str(ws), "--json"])
    out, err = capfd.readouterr()
    assert code == 1
    data = json.loads(out)
    assert data["sandbox"] == "bwrap (missing)" and data["probes"] == []
    assert data["error"].startswith("sandbox unavailable: bwrap is not installed")
    assert "check_runner.sandbox ignored" in err  # the workspace's "off" does not count

    (isolated_user_config / "config.toml").write_text('[check_runner]\nsandbox = "off"\n')
    code = main(["sandbox", "-C", str(ws)])
    out, _ = capfd.readouterr()
    assert code == 1
    assert out.splitlines()[0] == "sandbox: off"
    assert "checks run unsandboxed, with your rights" in out
