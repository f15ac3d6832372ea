"""Writing, removing and reporting the agents' hook configuration (``redline hooks``).

Where redline's hook goes, per agent:

- Claude Code: ``.claude/settings.local.json`` in the workspace (not committed by
  accident), or ``~/.claude/settings.json`` with ``--user``.
- Codex: ``.codex/hooks.json`` in the workspace, which Codex reads only for a project it
  trusts (else ``--user``: ``$CODEX_HOME/hooks.json``); Codex also runs a hook only once
  its hash is trusted in ``$CODEX_HOME/config.toml`` (:mod:`codex_trust`).
- Gemini CLI: ``.gemini/settings.json`` in the workspace, or ``~/.gemini/settings.json``
  with ``--user`` (recommended: ``--skip-trust`` skips project hooks silently).

The file is merged, never replaced: other keys keep their order and values, other hooks
stay; installing twice changes nothing; uninstalling removes only the entries whose command
is redline's ``hook AGENT``.

The command written is the absolute path of the redline that installed it, ``hook AGENT``,
then a guard that turns any failure (redline missing, killed, crashed) into the agent's
blocking exit *with a reason on stderr*: Codex and Gemini CLI treat a silent exit 2 as
"allow". The hook timeout is set above ``[hooks] wait_seconds`` (seconds for Claude Code
and Codex, milliseconds for Gemini CLI), so redline answers before the agent gives up.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from redline.drivers.hooks.settings_io import InstallError, read_json, write_json

if TYPE_CHECKING:
    from collections.abc import Mapping

    from redline.jsontypes import JsonObject, JsonValue

__all__ = ["InstallError", "Status", "install", "installed_in", "status", "uninstall"]

#: Versions the hook gateway was verified with, per agent (docs/agents.md).
TESTED_VERSIONS = {"claude": ("2.1.332",), "codex": ("0.171.0",), "gemini": ("0.61.0",)}
#: The agent's command on PATH.
BINARIES = {"claude": "claude", "codex": "codex", "gemini": "gemini"}
#: The tools each agent's hooks match (file tools, then the shell tools of review_shell).
#: The shell tools are matched whether or not ``[hooks] review_shell`` is on (the hook
#: passes them through when it is off), so turning it on needs no reinstall — and, for
#: Codex, no new trust: its ``trusted_hash`` covers the matcher. Codex 0.171.0 sends its
#: shell tool (``exec_command`` to the model) to hooks as ``Bash`` (recorded:
#: tests/fixtures/hooks/codex/PreToolUse.Bash.json); a matcher ``exec_command`` never fires.
MATCHERS = {
    "claude": "Write|Edit|MultiEdit|NotebookEdit|Bash|WebFetch|WebSearch",
    "codex": "apply_patch|Bash",
    "gemini": "write_file|replace|run_shell_command|web_fetch|google_web_search",
}
CLAUDE_MATCHER = MATCHERS["claude"]
#: The hook events, per agent: (before the tool, after it).
EVENTS = {
    "claude": ("PreToolUse", "PostToolUse"),
    "codex": ("PreToolUse", "PostToolUse"),
    "gemini": ("BeforeTool", "AfterTool"),
}
#: The prompt-time event, per agent: the agent hears decisions it did not wait for there
#: (drivers/hooks/outbox.py; Claude Code also at PreToolUse).
PROMPT_EVENTS = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}
#: What ``hooks status`` says of a hook installed before the prompt-time event existed.
OUTDATED = "installed by an older redline: run hooks install again (Codex: trust it again)"
#: Seconds the agent's hook timeout is set above redline's own wait.
TIMEOUT_MARGIN = 30
SUPPORTED = ("claude", "codex", "gemini")
#: What the guard prints when ``redline hook`` itself fails (the model reads it).
GUARD_MESSAGE = "redline hook failed: the tool call is blocked until redline can review it"


@dataclass(frozen=True)
class Status:
    agent: str
    installed: list[Path]
    version: str | None
    tested: bool
    note: str = ""
    #: Why an installed hook will not run ("Codex will skip it until …"), per file.
    skipped: list[str] = field(default_factory=list)
    advice: str = ""
    #: Installed files without the prompt-time event (an older redline wrote them).
    outdated: list[Path] = field(default_factory=list)


def redline_command() -> str:
    """How the agent runs this redline: its absolute path (or this Python with ``-m``)."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and os.path.basename(argv0) == "redline":
        return shlex.quote(os.path.abspath(argv0))
    return f"{shlex.quote(sys.executable)} -m redline"


