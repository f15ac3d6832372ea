"""Configuration: one typed loader, command line > workspace > user > defaults, and an
untrusted workspace's file may only make things stricter."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.model.providers.fake_openai import FakeOpenAI

from redline import __version__
from redline import trust as trust_store
from redline.cli import main
from redline.config import ConfigError, Settings, find_workspace_root, load_settings


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")


def user_config(config_dir: Path, text: str) -> Path:
    path = config_dir / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def workspace_config(root: Path, text: str) -> Path:
    state = root / ".redline"
    state.mkdir(mode=0o700, exist_ok=True)
    path = state / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return root


def test_defaults_without_any_file(ws: Path) -> None:
    settings = load_settings(ws)
    assert settings == Settings(origins=settings.origins)
    assert set(settings.origins.values()) == {"default"}
    assert settings.warnings == ()


def test_command_line_over_workspace_over_user_over_defaults(
    ws: Path, isolated_user_config: Path
) -> None:
    user = user_config(
        isolated_user_config,
        'model = "openai:user-model"\nmax_turns = 30\ntimeout = 20\nresolver = "agent"\n'
        'base_url = "http://127.0.0.1:1/v1"\n',
    )
    workspace = workspace_config(ws, 'model = "openai:ws-model"\nmax_turns = 10\n')
    settings = load_settings(ws, command_line={"max_turns": 5, "model": None}, trusted=True)
    assert settings.model == "openai:ws-model"
    assert settings.origins["model"] == str(workspace)
    assert settings.max_turns == 5 and settings.origins["max_turns"] == "command line"
    assert settings.timeout == 20.0 and settings.origins["timeout"] == str(user)
    assert settings.resolver == "agent"
    assert settings.base_url == "http://127.0.0.1:1/v1"
    # A command's own default sits below both files.
    assert load_settings(ws, defaults={"resolver": "human"}, trusted=True).resolver == "agent"
    assert load_settings(ws, defaults={"resolver": "human"}, trusted=True).api_key_env is None


def test_redline_model_variable_is_below_the_command_line_only(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace_config(ws, 'model = "openai:ws-model"\n')
    monkeypatch.setenv("REDLINE_MODEL", "openai:env-model")
    assert load_settings(ws, trusted=True).model == "openai:env-model"
    chosen = load_settings(ws, command_line={"model": "openai:cli"}, trusted=True)
    assert chosen.model == "openai:cli"


def test_unknown_key_is_a_warning_naming_file_and_key(ws: Path, isolated_user_config: Path) -> None:
    user = user_config(isolated_user_config, 'modle = "openai:x"\n')
    workspace = workspace_config(ws, "[agents.helper]\ncommand = ['x']\ncolour = 1\n")
    settings = load_settings(ws, trusted=True)
    assert settings.model is None
    assert any(str(user) in w and "'modle'" in w and "'model'" in w for w in settings.warnings)
    assert any(str(workspace) in w and "agents.helper.colour" in w for w in settings.warnings)


def test_malformed_file_is_an_error_naming_file_and_line(ws: Path) -> None:
    path = workspace_config(ws, 'model = "openai:x"\nmax_turns = = 3\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(ws, trusted=True)
    message = str(caught.value)
    assert str(path) in message and "line 2" in message


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('max_turns = "ten"', "max_turns"),
        ("max_turns = 0", "max_turns"),
        ("timeout = -1", "timeout"),
        ('resolver = "robot"', "resolver"),
        ('base_url = "ftp://x"', "base_url"),
        ('api_key_env = "MY KEY"', "api_key_env"),
        ('model = "gpt"', "model"),
        ('agents = "x"', "agents"),
    ],
)
def test_wrong_value_is_an_error_naming_file_and_key(
    isolated_user_config: Path, text: str, key: str
) -> None:
    path = user_config(isolated_user_config, text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(None)
    assert str(caught.value).startswith(f"{path}: {key}")


def test_untrusted_workspace_may_only_make_things_stricter(
    ws: Path, isolated_user_config: Path
) -> None:
    user_config(isolated_user_config, 'resolver = "agent"\nmax_turns = 20\n')
    path = workspace_config(
        ws,
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "AWS_SECRET_ACCESS_KEY"\n'
        'resolver = "human"\nmax_turns = 5\ntimeout = 600\nmodel = "openai:small"\n'
        "[agents.evil]\ncommand = ['sh', '-c', 'x']\nenv = { A = 'b' }\n",
    )
    settings = load_settings(ws)
    assert not settings.workspace_trusted
    assert settings.base_url is None and settings.api_key_env is None
    assert settings.agents == ()
    assert settings.resolver == "human" and settings.max_turns == 5  # stricter: kept
    assert settings.timeout == 60.0  # higher: skipped
    assert settings.model == "openai:small"
    skipped = {w.split(": ", 2)[1].split(" ")[0] for w in settings.warnings}
    assert skipped == {"base_url", "api_key_env", "timeout", "agents.evil"}
    assert all(w.startswith(f"{path}: ") for w in settings.warnings)

    # Less strict than what the user set: skipped.
    workspace_config(ws, 'resolver = "apply-all"\nmax_turns = 100\nmodel = "scripted:p.json"\n')
    loose = load_settings(ws)
    assert (loose.resolver, loose.max_turns, loose.model) == ("agent", 20, None)
    assert len(loose.warnings) == 3

    # Once trusted (redline trust, or --trust for one run) the file counts in full.
    trust_store.trust(ws)
    trusted = load_settings(ws)
    assert (trusted.resolver, trusted.max_turns, trusted.model) == (
        "apply-all",
        100,
        "scripted:p.json",
    )
    assert trusted.warnings == ()


def test_trusted_workspace_agents_are_read(ws: Path) -> None:
    workspace_config(ws, "[agents.helper]\ncommand = ['helper', '--acp']\nenv = { A = 'b' }\n")
    (agent,) = load_settings(ws, trusted=True).agents
    assert (agent.name, agent.command, agent.env) == ("helper", ("helper", "--acp"), (("A", "b"),))


def test_symlinked_workspace_config_is_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text('model = "openai:x"\n', encoding="utf-8")
    (ws / ".redline").mkdir(mode=0o700)
    (ws / ".redline" / "config.toml").symlink_to(outside)
    with pytest.raises(ConfigError, match="symlink"):
        load_settings(ws, trusted=True)


def test_symlinked_state_folder_is_not_read(ws: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text('model = "openai:x"\n', encoding="utf-8")
    (ws / ".redline").symlink_to(elsewhere)
    assert load_settings(ws, trusted=True).model is None


def test_workspace_root_is_found_like_git(tmp_path: Path) -> None:
    top = tmp_path / "top"
    deep = top / "a" / "b"
    deep.mkdir(parents=True)
    # A marker above the temporary folder (a stray /tmp/.redline) is found like git would.
    above = find_workspace_root(tmp_path)
    assert find_workspace_root(deep) == (deep if above == tmp_path else above)
    (top / ".git").mkdir()
    assert find_workspace_root(deep) == top
    (top / "a" / ".redline").mkdir()
    assert find_workspace_root(deep) == top / "a"
    (deep / ".git").write_text("gitdir: elsewhere\n", encoding="utf-8")  # a worktree
    assert find_workspace_root(deep) == deep


def plan(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"name": "test", "steps": steps}), encoding="utf-8")
    return f"scripted:{path}"


def test_commands_from_a_subfolder_use_the_top(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".git").mkdir()
    sub = ws / "pkg" / "inner"
    sub.mkdir(parents=True)
    (sub / "mod.py").write_text("print(1)\n", encoding="utf-8")
    monkeypatch.chdir(sub)
    write = {"call": [{"tool": "write", "args": {"path": "notes.md", "content": "n\n"}}]}
    model = plan(tmp_path, [write, {"resolve": "apply", "reason": "ok"}, {"say": "done"}])
    assert main(["exec", "--model", model, "--prompt", "go"]) == 0
    assert (ws / "notes.md").is_file()
    assert (ws / ".redline" / "sessions").is_dir()
    assert not (sub / ".redline").exists()
    capsys.readouterr()
    # undo works on the same journal from anywhere below.
    assert main(["undo"]) == 0
    assert not (ws / "notes.md").exists()
    capsys.readouterr()
    # ast-edit targets stay relative to where you are.
    assert main(["ast-edit", "--pattern", "print($A)", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert "pkg/inner/mod.py" in json.dumps(found) and "app.py" not in json.dumps(found)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"redline {__version__}"


def run_exec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["exec", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_workspace_base_url_reaches_the_provider(
    ws: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first report: base_url in .redline/config.toml was silently ignored."""
    workspace_config(ws, f'model = "openai:local"\nbase_url = "{fake_openai.base_url}"\n')
    fake_openai.enqueue_text("hello from the local server")
    code, out, err = run_exec(capsys, "-C", str(ws), "--prompt", "hi", "--trust")
    assert code == 0, err
    assert "hello from the local server" in out
    assert fake_openai.requests[0]["model"] == "local"


