"""``[[checks]]`` and ``[check_runner]`` from the config files.

The user's ``config.toml`` always counts; a workspace's ``.redline/config.toml`` only once
the workspace is trusted: a cloned repository must not choose what runs on your machine.
The checks an untrusted workspace declares are kept by name, so every listing can say
they were skipped and why.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.checks.sandbox import Sandbox, valid_env_name
from redline.config import ConfigError, read_user_config, read_workspace_config

if TYPE_CHECKING:
    import pathspec

FORMATS: tuple[str, ...] = ("ruff-json", "mypy", "pytest", "sarif", "exit-code")
WHEN: tuple[str, ...] = ("propose", "demand")
CHECK_KEYS: tuple[str, ...] = ("name", "command", "format", "timeout", "when", "files", "env")
RUNNER_KEYS: tuple[str, ...] = ("jobs", "sandbox", "hide", "read")
SANDBOX_VALUES: tuple[str, ...] = ("on", "off")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 24 * 3600.0
MAX_JOBS = 64
WORKSPACE_LOOSENS = (
    "{file}: check_runner.{key} ignored: only your own config.toml ({user}) can {what}"
)
UNTRUSTED_WHY = (
    "declared in {file}, and this workspace is not trusted: a repository does not choose "
    "what runs on your machine (`redline trust` allows it)"
)


@dataclass(frozen=True)
class CheckSpec:
    """One ``[[checks]]`` entry."""

    name: str
    command: tuple[str, ...]
    format: str = "exit-code"
    timeout: float = DEFAULT_TIMEOUT
    when: str = "propose"
    origin: str = ""
    #: ``files = [...]``: globs (as a rule's ``paths``) choosing which of an action's
    #: files the check gets; None: every file.
    files: tuple[str, ...] | None = None
    #: The names of the environment variables the check keeps in its sandbox.
    env: tuple[str, ...] = ()
    #: How it runs (load_checks sets the configured sandbox; sandboxed by default).
    sandbox: Sandbox = field(default_factory=Sandbox, compare=False)

    def key(self) -> str:
        """The check's configuration as a short hash: its command, format, ``files``,
        timeout and ``env`` (what can change its result). A stored result records it, so a result
        of an older configuration is shown as out of date."""
        data = [self.format, list(self.command), self.files, self.timeout, list(self.env)]
        text = json.dumps(data, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def select(self, paths: Iterable[str]) -> list[str]:
        """The ``paths`` (workspace-relative) this check gets: those its ``files`` globs
        match, or every one without ``files``."""
        if self.files is None:
            return list(paths)
        spec = _globs(self.files)
        return [p for p in paths if spec.match_file(p)]


@functools.lru_cache(maxsize=64)
def _globs(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


@dataclass(frozen=True)
class SkippedCheck:
    """A check declared where it may not run; ``why`` says so in words."""

    name: str
    why: str


@dataclass(frozen=True)
class ChecksConfig:
    checks: tuple[CheckSpec, ...] = ()
    skipped: tuple[SkippedCheck, ...] = ()
    jobs: int = 1
    workspace_trusted: bool = False
    sandbox: Sandbox = field(default_factory=Sandbox)
    #: Lines to show the person: settings a workspace may not make (ignored).
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks) + tuple(s.name for s in self.skipped)


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _check(entry: Any, shown: str, index: int) -> CheckSpec:
    where = f"{shown}: checks[{index}]"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected a [[checks]] table")
    for key in entry:
        if key not in CHECK_KEYS:
            raise ConfigError(
                f"{where}.{key}: unknown key (expected one of {', '.join(CHECK_KEYS)})"
            )
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}.name: required: a non-empty string")
    where = f"{shown}: checks {name!r}"
    command = entry.get("command")
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(part, str) and part for part in command)
    ):
        raise ConfigError(f"{where}: command: expected a non-empty list of strings")
    fmt = entry.get("format", "exit-code")
    if fmt not in FORMATS:
        raise ConfigError(f"{where}: format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or not 0 < timeout <= MAX_TIMEOUT
    ):
        raise ConfigError(
            f"{where}: timeout: expected seconds above 0 and at most {MAX_TIMEOUT:g}, "
            f"got {timeout!r}"
        )
    when = entry.get("when", "propose")
    if when not in WHEN:
        raise ConfigError(f"{where}: when: expected propose or demand, got {when!r}")
    files = _files(entry.get("files"), where) if "files" in entry else None
    env = entry.get("env", [])
    if not isinstance(env, list) or not all(valid_env_name(n) for n in env):
        raise ConfigError(
            f"{where}: env: expected a list of environment variable names "
            f'(e.g. ["VIRTUAL_ENV"]), got {env!r}'
        )
    return CheckSpec(
        name.strip(),
        tuple(command),
        str(fmt),
        float(timeout),
        str(when),
        shown,
        files,
        tuple(env),
    )


def _files(value: Any, where: str) -> tuple[str, ...]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(part, str) and part.strip() for part in value)
    ):
        raise ConfigError(
            f'{where}: files: expected a non-empty list of globs, like ["*.py", "*.pyi"]'
        )
    patterns = tuple(value)
    try:
        _globs(patterns)
    except ValueError as exc:  # pathspec's GitWildMatchPatternError is a ValueError
        raise ConfigError(f"{where}: files: not a valid glob: {exc}") from None
    return patterns


def _checks(data: Mapping[str, Any], shown: str) -> list[CheckSpec]:
    entries = data.get("checks")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ConfigError(f"{shown}: checks: expected [[checks]] tables")
    found = [_check(entry, shown, index) for index, entry in enumerate(entries)]
    names = [c.name for c in found]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"{shown}: checks {name!r}: the name is used twice")
    return found


def _runner(data: Mapping[str, Any], shown: str) -> dict[str, Any]:
    """``[check_runner]``, checked: jobs, sandbox, hide, read (only the keys given)."""
    table = data.get("check_runner")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: check_runner: expected a [check_runner] table")
    for key in table:
        if key not in RUNNER_KEYS:
            raise ConfigError(
                f"{shown}: check_runner.{key}: unknown key (expected one of "
                f"{', '.join(RUNNER_KEYS)})"
            )
    found: dict[str, Any] = {}
    jobs = table.get("jobs")
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
            raise ConfigError(
                f"{shown}: check_runner.jobs: expected a whole number from 1 to {MAX_JOBS}, "
                f"got {jobs!r}"
            )
        found["jobs"] = jobs
    if "sandbox" in table:
        value = table["sandbox"]
        if value not in SANDBOX_VALUES:
            raise ConfigError(
                f'{shown}: check_runner.sandbox: expected "on" or "off", got {value!r}'
            )
        found["sandbox"] = value
    for key in ("hide", "read"):
        if key not in table:
            continue
        paths = table[key]
        if not isinstance(paths, list) or not all(
            isinstance(p, str) and os.path.isabs(os.path.expanduser(p)) for p in paths
        ):
            raise ConfigError(
                f"{shown}: check_runner.{key}: expected a list of absolute paths "
                f"(~ allowed), got {paths!r}"
            )
        found[key] = tuple(os.path.expanduser(p) for p in paths)
    return found


def load_checks(root: Path | None, *, trusted: bool | None = None) -> ChecksConfig:
    """The checks in force for ``root``: the user's, then the trusted workspace's (a
    workspace check with a user check's name replaces it). ``trusted`` None asks the trust
    store. Raises :class:`~redline.config.ConfigError` naming the file and key.

    The sandbox: on unless the user's own config says ``sandbox = "off"`` (a workspace's
    ``sandbox`` and ``read`` are ignored with a note: they would loosen it); ``hide`` adds
    up from both files."""
    data, shown = read_user_config()
    checks = {c.name: c for c in _checks(data, shown)}
    runner = _runner(data, shown)
    jobs: int | None = runner.get("jobs")
    hide: tuple[str, ...] = runner.get("hide", ())
    skipped: list[SkippedCheck] = []
    notes: list[str] = []
    workspace_trusted = False
    if root is not None:
        wdata, wshown = read_workspace_config(root)
        declared = _checks(wdata, wshown)
        wrunner = _runner(wdata, wshown)
        for key, what in (
            ("sandbox", "turn the checks' sandbox off"),
            ("read", "show the checks more of your files"),
        ):
            if key in wrunner:
                notes.append(WORKSPACE_LOOSENS.format(file=wshown, key=key, user=shown, what=what))
        hide += wrunner.get("hide", ())
        if trusted is None and (declared or "jobs" in wrunner):
            from redline.trust import is_trusted

            trusted = is_trusted(root)
        workspace_trusted = bool(trusted)
        if workspace_trusted:
            checks.update((c.name, c) for c in declared)
            jobs = wrunner.get("jobs", jobs)
        else:
            why = UNTRUSTED_WHY.format(file=wshown)
            skipped = [SkippedCheck(c.name, why) for c in declared if c.name not in checks]
    sandbox = Sandbox(
        enabled=runner.get("sandbox", "on") == "on",
        workspace=str(root) if root is not None else "",
        hide=hide,
        read=runner.get("read", ()),
    )
    return ChecksConfig(
        checks=tuple(replace(c, sandbox=replace(sandbox, env=c.env)) for c in checks.values()),
        skipped=tuple(skipped),
        jobs=jobs if jobs is not None else default_jobs(),
        workspace_trusted=workspace_trusted,
        sandbox=sandbox,
        notes=tuple(notes),
    )
