"""Which program ``--agent AGENT`` runs: a built-in name, a configured name or a command line."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp import schema


class AgentSpecError(ValueError):
    """``--agent`` names nothing runnable; the message says what to do."""


@dataclass(frozen=True)
class Builtin:
    command: str
    npm_package: str
    display: str


BUILTIN_AGENTS: dict[str, Builtin] = {
    "claude": Builtin("claude-agent-acp", "@zed-industries/claude-agent-acp", "Claude Code"),
    "gemini": Builtin("gemini --acp", "@google/gemini-cli", "Gemini CLI"),
    "codex": Builtin("codex-acp", "@zed-industries/codex-acp", "Codex"),
}

# Executables of the built-in agents, to name the npm package when one is missing.
_NPM_BY_EXECUTABLE = {shlex.split(b.command)[0]: b.npm_package for b in BUILTIN_AGENTS.values()}


@dataclass(frozen=True)
class AgentSpec:
    """A resolved agent: argv, extra environment and a name people read."""

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    origin: str = "command line"

    @property
    def display_name(self) -> str:
        return f"{self.name} via ACP"

    def environment(self) -> dict[str, str]:
        """redline's environment plus the configured ``env``."""
        merged = dict(os.environ)
        merged.update(self.env)
        return merged


def configured_agents(
    root: Path, trusted: bool | None = None
) -> tuple[dict[str, AgentSpec], tuple[str, ...]]:
    """``[agents.NAME]`` from the config, and the config's warnings: the user's agents
    always, the workspace's only when it is trusted (redline.config skips them otherwise,
    with a warning). All config access of the ACP client is here."""
    from redline.config import ConfigError, load_settings

    try:
        settings = load_settings(root, trusted=trusted)
    except ConfigError as exc:
        raise AgentSpecError(str(exc)) from None
    agents = {
        agent.name: AgentSpec(agent.name, agent.command, dict(agent.env), origin=agent.origin)
        for agent in settings.agents
    }
    return agents, settings.warnings


def _split(command: str, what: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise AgentSpecError(f"{what}: cannot parse {command!r} ({exc})") from None
    if not argv:
        raise AgentSpecError(f"{what}: empty command")
    return argv


def resolve_agent(agent: str, root: Path, *, trusted: bool | None = None) -> AgentSpec:
    """The agent ``--agent`` means: a configured name, a built-in name or a command line.

    ``trusted`` True: use the workspace's ``[agents.*]`` for this run (``--trust``).
    """
    text = agent.strip()
    if not text:
        raise AgentSpecError("--agent needs a name (claude, gemini, codex) or a command line")
    configured, warnings = configured_agents(root, trusted)
    skipped = [w for w in warnings if f"agents.{text} skipped" in w]
    if text in configured:
        spec = configured[text]
    elif skipped and text not in BUILTIN_AGENTS:
        raise AgentSpecError(skipped[0])
    elif text in BUILTIN_AGENTS:
        builtin = BUILTIN_AGENTS[text]
        spec = AgentSpec(text, _split(builtin.command, "built-in agent"), origin="built-in")
    else:
        argv = _split(text, "--agent")
        spec = AgentSpec(Path(argv[0]).name, argv)
    check_executable(spec)
    return spec


def check_executable(spec: AgentSpec) -> str:
    """The program's full path; a clear error (naming the npm package) when it is missing."""
    program = spec.argv[0]
    path = spec.env.get("PATH") or os.environ.get("PATH")
    found = shutil.which(program, path=path)
    if found:
        return found
    npm = _NPM_BY_EXECUTABLE.get(Path(program).name)
    hint = f"; install it with `npm install -g {npm}`" if npm else ""
    raise AgentSpecError(f"agent {spec.name}: program {program!r} not found on PATH{hint}")


def redline_mcp_server(root: Path) -> schema.McpServerStdio:
    """redline's own MCP server (``redline mcp -C ROOT``), as offered in ``session/new``.

    The command is this interpreter running ``redline.cli``, so the agent starts the same
    redline that reviews it; ``REDLINE_CONFIG_DIR`` is passed on (the same settings), and
    ``XDG_STATE_HOME`` when it is set, so the records the server signs verify with the state
    key this process uses (without it the server finds the key through its home folder).
    """
    from acp import schema

    from redline.paths import STATE_HOME_ENV, USER_CONFIG_ENV, user_config_dir

    env = [schema.EnvVariable(name=USER_CONFIG_ENV, value=str(user_config_dir().absolute()))]
    state_home = os.environ.get(STATE_HOME_ENV, "")
    if os.path.isabs(state_home):
        env.append(schema.EnvVariable(name=STATE_HOME_ENV, value=state_home))
    return schema.McpServerStdio(
        name="redline",
        command=str(Path(sys.executable).absolute()),
        args=["-m", "redline.cli", "mcp", "-C", str(root)],
        env=env,
    )
