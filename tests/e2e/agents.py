"""Run the real Codex and Gemini CLI (from npm) against the scripted model servers.

The agents are installed by ``scripts/install-agents.sh`` into ``$REDLINE_AGENTS_DIR``
(default ``~/.cache/redline-ci/agents``); ``find_agent(name)`` returns the binary under
its ``node_modules/.bin/`` or None. Each run is isolated: a temporary ``HOME`` (and
``CODEX_HOME``), dummy API keys, the model server on 127.0.0.1, nothing from the user's own
configuration. See docs/agents-notes.md for what these agents do with hooks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.model_servers import GeminiServer, ResponsesServer

RECORD_HOOK = Path(__file__).with_name("record_hook.py")
CODEX_VERSION = "0.171.0"
GEMINI_VERSION = "0.61.0"
CLAUDE_VERSION = "2.1.332"
RUN_TIMEOUT = 120.0  # a safety net for a stuck agent; no test relies on it


def agents_dir() -> Path:
    configured = os.environ.get("REDLINE_AGENTS_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "redline-ci" / "agents"


def find_agent(name: str) -> Path | None:
    """The agent's binary (``codex``, ``gemini``, ``claude``) under the agents dir, or None."""
    binary = agents_dir() / "node_modules" / ".bin" / name
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def require_agent(name: str) -> Path:
    """The agent's binary; skips the test with the reason when it is absent (under ``CI=true``
    tests/conftest.py turns that skip of an ``e2e`` test into a failure: CI installs them)."""
    import pytest

    binary = find_agent(name)
    if binary is not None:
        return binary
    reason = (
        f"{name} is not installed under {agents_dir() / 'node_modules' / '.bin'} "
        "(run scripts/install-agents.sh, or set REDLINE_AGENTS_DIR)"
    )
    pytest.skip(reason)


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment: PATH (node), a temporary HOME, no proxies, no real keys."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(extra)
    return env


@dataclass
class AgentRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str


def run_agent(argv: list[str], cwd: Path, env: dict[str, str]) -> AgentRun:
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    return AgentRun(argv, proc.returncode, proc.stdout, proc.stderr)


# -- the recording hook ------------------------------------------------------------------------


@dataclass
class HookRecorder:
    """``tests/e2e/record_hook.py`` over one folder: what it was sent, and what it answers."""

    folder: Path
    answers: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write_answers()

    @property
    def command(self) -> str:
        return shlex.join([sys.executable, str(RECORD_HOOK), str(self.folder)])

    def answer(self, event: str, **answer: Any) -> None:
        """How the hook answers ``event`` (or ``"*"``): stdout, stderr, exit, hang."""
        self.answers[event] = answer
        self._write_answers()

    def _write_answers(self) -> None:
        (self.folder / "answers.json").write_text(json.dumps(self.answers), encoding="utf-8")

    def calls(self, event: str | None = None) -> list[dict[str, Any]]:
        path = self.folder / "calls.jsonl"
        if not path.exists():
            return []
        payloads = [json.loads(line)["payload"] for line in path.read_text().splitlines()]
        return [p for p in payloads if event is None or p.get("hook_event_name") == event]


# -- Codex -------------------------------------------------------------------------------------


CODEX_MODEL = "gpt-5.5"


def codex_config_toml(server: ResponsesServer, extra: str = "") -> str:
    """``$CODEX_HOME/config.toml`` pointing Codex at ``server`` with a dummy key."""
    return f"""\
model = "{CODEX_MODEL}"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.scripted]
name = "scripted"
base_url = "{server.base_url}"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
{extra}"""


def codex_hook_hash(event_label: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """The ``trusted_hash`` Codex 0.171.0 expects for one command handler of a matcher group.

    ``event_label`` is the snake-case event (``pre_tool_use``). Codex hashes the normalized
    identity ``{event_name, matcher, hooks: [handler]}`` where the handler has ``timeout``
    (default 600, at least 1) and ``async`` (default false) filled in and absent optional
    fields left out: SHA-256 over the compact JSON with every object's keys sorted.
    """
    normalized: dict[str, Any] = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(1, int(handler.get("timeout", 600))),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label, "hooks": [normalized]}
    if group.get("matcher") is not None:
        identity["matcher"] = group["matcher"]
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


_CODEX_EVENT_LABELS = {
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PermissionRequest": "permission_request",
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "Stop": "stop",
}


def codex_trust_state(hooks_json_path: Path, hooks: dict[str, Any]) -> str:
    """``[hooks.state."<key>"] trusted_hash = …`` tables that make Codex run every command
    handler of ``hooks`` (a hooks.json ``{"hooks": {...}}``) stored at ``hooks_json_path``.

    The key is ``<absolute hooks.json path>:<event label>:<group index>:<handler index>``.
    Codex reads this state only from the user's ``$CODEX_HOME/config.toml`` (or ``-c``).
    """
    tables = []
    for event, groups in hooks["hooks"].items():
        label = _CODEX_EVENT_LABELS[event]
        for g, group in enumerate(groups):
            for h, handler in enumerate(group["hooks"]):
                key = f"{hooks_json_path}:{label}:{g}:{h}"
                digest = codex_hook_hash(label, group, handler)
                tables.append(f'[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n')
    return "\n".join(tables)


