"""Which program ``--agent AGENT`` runs: a built-in name, a configured name or a command line."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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


def agent_tables(root: Path) -> dict[str, tuple[dict[str, Any], str]]:
    """``[agents.NAME]`` tables: the user's config always, the workspace's only when trusted.

    Returns ``{name: (table, where)}``; the workspace wins over the user config. All config
    access of the ACP client is here (redline.config is being reworked).
    """
    from redline.config import ConfigError, _read_toml, user_config_dir, workspace_state_dir
    from redline.extensibility.trust import is_trusted

    found: dict[str, tuple[dict[str, Any], str]] = {}
    sources = [user_config_dir() / "config.toml"]
    if is_trusted(root):
        sources.append(workspace_state_dir(root) / "config.toml")
    for path in sources:
        try:
            data = _read_toml(path)
        except ConfigError as exc:
            raise AgentSpecError(str(exc)) from None
        agents = data.get("agents", {})
        if not isinstance(agents, dict):
            raise AgentSpecError(f"{path}: [agents] must be a table of [agents.NAME] tables")
        for name, table in agents.items():
            if not isinstance(table, dict):
                raise AgentSpecError(f"{path}: [agents.{name}] must be a table")
            found[str(name)] = (table, str(path))
    return found


def _from_table(name: str, table: Mapping[str, Any], where: str) -> AgentSpec:
    command = table.get("command")
    if not isinstance(command, str) or not command.strip():
        raise AgentSpecError(f'{where}: [agents.{name}] needs command = "program --flags"')
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise AgentSpecError(f"{where}: [agents.{name}] env must be a table of strings")
    argv = _split(command, f"[agents.{name}] command in {where}")
    return AgentSpec(name, argv, dict(env), origin=where)


def _split(command: str, what: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise AgentSpecError(f"{what}: cannot parse {command!r} ({exc})") from None
    if not argv:
        raise AgentSpecError(f"{what}: empty command")
    return argv


def resolve_agent(agent: str, root: Path) -> AgentSpec:
    """The agent ``--agent`` means: a configured name, a built-in name or a command line."""
    text = agent.strip()
    if not text:
        raise AgentSpecError("--agent needs a name (claude, gemini, codex) or a command line")
    tables = agent_tables(root)
    if text in tables:
        table, where = tables[text]
        spec = _from_table(text, table, where)
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