def hook_command(agent: str, base: str | None = None) -> str:
    """``redline hook AGENT`` and the guard: on any failure, a reason on stderr and exit 2."""
    return f"{base or redline_command()} hook {agent} || {{ echo '{GUARD_MESSAGE}' >&2; exit 2; }}"


def _is_ours(command: object, agent: str) -> bool:
    return isinstance(command, str) and bool(
        re.search(rf"(^|[/\s'\"])(redline['\"]?|-m redline) hook {agent}( |$)", command)
    )


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def settings_path(agent: str, root: Path, user: bool) -> Path:
    if agent == "claude":
        return (
            _home() / ".claude" / "settings.json"
            if user
            else root / ".claude" / "settings.local.json"
        )
    if agent == "codex":
        from redline.drivers.hooks.codex_trust import codex_home

        return codex_home() / "hooks.json" if user else root / ".codex" / "hooks.json"
    if agent == "gemini":
        return _home() / ".gemini" / "settings.json" if user else root / ".gemini" / "settings.json"
    raise InstallError(
        f"redline hooks: unknown agent {agent!r}; expected one of {', '.join(SUPPORTED)}"
    )


def _event_list(hooks: JsonObject, event: str, path: Path) -> list[JsonValue]:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise InstallError(f"{path}: hooks.{event} is not a list; nothing was changed")
    return groups


def _remove_ours(data: JsonObject, agent: str, path: Path) -> bool:
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
            if not isinstance(group, dict) or not isinstance(inner, list):
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


def agent_timeout(agent: str, wait_seconds: float) -> int:
    """The agent's hook timeout: above redline's wait; Gemini CLI counts milliseconds."""
    seconds = int(wait_seconds) + TIMEOUT_MARGIN
    return seconds * 1000 if agent == "gemini" else seconds


def _entries(agent: str, command: str, timeout: int) -> dict[str, JsonObject]:
    pre, post = EVENTS[agent]
    entry: JsonObject = {"type": "command", "command": command, "timeout": timeout}
    # The prompt-time call reads one folder and answers at once: no review wait. It only
    # tells the agent news, so it fails open: no guard (a failing redline must not turn
    # every prompt into a blocked one).
    bare = command.split(" || ", 1)[0]
    prompt: JsonObject = {"type": "command", "command": bare, "timeout": agent_timeout(agent, 0)}
    return {
        pre: {"matcher": MATCHERS[agent], "hooks": [entry]},
        post: {"matcher": MATCHERS[agent], "hooks": [dict(entry)]},
        PROMPT_EVENTS[agent]: {"hooks": [prompt]},
    }


def _codex_ours(handler: JsonObject) -> bool:
    return _is_ours(handler.get("command"), "codex")


@dataclass(frozen=True)
class Installed:
    path: Path
    changed: bool
    #: Codex: the step that makes Codex trust the hook ('' when it is trusted).
    trust_step: str = ""
    trust_recorded: bool = False
    advice: str = ""
    #: The git exclude file the settings file was added to ('' when nothing was added).
    excluded: str = ""


