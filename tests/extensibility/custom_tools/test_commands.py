from __future__ import annotations

from pathlib import Path

import pytest

from redline import trust
from redline.cli import main
from redline.extensibility.custom_tools import loader as loader_module

from .conftest import PluginWriter, echo_plugin


@pytest.fixture(autouse=True)
def _no_host_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader_module, "iter_entry_points", lambda: [])


def tool_lines(out: str) -> dict[str, str]:
    lines: dict[str, str] = {}
    for line in out.splitlines():
        if line.startswith("  ") and line.strip():
            name = line.split()[0]
            lines.setdefault(name, line)
    return lines


def test_tools_lists_builtins_custom_tools_and_errors(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_plugin(tmp_path / "p", "good.py", echo_plugin("shout", description="Shout it"))
    bad = write_plugin(tmp_path / "p", "bad.py", "def factory(api):\n    raise OSError('nope')\n")
    code = main(["tools", "-C", str(workspace), "--tools", str(tmp_path / "p")])
    out = capsys.readouterr().out
    assert code == 0
    lines = tool_lines(out)
    assert "[hidden]" in lines["resolve"]
    assert "[hidden]" not in lines.get("read", "")
    assert lines["shout"].split()[1:] == ["[path]", str(good.resolve())]
    assert "Shout it" in out
    assert "Plugin errors (1):" in out
    assert f"[path] {bad.resolve()}: factory() raised OSError: nope (line 2)" in out


def test_tools_reports_an_untrusted_project_folder_with_the_hint(
    workspace: Path, write_plugin: PluginWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    write_plugin(workspace / ".redline" / "tools", "proj.py", echo_plugin("proj"))
    assert main(["tools", "-C", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "proj" not in tool_lines(out)
    assert f"Not loaded: project plugins in {workspace.resolve() / '.redline' / 'tools'}" in out
    assert f"redline trust -C {workspace.resolve()}" in out

    assert main(["tools", "-C", str(workspace), "--trust"]) == 0
    trusted = capsys.readouterr().out
    assert "[project]" in tool_lines(trusted)["proj"]
    assert "Not loaded" not in trusted


def test_tools_bad_arguments_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "-C", str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["tools", "-C", str(tmp_path), "--tools", str(tmp_path / "nope.py")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_trust_and_revoke(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = workspace.resolve()
    assert main(["trust", "-C", str(workspace)]) == 0
    assert capsys.readouterr().out.startswith(f"Trusted {root}: plugins in ")
    assert trust.is_trusted(workspace)
    assert main(["trust", "-C", str(workspace)]) == 0
    assert "already trusted" in capsys.readouterr().out
    assert main(["trust", "-C", str(workspace), "--revoke"]) == 0
    assert capsys.readouterr().out.startswith(f"Revoked trust for {root}")
    assert not trust.is_trusted(workspace)
    assert main(["trust", "-C", str(workspace), "--revoke"]) == 0
    assert "nothing to revoke" in capsys.readouterr().out
    assert main(["trust", "-C", str(workspace / "nope")]) == 2
    assert "not a folder" in capsys.readouterr().err
