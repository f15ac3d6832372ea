"""``redline hooks install|uninstall|status`` for Claude Code: merge, idempotence, removal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.drivers.hooks.install import install, uninstall

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
    path, changed = install("claude", tmp_path, user=False, wait_seconds=600, base=BASE)
    assert changed and path == folder / "settings.local.json"
    data = settings(tmp_path)
    assert list(data) == ["model", "hooks", "permissions"]
    pre = data["hooks"]["PreToolUse"]  # type: ignore[index]
    assert pre[0] == mine["hooks"]["PreToolUse"][0]
    ours = pre[1]["hooks"][0]
    assert ours == {"type": "command", "command": f"{BASE} hook claude || exit 2", "timeout": 630}
    assert "Write" in pre[1]["matcher"] and "Edit" in pre[1]["matcher"]
    assert data["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == ours["command"]  # type: ignore[index]


def test_install_is_idempotent_and_uninstall_removes_only_ours(tmp_path: Path) -> None:
    install("claude", tmp_path, user=False, wait_seconds=600, base=BASE)
    first = (tmp_path / ".claude" / "settings.local.json").read_bytes()
    assert install("claude", tmp_path, user=False, wait_seconds=600, base=BASE)[1] is False
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
    assert command.endswith(" hook claude || exit 2") and command.startswith("/")
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("claude: installed in ") and "not found on PATH" in lines[0]
    assert lines[1].startswith("codex: not supported by redline yet")
    assert main(["hooks", "uninstall", "claude", "-C", str(tmp_path)]) == 0
    assert "Removed redline's claude hook" in capsys.readouterr().out
    assert main(["hooks", "status", "-C", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("claude: not installed;")


def test_codex_and_gemini_say_they_are_not_supported_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hooks", "install", "codex", "-C", str(tmp_path)]) == 1
    assert "codex is not supported yet" in capsys.readouterr().err
    assert not (tmp_path / ".codex").exists()