def exclude_from_git(root: Path, path: Path) -> str:
    """Add ``path`` (a workspace file holding a local path: Claude Code's
    ``settings.local.json``) to the file ``git rev-parse --git-path info/exclude`` names,
    unless git already ignores it; that file, or '' when nothing was added (not in git,
    already ignored, git missing or failing: the install itself stands)."""
    from redline.workspace.git import GitError, run_git

    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        ignored = run_git(root, "check-ignore", "-q", "--no-index", "--", rel)
        if ignored.returncode != 1:  # 0: ignored already; 128: not a git working tree
            return ""
        found = run_git(root, "rev-parse", "--show-prefix", "--git-path", "info/exclude")
        if found.returncode != 0:
            return ""
        prefix, exclude_name = [*os.fsdecode(found.stdout).split("\n"), "", ""][:2]
        exclude = Path(exclude_name)
        if not exclude.is_absolute():
            exclude = root / exclude
        line = "/" + prefix + rel
        try:
            text = exclude.read_text(encoding="utf-8", errors="surrogateescape")
        except FileNotFoundError:
            text = ""
        if line in text.splitlines():
            return ""
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(("" if not text or text.endswith("\n") else "\n") + line + "\n")
    except (GitError, OSError, ValueError):
        return ""
    return str(exclude)


def install(
    agent: str,
    root: Path,
    *,
    user: bool,
    wait_seconds: float,
    base: str | None = None,
    trust_codex_hook: bool = False,
) -> Installed:
    """Merge redline's hooks into the agent's settings."""
    path = settings_path(agent, root, user)
    doc: Mapping[str, object] = {}  # Codex's config.toml (read for codex only)
    if agent == "codex":
        from redline.drivers.hooks import codex_trust

        doc = codex_trust.read_config()
        if not user and not codex_trust.project_trusted(doc, root.resolve()):
            raise InstallError(
                f"Codex reads {path} only in a project it trusts, and {root} is not trusted "
                f"in {codex_trust.config_path()}. Install it for your user instead "
                "(`redline hooks install codex --user`), or trust the project first (run "
                "`codex` in it and accept, or `codex exec --trust`) and install again. "
                "Nothing was changed."
            )
    data = read_json(path)
    before = json.dumps(data)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: `hooks` is not an object; nothing was changed")
    old_trust: dict[str, str] = {}
    if agent == "codex":
        from redline.drivers.hooks.codex_trust import trust_entries

        old_trust = trust_entries(path.resolve(), data, _codex_ours)
    wanted = _entries(agent, hook_command(agent, base), agent_timeout(agent, wait_seconds))
    _remove_ours(data, agent, path)  # an older command or timeout is replaced in place
    hooks = data.setdefault("hooks", {})
    assert isinstance(hooks, dict)  # checked above; _remove_ours keeps an object or drops it
    for event, group in wanted.items():
        _event_list(hooks, event, path).append(group)
    changed = json.dumps(data) != before
    if changed:
        write_json(path, data)
    excluded = exclude_from_git(root, path) if agent == "claude" and not user else ""
    advice = ""
    if agent == "gemini" and not user:
        advice = (
            "Gemini CLI runs project hooks only in a folder it trusts and skips them silently "
            "under --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true; `redline hooks install "
            "gemini --user` is not bypassed that way."
        )
    if agent != "codex":
        return Installed(path, changed, advice=advice, excluded=excluded)
    from redline.drivers.hooks import codex_trust

    ours = codex_trust.trust_entries(path.resolve(), data, _codex_ours)
    stale = {k: v for k, v in old_trust.items() if ours.get(k) != v}
    missing = codex_trust.untrusted(doc, ours)
    if trust_codex_hook:
        recorded = codex_trust.set_trust(missing, remove=stale) if (missing or stale) else False
        return Installed(path, changed or recorded, trust_recorded=bool(missing))
    step = ""
    if missing:
        step = (
            f"Codex runs this hook only once you trust it. Either start `codex` and choose "
            f"“Trust all and continue” (or trust it under /hooks), or run `redline hooks "
            f"install codex{' --user' if user else ''} --trust-codex-hook`, or add to "
            f"{codex_trust.config_path()}:\n\n{codex_trust.toml_lines(missing)}"
        )
    return Installed(path, changed, trust_step=step)


def uninstall(agent: str, root: Path, *, user: bool) -> tuple[Path, bool]:
    path = settings_path(agent, root, user)
    if not path.exists():
        return path, False
    data = read_json(path)
    trusted: dict[str, str] = {}
    if agent == "codex":
        from redline.drivers.hooks.codex_trust import trust_entries

        trusted = trust_entries(path.resolve(), data, _codex_ours)
    if not _remove_ours(data, agent, path):
        return path, False
    if trusted:  # first: an unreadable config.toml then leaves both files as they were
        from redline.drivers.hooks.codex_trust import set_trust

        set_trust({}, remove=trusted)  # redline's trust entries only, where they still match
    write_json(path, data)
    return path, True


