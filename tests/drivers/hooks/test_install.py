"""``redline hooks install|uninstall|status`` for Claude Code: merge, idempotence, removal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.drivers.hooks.install import hook_command, install, uninstall

BASE = "/opt/redline/bin/redline"


def settings(root: Path) -> dict[str, object]:
    return dict(json.loads((root / ".claude" / "settings.local.json").read_text(encoding="utf-8")))


def test_install_merges_keeping_the_users_keys_in_order(tmp_path: Path) -> None:
    folder = tmp_path / ".claude"
    folder.mkdir()
    mine = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Read", "hooks": [{"type": "command", "command": "audit.sh"}]}
            ]
        }
    }
    (folder / "settings.local.json").write_text(
        json.dumps({"model": "x", **mine, "permissions": {"allow": ["Bash(ls)"]}}),
        encoding="utf-8",
    )
    done = install("claude", tmp_path, user=False, wait_seconds=600, base=BASE)
    assert done.changed and done.path == folder / "settings.local.json"
    data = settings(tmp_path)
    assert list(data) == ["model", "hooks", "permissions"]
    pre = data["hooks"]["PreToolUse"]  # type: ignore[index]
    assert pre[0] == mine["hooks"]["PreToolUse"][0]
    ours = pre[1]["hooks"][0]
    assert ours == {"type": "command", "command": hook_command("claude", BASE), "timeout": 630}
    assert ours["command"] == (
        f"{BASE} hook claude || {{ echo 'redline hook failed: the tool call is blocked until "
        "redline can review it' >&2; exit 2; }"
    )
    assert "Write" in pre[1]["matcher"] and "Edit" in pre[1]["matcher"]
    assert data["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == ours["command"]  # type: ignore[index]


def test_install_is_idempotent_and_uninstall_removes_only_ours(tmp_path: Path) -> None:
    install("claude", tmp_path, user=False, wait_seconds=600, base=BASE)
    first = (tmp_path / ".claude" / "settings.local.json").read_bytes()
    assert install("claude", tmp_path, user=False, wait_seconds=600, base=BASE).changed is False
    assert (tmp_path / ".claude" / "settings.local.json").read_bytes() == first
    data = settings(tmp_path)
    data["hooks"]["PreToolUse"].append(  # type: ignore[index]
        {"matcher": "Read", "hooks": [{"type": "command", "command": "audit.sh"}]}
    )
    (tmp_path / ".claude" / "settings.local.json").write_text(json.dumps(data), encoding="utf-8")
    assert uninstall("claude", tmp_path, user=False)[1] is True
    assert settings(tmp_path) == {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Read", "hooks": [{"type": "command", "command": "audit.sh"}]}
            ]
        }
    }
    assert uninstall("claude", tmp_path, user=False)[1] is False


def test_a_longer_wait_replaces_the_timeout_in_place(tmp_path: Path) -> None:
    install("claude", tmp_path, user=False, wait_seconds=600, base=BASE)
    install("claude", tmp_path, user=False, wait_seconds=1200, base=BASE)
    pre = settings(tmp_path)["hooks"]["PreToolUse"]  # type: ignore[index]
    assert len(pre) == 1 and pre[0]["hooks"][0]["timeout"] == 1230


def test_broken_settings_are_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.local.json").write_text("{oops", encoding="utf-8")
    assert main(["hooks", "install", "claude", "-C", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "settings.local.json: not valid JSON" in err and "nothing was changed" in err
    assert (tmp_path / ".claude" / "settings.local.json").read_text(encoding="utf-8") == "{oops"


def test_cli_install_status_uninstall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["hooks", "install", "claude", "-C", str(tmp_path)]) == 0
    assert "Installed redline's claude hook in" in capsys.readouterr().out
    command = settings(tmp_path)["hooks"]["PreToolUse"][0]["hooks"][0]["command"]  # type: ignore[index]
    assert " hook claude || { echo " in command and command.startswith("/")
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("claude: installed in ") and "not found on PATH" in lines[0]
    assert lines[1].startswith("codex: not installed;")
    assert main(["hooks", "uninstall", "claude", "-C", str(tmp_path)]) == 0
    assert "Removed redline's claude hook" in capsys.readouterr().out
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("claude: not installed;")


# -- Codex ---------------------------------------------------------------------------
@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    return home


def test_codex_project_hooks_need_a_trusted_project(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert main(["hooks", "install", "codex", "-C", str(ws)]) == 1
    err = capsys.readouterr().err
    assert "is not trusted" in err and "--user" in err and "Nothing was changed" in err
    assert not (ws / ".codex").exists()


def test_codex_install_prints_the_trust_step_and_never_says_installed(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.e2e.agents import codex_hook_hash

    (codex_home / "config.toml").write_text('# my config\nmodel = "gpt-5.5"\n', encoding="utf-8")
    assert main(["hooks", "install", "codex", "--user", "-C", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Wrote redline's codex hook to") and "Codex will skip it" in out
    assert "Installed" not in out
    data = json.loads((codex_home / "hooks.json").read_text(encoding="utf-8"))
    group = data["hooks"]["PreToolUse"][0]
    # apply_patch, and the shell tool (Codex sends exec_command to hooks as Bash)
    assert group["matcher"] == "apply_patch|Bash" and group["hooks"][0]["timeout"] == 630
    key = f"{(codex_home / 'hooks.json').resolve()}:pre_tool_use:0:0"
    digest = codex_hook_hash("pre_tool_use", group, group["hooks"][0])  # Codex's own, observed
    assert f'[hooks.state."{key}"]\ntrusted_hash = "{digest}"' in out
    assert (codex_home / "config.toml").read_text(encoding="utf-8") == (
        '# my config\nmodel = "gpt-5.5"\n'
    )  # nothing recorded without --trust-codex-hook
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert (
        line.startswith("codex: installed, but ") and "Codex will skip it until you trust" in line
    )


def test_codex_trust_is_recorded_only_when_asked_and_removed_with_the_hook(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tomllib

    from tests.e2e.agents import codex_trust_state

    (codex_home / "config.toml").write_text('# keep me\nmodel = "gpt-5.5"\n', encoding="utf-8")
    args = ["hooks", "install", "codex", "--user", "--trust-codex-hook", "-C", str(tmp_path)]
    assert main(args) == 0
    assert "Recorded Codex's trust" in capsys.readouterr().out
    text = (codex_home / "config.toml").read_text(encoding="utf-8")
    assert text.startswith('# keep me\nmodel = "gpt-5.5"\n')
    hooks_path = (codex_home / "hooks.json").resolve()
    expected = tomllib.loads(
        codex_trust_state(hooks_path, json.loads(hooks_path.read_text(encoding="utf-8")))
    )
    assert tomllib.loads(text)["hooks"] == expected["hooks"]
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith(f"codex: installed in {codex_home / 'hooks.json'};")
    assert main(args) == 0  # idempotent
    assert (codex_home / "config.toml").read_text(encoding="utf-8") == text
    assert main(["hooks", "uninstall", "codex", "--user", "-C", str(tmp_path)]) == 0
    assert (codex_home / "config.toml").read_text(encoding="utf-8") == (
        '# keep me\nmodel = "gpt-5.5"\n'
    )
    assert "hooks" not in json.loads((codex_home / "hooks.json").read_text(encoding="utf-8"))


def test_codex_project_install_in_a_trusted_project(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (codex_home / "config.toml").write_text(
        f'[projects."{ws.resolve()}"]\ntrust_level = "trusted"\n', encoding="utf-8"
    )
    args = ["hooks", "install", "codex", "--trust-codex-hook", "-C", str(ws)]
    assert main(args) == 0
    assert (ws / ".codex" / "hooks.json").is_file()
    assert str((ws / ".codex" / "hooks.json").resolve()) in (codex_home / "config.toml").read_text(
        encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["hooks", "status", "-C", str(ws)]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("codex: installed in ")


def test_broken_codex_config_is_left_alone(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (codex_home / "config.toml").write_text("model = [oops", encoding="utf-8")
    assert main(["hooks", "install", "codex", "--user", "-C", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "config.toml: not valid TOML" in err and "nothing was changed" in err
    assert not (codex_home / "hooks.json").exists()


# -- Gemini CLI ----------------------------------------------------------------------
def test_gemini_install_uses_milliseconds_and_status_warns_about_project_trust(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    ws = tmp_path / "ws"
    ws.mkdir()
    assert main(["hooks", "install", "gemini", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "Installed redline's gemini hook" in out and "--skip-trust" in out
    data = json.loads((ws / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    before = data["hooks"]["BeforeTool"][0]
    assert before["matcher"].startswith("write_file|replace")
    assert before["hooks"][0]["timeout"] == 630_000
    assert data["hooks"]["AfterTool"][0]["hooks"][0]["command"] == before["hooks"][0]["command"]
    assert main(["hooks", "status", "-C", str(ws)]) == 0
    line = capsys.readouterr().out.splitlines()[2]
    assert line.startswith("gemini: installed, but ") and "is trusted" in line
    trusted = tmp_path / "home" / ".gemini" / "trustedFolders.json"
    trusted.parent.mkdir(parents=True)
    trusted.write_text(json.dumps({str(ws.resolve()): "TRUST_FOLDER"}), encoding="utf-8")
    assert main(["hooks", "status", "-C", str(ws)]) == 0
    line = capsys.readouterr().out.splitlines()[2]
    assert line.startswith("gemini: installed in ") and "prefer --user" in line
    assert main(["hooks", "install", "gemini", "--user", "-C", str(ws)]) == 0
    user = json.loads((tmp_path / "home" / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert user["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] == 630_000
    assert main(["hooks", "uninstall", "gemini", "-C", str(ws)]) == 0
    assert json.loads((ws / ".gemini" / "settings.json").read_text(encoding="utf-8")) == {}


def test_codex_status_says_hooks_are_off(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["hooks", "install", "codex", "--user", "--trust-codex-hook", "-C", str(tmp_path)]
    assert main(args) == 0
    with (codex_home / "config.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n[features]\nhooks = false\n")
    capsys.readouterr()
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith("codex: installed, but ") and "[features] hooks = false" in line


def test_a_codex_handler_with_a_null_timeout_hashes_as_one_without() -> None:
    """A handler whose ``timeout`` is null (or not a number) gets Codex's default of 600 s
    in its trusted hash instead of crashing the install (it is JSON from a file)."""
    from redline.drivers.hooks.codex_trust import handler_hash

    group = {"matcher": "apply_patch"}
    plain = handler_hash("PreToolUse", group, {"type": "command", "command": "x"})
    for odd in (None, [1], {"s": 1}):
        handler = {"type": "command", "command": "x", "timeout": odd}
        assert handler_hash("PreToolUse", group, handler) == plain
    timed = {"type": "command", "command": "x", "timeout": 30}
    assert handler_hash("PreToolUse", group, timed) != plain


# -- the prompt-time event (issue 46) ---------------------------------------------------
@pytest.mark.parametrize(
    ("agent", "event", "timeout"),
    [("claude", "UserPromptSubmit", 30), ("gemini", "BeforeAgent", 30000)],
)
def test_install_registers_the_prompt_time_event_without_a_matcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, event: str, timeout: int
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    done = install(agent, tmp_path, user=True, wait_seconds=600, base=BASE)
    data = json.loads(done.path.read_text(encoding="utf-8"))
    [group] = data["hooks"][event]
    # No fail-closed guard: a redline that cannot run must never block the person's prompt.
    assert group == {
        "hooks": [{"type": "command", "command": f"{BASE} hook {agent}", "timeout": timeout}]
    }
    assert uninstall(agent, tmp_path, user=True)[1] is True
    assert "hooks" not in json.loads(done.path.read_text(encoding="utf-8"))


def test_codex_trusts_its_prompt_time_hook_too(
    tmp_path: Path, codex_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["hooks", "install", "codex", "--user", "--trust-codex-hook", "-C", str(tmp_path)]
    assert main(args) == 0
    data = json.loads((codex_home / "hooks.json").read_text(encoding="utf-8"))
    assert data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["timeout"] == 30
    assert ":user_prompt_submit:0:0" in (codex_home / "config.toml").read_text(encoding="utf-8")


def test_status_names_a_hook_installed_by_an_older_redline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    install("claude", tmp_path, user=False, wait_seconds=600, base=BASE)
    path = tmp_path / ".claude" / "settings.local.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["hooks"]["UserPromptSubmit"]  # as a redline before issue 46 wrote it
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert (
        f"({path}: installed by an older redline: run hooks install again (Codex: trust it "
        "again))" in line
    )
    install("claude", tmp_path, user=False, wait_seconds=600, base=BASE)
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    assert "older redline" not in capsys.readouterr().out
