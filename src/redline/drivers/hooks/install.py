"""Writing, removing and reporting the agents' hook configuration (``redline hooks``).

Claude Code: ``.claude/settings.local.json`` in the workspace (not committed by accident),
or ``~/.claude/settings.json`` with ``--user``. The file is merged, never replaced: other
keys keep their order and values, other hooks stay; installing twice changes nothing;
uninstalling removes only the entries whose command is redline's ``hook AGENT``.

The command written is the absolute path of the redline that installed it, ``hook AGENT``,
then ``|| exit 2``: whatever goes wrong (redline missing, killed, crashed), the agent gets
its blocking exit instead of failing open. The hook timeout is set above
``[hooks] wait_seconds``, so redline answers before the agent gives up on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Versions the hook gateway was verified with, per agent (docs/agents.md).
TESTED_VERSIONS = {"claude": ("2.1.332",), "codex": ("0.171.0",), "gemini": ("0.61.0",)}
#: The agent's command on PATH.
BINARIES = {"claude": "claude", "codex": "codex", "gemini": "gemini"}
#: Claude Code tools the PreToolUse/PostToolUse hooks match (file tools and shell tools).
CLAUDE_MATCHER = "Write|Edit|MultiEdit|NotebookEdit|Bash|WebFetch|WebSearch"
#: Seconds the agent's hook timeout is set above redline's own wait.
TIMEOUT_MARGIN = 30
SUPPORTED = ("claude",)


class InstallError(Exception):
    """The configuration cannot be read or written; the message names the file and cause."""


@dataclass(frozen=True)
class Status:
    agent: str
    installed: list[Path]
    version: str | None
    tested: bool
    note: str = ""


def redline_command() -> str:
    """How the agent runs this redline: its absolute path (or this Python with ``-m``)."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and os.path.basename(argv0) == "redline":
        return shlex.quote(os.path.abspath(argv0))
    return f"{shlex.quote(sys.executable)} -m redline"


def hook_command(agent: str, base: str | None = None) -> str:
    return f"{base or redline_command()} hook {agent} || exit 2"


def _is_ours(command: object, agent: str) -> bool:
    return isinstance(command, str) and bool(
        re.search(rf"(^|[/\s'\"])(redline['\"]?|-m redline) hook {agent}( |$)", command)
    )


def settings_path(agent: str, root: Path, user: bool) -> Path:
    if agent != "claude":
        raise InstallError(
            f"redline hooks: {agent} is not supported yet; see docs/agents.md for the agents "
            "redline's hooks were verified with."
        )
    if user:
        return Path(os.path.expanduser("~")) / ".claude" / "settings.json"
    return root / ".claude" / "settings.local.json"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InstallError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InstallError(f"{path}: not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path}: expected a JSON object; nothing was changed")
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Write atomically (a temporary file renamed over it), keeping the file's mode."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise InstallError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _event_list(hooks: dict[str, Any], event: str, path: Path) -> list[Any]:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise InstallError(f"{path}: hooks.{event} is not a list; nothing was changed")
    return groups


def _remove_ours(data: dict[str, Any], agent: str, path: Path) -> bool:
    """Drop redline's hook entries from ``data`` (in place); True if any was there."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    removed = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [
                h for h in inner if not (isinstance(h, dict) and _is_ours(h.get("command"), agent))
            ]
            if len(kept) != len(inner):
                removed = True
                if not kept:
                    continue
                group = {**group, "hooks": kept}
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed


def _claude_entries(command: str, timeout: int) -> dict[str, dict[str, Any]]:
    entry = {"type": "command", "command": command, "timeout": timeout}
    return {
        "PreToolUse": {"matcher": CLAUDE_MATCHER, "hooks": [entry]},
        "PostToolUse": {"matcher": CLAUDE_MATCHER, "hooks": [dict(entry)]},
    }


def install(
    agent: str, root: Path, *, user: bool, wait_seconds: float, base: str | None = None
) -> tuple[Path, bool]:
    """Merge redline's hooks into the agent's settings; (the file, whether it changed)."""
    path = settings_path(agent, root, user)
    data = _read_json(path)
    before = json.dumps(data)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: `hooks` is not an object; nothing was changed")
    timeout = int(wait_seconds) + TIMEOUT_MARGIN
    wanted = _claude_entries(hook_command(agent, base), timeout)
    _remove_ours(data, agent, path)  # an older command or timeout is replaced in place
    hooks = data.setdefault("hooks", {})
    for event, group in wanted.items():
        _event_list(hooks, event, path).append(group)
    if json.dumps(data) == before:
        return path, False
    _write_json(path, data)
    return path, True


def uninstall(agent: str, root: Path, *, user: bool) -> tuple[Path, bool]:
    path = settings_path(agent, root, user)
    if not path.exists():
        return path, False
    data = _read_json(path)
    if not _remove_ours(data, agent, path):
        return path, False
    _write_json(path, data)
    return path, True


def installed_in(agent: str, path: Path) -> bool:
    try:
        data = _read_json(path)
    except InstallError:
        return False
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    pre = hooks.get("PreToolUse")
    return isinstance(pre, list) and any(
        isinstance(group, dict)
        and isinstance(group.get("hooks"), list)
        and any(isinstance(h, dict) and _is_ours(h.get("command"), agent) for h in group["hooks"])
        for group in pre
    )


def agent_version(agent: str) -> str | None:
    """The agent's version from ``AGENT --version`` on PATH (None: not found)."""
    import shutil

    binary = shutil.which(BINARIES[agent])
    if binary is None:
        return None
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"\d+\.\d+\.\d+", done.stdout or "")
    return match.group(0) if match else None


def status(agent: str, root: Path) -> Status:
    if agent not in SUPPORTED:
        return Status(agent, [], agent_version(agent), False, "not supported by redline yet")
    places = [settings_path(agent, root, False), settings_path(agent, root, True)]
    found = [p for p in places if installed_in(agent, p)]
    version = agent_version(agent)
    return Status(agent, found, version, version in TESTED_VERSIONS[agent])