def installed_in(agent: str, path: Path, event: str | None = None) -> bool:
    """Whether redline's hook for ``event`` (default: the pre-tool one) is in ``path``."""
    try:
        data = read_json(path)
    except InstallError:
        return False
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    pre = hooks.get(event or EVENTS[agent][0])
    return isinstance(pre, list) and any(
        isinstance(group, dict)
        and isinstance(inner := group.get("hooks"), list)
        and any(isinstance(h, dict) and _is_ours(h.get("command"), agent) for h in inner)
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


def _codex_skipped(path: Path, root: Path, project: bool) -> str:
    """Why Codex will not run redline's hook in ``path`` ('' when it will)."""
    from redline.drivers.hooks import codex_trust

    try:
        doc = codex_trust.read_config()
    except InstallError as exc:
        return f"Codex will skip it until its config can be read: {exc}"
    if not codex_trust.hooks_enabled(doc):
        return f"Codex will skip it until hooks are on again ([features] hooks = false in {codex_trust.config_path()})"
    if project and not codex_trust.project_trusted(doc, root.resolve()):
        return f"Codex will skip it until the project {root} is trusted (run `codex` there and accept, or `codex exec --trust`)"
    data = read_json(path)
    missing = codex_trust.untrusted(
        doc, codex_trust.trust_entries(path.resolve(), data, _codex_ours)
    )
    if missing:
        return (
            "Codex will skip it until you trust the hook (start `codex` and trust it, or "
            f"`redline hooks install codex{'' if project else ' --user'} --trust-codex-hook`)"
        )
    return ""


def _gemini_skipped(path: Path, root: Path, project: bool) -> str:
    try:
        data = read_json(path)
        user = read_json(_home() / ".gemini" / "settings.json")
    except InstallError as exc:
        return f"Gemini CLI will skip it until its settings can be read: {exc}"
    for settings in (data, user):
        config = settings.get("hooksConfig")
        if isinstance(config, dict) and config.get("enabled") is False:
            return "Gemini CLI will skip it until hooks are on again (hooksConfig.enabled = false)"
    if not project:
        return ""
    try:
        trusted = read_json(_home() / ".gemini" / "trustedFolders.json")
    except InstallError:
        trusted = {}
    resolved = root.resolve()
    if not any(
        level in ("TRUST_FOLDER", "TRUST_PARENT") and Path(folder) in (resolved, *resolved.parents)
        for folder, level in trusted.items()
    ):
        return (
            f"Gemini CLI will skip it until the folder {root} is trusted (start `gemini` there "
            "and trust it), and skips it whenever it runs with --skip-trust; prefer "
            "`redline hooks install gemini --user`"
        )
    return ""


def status(agent: str, root: Path) -> Status:
    if agent not in SUPPORTED:
        return Status(agent, [], agent_version(agent), False, "not supported by redline yet")
    places = [(settings_path(agent, root, False), True), (settings_path(agent, root, True), False)]
    found = [(p, project) for p, project in places if installed_in(agent, p)]
    skipped = []
    for path, project in found:
        why = ""
        if agent == "codex":
            why = _codex_skipped(path, root, project)
        elif agent == "gemini":
            why = _gemini_skipped(path, root, project)
        if why:
            skipped.append(f"{path}: {why}")
    advice = ""
    if agent == "gemini" and found and all(project for _p, project in found):
        advice = "project hooks are skipped under --skip-trust; prefer --user"
    version = agent_version(agent)
    return Status(
        agent,
        [p for p, _project in found],
        version,
        version in TESTED_VERSIONS[agent],
        skipped=skipped,
        advice=advice,
        outdated=[p for p, _project in found if not installed_in(agent, p, PROMPT_EVENTS[agent])],
    )