def recording_hooks(
    recorder: HookRecorder, events: list[str], matcher: str | None, timeout: int | None = None
) -> dict[str, Any]:
    """A Claude-style ``{"hooks": {Event: [{matcher, hooks: [{type, command}]}]}}``."""
    handler: dict[str, Any] = {"type": "command", "command": recorder.command}
    if timeout is not None:
        handler["timeout"] = timeout
    group: dict[str, Any] = {"hooks": [handler]}
    if matcher is not None:
        group["matcher"] = matcher
    return {"hooks": {event: [json.loads(json.dumps(group))] for event in events}}


@dataclass
class CodexSetup:
    home: Path  # HOME
    codex_home: Path  # CODEX_HOME
    hooks_path: Path  # the hooks.json written


def setup_codex(
    root: Path,
    workspace: Path,
    server: ResponsesServer,
    hooks: dict[str, Any] | None,
    *,
    project: bool = False,
    trust_hooks: bool = True,
    trust_project: bool = True,
) -> CodexSetup:
    """Write CODEX_HOME (config.toml, hooks) under ``root``.

    ``project``: hooks in ``<workspace>/.codex/hooks.json`` (else ``$CODEX_HOME/hooks.json``);
    ``trust_project``: ``[projects."<workspace>"] trust_level = "trusted"``;
    ``trust_hooks``: the ``hooks.state`` trusted hashes for every handler.
    """
    home = root / "home"
    codex_home = root / "codex-home"
    home.mkdir(parents=True, exist_ok=True)
    codex_home.mkdir(parents=True, exist_ok=True)
    hooks_dir = workspace / ".codex" if project else codex_home
    hooks_path = hooks_dir / "hooks.json"
    extra = ""
    if trust_project:
        extra += f'\n[projects.{json.dumps(str(workspace))}]\ntrust_level = "trusted"\n'
    if hooks is not None:
        hooks_dir.mkdir(parents=True, exist_ok=True)
        hooks_path.write_text(json.dumps(hooks, indent=2), encoding="utf-8")
        if trust_hooks:
            extra += "\n" + codex_trust_state(hooks_path, hooks)
    (codex_home / "config.toml").write_text(codex_config_toml(server, extra), encoding="utf-8")
    return CodexSetup(home, codex_home, hooks_path)


def run_codex(
    binary: Path, setup: CodexSetup, workspace: Path, prompt: str, *extra_args: str
) -> AgentRun:
    """``codex exec`` non-interactively in ``workspace`` (JSONL events on stdout)."""
    env = isolated_env(setup.home, CODEX_HOME=str(setup.codex_home), SCRIPTED_API_KEY="dummy")
    argv = [str(binary), "exec", "--json", "--skip-git-repo-check", *extra_args, prompt]
    return run_agent(argv, workspace, env)


# -- Gemini CLI --------------------------------------------------------------------------------


GEMINI_MODEL = "gemini-2.5-flash"


@dataclass
class GeminiSetup:
    home: Path
    settings_path: Path  # the settings.json holding the hooks


def setup_gemini(
    root: Path,
    workspace: Path,
    hooks: dict[str, Any] | None,
    *,
    project: bool = True,
    trust_folder: bool | None = None,
    user_settings: dict[str, Any] | None = None,
) -> GeminiSetup:
    """Write ``~/.gemini/settings.json`` (and the project's ``.gemini/settings.json``).

    ``hooks``: a ``{"hooks": {...}}`` put in the project settings (``project``) or the user's;
    ``trust_folder``: True/False writes ``~/.gemini/trustedFolders.json`` for the workspace
    (and turns folder trust on); None leaves folder trust at its default.
    """
    home = root / "home"
    gemini_dir = home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    user: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    if trust_folder is not None:
        user["security"]["folderTrust"] = {"enabled": True}
        level = "TRUST_FOLDER" if trust_folder else "DO_NOT_TRUST"
        (gemini_dir / "trustedFolders.json").write_text(
            json.dumps({str(workspace): level}), encoding="utf-8"
        )
    if user_settings:
        user.update(user_settings)
    settings_path = (workspace / ".gemini" if project else gemini_dir) / "settings.json"
    if hooks is not None and not project:
        user.update(hooks)
    (gemini_dir / "settings.json").write_text(json.dumps(user, indent=2), encoding="utf-8")
    if hooks is not None and project:
        settings_path.parent.mkdir(parents=True, exist_ok=True)
        settings_path.write_text(json.dumps(hooks, indent=2), encoding="utf-8")
    return GeminiSetup(home, settings_path)


def run_gemini(
    binary: Path,
    setup: GeminiSetup,
    server: GeminiServer,
    workspace: Path,
    prompt: str,
    *extra_args: str,
) -> AgentRun:
    """``gemini -p`` non-interactively in ``workspace`` (edits auto-approved: ``--yolo``)."""
    env = isolated_env(
        setup.home,
        GEMINI_API_KEY="dummy",
        GOOGLE_GEMINI_BASE_URL=server.origin,
        GEMINI_CLI_NO_RELAUNCH="true",
    )
    argv = [
        str(binary),
        "-m",
        GEMINI_MODEL,
        "--yolo",
        "--output-format",
        "json",
        *extra_args,
        "-p",
        prompt,
    ]
    return run_agent(argv, workspace, env)