def test_untrusted_base_url_is_skipped_with_a_warning(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workspace_config(ws, 'model = "openai:local"\nbase_url = "http://127.0.0.1:9/v1"\n')
    code, _out, err = run_exec(capsys, "-C", str(ws), "--prompt", "hi")
    assert code == 1
    assert f"{path}: base_url skipped" in err
    assert "OPENAI_API_KEY is not set" in err


def test_api_key_env_names_the_variable(
    ws: Path,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    isolated_user_config: Path,
) -> None:
    user_config(
        isolated_user_config,
        f'model = "openai:m"\nbase_url = "{fake_openai.base_url}"\napi_key_env = "MY_LLM_KEY"\n',
    )
    code, _out, err = run_exec(capsys, "-C", str(ws), "--prompt", "hi")
    assert code == 1 and "MY_LLM_KEY is not set" in err
    monkeypatch.setenv("MY_LLM_KEY", "sk-test-123")
    fake_openai.enqueue_text("ok")
    code, _out, err = run_exec(capsys, "-C", str(ws), "--prompt", "hi")
    assert code == 0, err
    assert fake_openai.request_headers[0]["authorization"] == "Bearer sk-test-123"


def test_config_max_turns_and_bad_file_through_exec(
    ws: Path, tmp_path: Path, isolated_user_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [{"call": [{"tool": "ls", "args": {}}]} for _ in range(5)]
    user_config(isolated_user_config, f'model = "{plan(tmp_path, steps)}"\nmax_turns = 2\n')
    code, out, _err = run_exec(capsys, "-C", str(ws), "--prompt", "go", "--json")
    ends = [json.loads(line) for line in out.splitlines() if '"agent_end"' in line]
    assert code == 1 and ends[-1]["status"] == "max_turns"
    path = user_config(isolated_user_config, "max_turns = [\n")
    code, _out, err = run_exec(capsys, "-C", str(ws), "--prompt", "go")
    assert code == 2 and str(path) in err and "line" in err
    assert "Traceback" not in err


def test_unreadable_user_config_is_a_clear_error(isolated_user_config: Path) -> None:
    path = isolated_user_config / "config.toml"
    path.mkdir()
    with pytest.raises(ConfigError, match="folder"):
        load_settings(None)
    os.rmdir(path)


def test_dashboard_reads_the_same_settings(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from redline.commands import dashboard
    from redline.drivers.model.session import AgentSession

    opened: list[tuple[AgentSession, list[str]]] = []

    def fake_launch(session: AgentSession, *, prompt: str | None, notices: list[str]) -> int:
        opened.append((session, list(notices)))
        session.close()
        return 0

    monkeypatch.setattr(dashboard, "launch", fake_launch)
    path = workspace_config(ws, 'resolver = "apply-all"\nmax_turns = 7\ncolour = "red"\n')
    trust_store.trust(ws)
    sub = ws / "deep"
    sub.mkdir()
    monkeypatch.chdir(sub)
    assert main([]) == 0
    session, notices = opened[0]
    assert session.cwd == ws.resolve()
    assert session.resolver == "human" and session.max_turns == 7
    assert any(str(path) in n and "'colour'" in n for n in notices)
    assert any("resolver 'apply-all' is for redline exec" in n for n in notices)
    err = capsys.readouterr().err
    assert "unknown key 'colour'" in err


def test_a_fifo_as_workspace_config_is_an_error_not_a_hang(ws: Path) -> None:
    (ws / ".redline").mkdir(mode=0o700)
    os.mkfifo(ws / ".redline" / "config.toml")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_settings(ws, trusted=True)
