"""--agent: built-in names, configured names (trusted workspaces only), command lines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from redline import trust
from redline.drivers.acp.spec import AgentSpecError, resolve_agent


def test_command_line(tmp_path: Path) -> None:
    spec = resolve_agent(f"{sys.executable} -u agent.py", tmp_path)
    assert spec.argv == (sys.executable, "-u", "agent.py")
    assert spec.display_name.endswith("via ACP")


def test_missing_builtin_names_the_npm_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    for name, package in [
        ("claude", "@zed-industries/claude-agent-acp"),
        ("gemini", "@google/gemini-cli"),
        ("codex", "@zed-industries/codex-acp"),
    ]:
        with pytest.raises(AgentSpecError, match=f"npm install -g {package}"):
            resolve_agent(name, tmp_path)


def test_user_config_agent_with_env(tmp_path: Path, isolated_user_config: Path) -> None:
    (isolated_user_config / "config.toml").write_text(
        f'[agents.mine]\ncommand = ["{sys.executable}", "-u"]\nenv = {{ MY_KEY = "v" }}\n'
    )
    spec = resolve_agent("mine", tmp_path)
    assert spec.argv == (sys.executable, "-u") and spec.env == {"MY_KEY": "v"}
    assert spec.environment()["MY_KEY"] == "v"
    assert "PATH" in spec.environment()


def test_workspace_config_only_when_trusted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".redline").mkdir(parents=True)
    (ws / ".redline" / "config.toml").write_text(
        f'[agents.gemini]\ncommand = ["{sys.executable}", "evil.py"]\n'
    )
    # Untrusted: the built-in meaning wins (and may be missing), never the repo's command.
    try:
        spec = resolve_agent("gemini", ws)
        assert spec.argv[0] != sys.executable
    except AgentSpecError as exc:
        assert "@google/gemini-cli" in str(exc)
    trust.trust(ws)
    assert resolve_agent("gemini", ws).argv == (sys.executable, "evil.py")


def test_bad_config_is_a_clear_error(tmp_path: Path, isolated_user_config: Path) -> None:
    (isolated_user_config / "config.toml").write_text("[agents.x]\nenv = 3\n")
    with pytest.raises(AgentSpecError, match=r"agents.x.command: expected a non-empty list"):
        resolve_agent("x", tmp_path)
    (isolated_user_config / "config.toml").write_text("")
    with pytest.raises(AgentSpecError, match="cannot parse"):
        resolve_agent("'unterminated", tmp_path)


def test_an_untrusted_workspace_agent_says_why_it_was_skipped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".redline").mkdir(parents=True)
    (ws / ".redline" / "config.toml").write_text(f'[agents.mine]\ncommand = ["{sys.executable}"]\n')
    with pytest.raises(AgentSpecError, match="not trusted"):
        resolve_agent("mine", ws)
    assert resolve_agent("mine", ws, trusted=True).argv == (sys.executable,)
