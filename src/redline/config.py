"""Where redline keeps its own state, and the one typed loader for ``config.toml``.

Settings come from four layers, the later winning: built-in defaults, the user's
``config.toml`` (in :func:`user_config_dir`), the workspace's ``.redline/config.toml``, and
the command line (``$REDLINE_MODEL`` counts as the command line for ``model``). A workspace
folder comes from whoever made the repository, so when the workspace is not trusted
(``redline trust``) its file may only make things stricter: see :func:`load_settings`.

Standard library only (the CLI imports this before ``--help`` answers).
"""

from __future__ import annotations

import errno
import math
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redline.paths import user_config_dir

MODEL_ENV = "REDLINE_MODEL"
#: Overrides the config files' ``plugin_timeout`` (the command line still wins).
PLUGIN_TIMEOUT_ENV = "REDLINE_PLUGIN_TIMEOUT"
CONFIG_FILE_NAME = "config.toml"
# A config file is a few lines; anything far bigger is not one.
MAX_CONFIG_BYTES = 1024 * 1024

# Who resolves pending actions, strictest first: a person reviews everything; nothing is
# written; the model decides; everything is written.
RESOLVER_STRICTNESS: tuple[str, ...] = ("human", "discard-all", "agent", "apply-all")


def user_config_file() -> Path:
    return user_config_dir() / CONFIG_FILE_NAME


def workspace_state_dir(root: Path) -> Path:
    return root / ".redline"


def workspace_config_file(root: Path) -> Path:
    return workspace_state_dir(root) / CONFIG_FILE_NAME


class ConfigError(ValueError):
    """A config file exists but cannot be used; the message names the file and the cause."""


@dataclass(frozen=True)
class AgentCommand:
    """An external agent command from ``[agents.NAME]`` (``command``, optional ``env``)."""

    name: str
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    origin: str = ""


@dataclass(frozen=True)
class Settings:
    """Everything the config files and the command line decide, merged.

    ``origins`` says where each value came from (``default``, a file path, ``command line``
    or ``$REDLINE_MODEL``); ``warnings`` are the lines to show the person (unknown keys,
    entries an untrusted workspace may not set), each naming the file and the key.
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    resolver: str = "human"
    max_turns: int = 50
    timeout: float = 60.0
    plugin_timeout: float = 10.0
    agents: tuple[AgentCommand, ...] = ()
    workspace_trusted: bool = False
    warnings: tuple[str, ...] = ()
    origins: Mapping[str, str] = field(default_factory=dict)


DEFAULTS: dict[str, Any] = {
    "model": None,
    "base_url": None,
    "api_key_env": None,
    "resolver": "human",
    "max_turns": 50,
    "timeout": 60.0,
    "plugin_timeout": 10.0,
}


# -- value checks (each returns the value or raises ValueError saying what is expected) ----
def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string, got {value!r}")
    return value.strip()


def _model(value: object) -> str:
    text = _text(value)
    _kind, sep, rest = text.partition(":")
    if not sep or not rest:
        raise ValueError(
            f"expected scripted:PLAN.json, openai:MODEL or anthropic:MODEL, got {text!r}"
        )
    return text


def _url(value: object) -> str:
    from redline.redaction import redact_url

    text = _text(value)
    if not text.startswith(("http://", "https://")):
        raise ValueError(f"expected an http:// or https:// URL, got {redact_url(text)!r}")
    return text


def _env_name(value: object) -> str:
    text = _text(value)
    if not (text.replace("_", "a").isalnum() and text.isascii()) or text[0].isdigit():
        raise ValueError(f"expected the name of an environment variable, got {text!r}")
    return text


def _resolver(value: object) -> str:
    if value not in RESOLVER_STRICTNESS:
        raise ValueError(f"expected one of {', '.join(RESOLVER_STRICTNESS)}, got {value!r}")
    return str(value)


def _max_turns(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected a whole number of at least 1, got {value!r}")
    return value


def _timeout(value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"expected a number of seconds above 0, got {value!r}")
    return float(value)


def _seconds(text: str) -> object:
    """``text`` as a number when it is one (else unchanged, for the check to refuse)."""
    try:
        return float(text)
    except ValueError:
        return text


CHECKS: dict[str, Callable[[object], Any]] = {
    "model": _model,
    "base_url": _url,
    "api_key_env": _env_name,
    "resolver": _resolver,
    "max_turns": _max_turns,
    "timeout": _timeout,
    "plugin_timeout": _timeout,
}
KNOWN_KEYS: tuple[str, ...] = (
    *CHECKS,
    "agents",
    "hooks",
    "git",
    "checks",
    "check_runner",
    "notify",
    "queue",
)

# What an untrusted workspace may never set: where requests go and which secret they carry.
UNTRUSTED_NEVER = {
    "base_url": "it would send your requests and key to a server the repository chose",
    "api_key_env": "it would choose which of your secrets is sent",
}


# -- reading files -----------------------------------------------------------------
def _parse(raw: bytes, shown: str) -> dict[str, Any]:
    import tomllib

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: not valid TOML: {exc}") from None


def read_user_config() -> tuple[dict[str, Any], str]:
    """The user's ``config.toml`` as a table ({} when there is none), and its shown path."""
    path = user_config_file()
    shown = str(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return {}, shown
    except IsADirectoryError:
        raise ConfigError(f"{shown}: is a folder, not a config file") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read config: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{shown}: larger than {MAX_CONFIG_BYTES} bytes; not a config file")
    return _parse(raw, shown), shown


def read_workspace_config(root: Path) -> tuple[dict[str, Any], str]:
    """``.redline/config.toml`` without following a symlink anywhere below the root."""
    from redline.workspace.state import StateFolderError, open_state_dir

    shown = str(workspace_config_file(root))
    try:
        dir_fd = open_state_dir(root, create=False)
    except FileNotFoundError:
        return {}, shown
    except (StateFolderError, NotADirectoryError):
        # An unusable .redline/ (a symlink, a file, another user's) holds no config we may
        # read; opening the session refuses the folder with an error naming it.
        return {}, shown
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read config: {exc.strerror or exc}") from None
    try:
        try:
            fd = os.open(
                CONFIG_FILE_NAME,
                os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                dir_fd=dir_fd,
            )
        except FileNotFoundError:
            return {}, shown
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ConfigError(
                    f"{shown}: is a symlink; redline reads the workspace config only from a "
                    "plain file inside .redline/"
                ) from None
            raise ConfigError(f"{shown}: cannot read config: {exc.strerror or exc}") from None
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{shown}: not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_CONFIG_BYTES:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read config: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{shown}: larger than {MAX_CONFIG_BYTES} bytes; not a config file")
    return _parse(b"".join(chunks), shown), shown


# -- merging -------------------------------------------------------------------------
def _unknown(shown: str, key: str, known: tuple[str, ...]) -> str:
    import difflib

    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{shown}: unknown key {key!r} ignored{hint}"


def _agents(table: object, shown: str, warnings: list[str], restricted: bool) -> list[AgentCommand]:
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: agents: expected a table of [agents.NAME] sections")
    found: list[AgentCommand] = []
    for name, entry in table.items():
        key = f"agents.{name}"
        if restricted:
            warnings.append(
                f"{shown}: {key} skipped: this workspace is not trusted, and an agent command "
                "(and its environment entries) would run code the repository chose "
                "(redline trust allows it)"
            )
            continue
        if not isinstance(entry, dict):
            raise ConfigError(f"{shown}: {key}: expected a table with command = [...]")
        command = entry.get("command")
        if (
            not isinstance(command, list)
            or not command
            or not all(isinstance(part, str) and part for part in command)
        ):
            raise ConfigError(
                f"{shown}: {key}.command: expected a non-empty list of strings, got {command!r}"
            )
        env = entry.get("env", {})
        if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()
        ):
            raise ConfigError(f"{shown}: {key}.env: expected a table of string values")
        for extra in entry:
            if extra not in ("command", "env"):
                warnings.append(_unknown(shown, f"{key}.{extra}", (f"{key}.command", f"{key}.env")))
        found.append(AgentCommand(name, tuple(command), tuple(sorted(env.items())), shown))
    return found


def _stricter_or_equal(key: str, new: Any, current: Any) -> bool:
    if key == "resolver":
        return RESOLVER_STRICTNESS.index(new) <= RESOLVER_STRICTNESS.index(current)
    if key in ("max_turns", "timeout", "plugin_timeout"):
        return bool(new <= current)
    return True


def _apply_layer(
    data: Mapping[str, Any],
    shown: str,
    values: dict[str, Any],
    origins: dict[str, str],
    agents: dict[str, AgentCommand],
    warnings: list[str],
    *,
    restricted: bool,
) -> None:
    for key, raw in data.items():
        if key == "agents":
            for agent in _agents(raw, shown, warnings, restricted):
                agents[agent.name] = agent
            continue
        if key in ("hooks", "git", "checks", "check_runner", "notify", "queue"):
            # read by hook_settings, git_settings, notify_settings, redline.checks.config and
            # redline.teamqueue, each at its own time and with its own trust rule
            continue
        check = CHECKS.get(key)
        if check is None:
            warnings.append(_unknown(shown, key, KNOWN_KEYS))
            continue
        try:
            value = check(raw)
        except ValueError as exc:
            raise ConfigError(f"{shown}: {key}: {exc}") from None
        if restricted:
            why = UNTRUSTED_NEVER.get(key)
            if why is None and key == "model" and value.startswith("scripted:"):
                why = "a scripted plan from the repository would act in your name"
            if why is None and not _stricter_or_equal(key, value, values[key]):
                why = f"it may only make things stricter than {values[key]!r}"
            if why is not None:
                warnings.append(
                    f"{shown}: {key} skipped: this workspace is not trusted and {why} "
                    "(redline trust allows it)"
                )
                continue
        values[key] = value
        origins[key] = shown


def load_settings(
    root: Path | None,
    *,
    command_line: Mapping[str, Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
    trusted: bool | None = None,
) -> Settings:
    """Merge defaults < user config < workspace config < ``$REDLINE_MODEL`` < command line.

    ``defaults`` overrides built-in defaults for one command (e.g. ``exec``'s resolver is
    ``agent``); ``command_line`` holds the options given, ``None`` meaning not given.
    ``trusted`` says whether the workspace's own file may loosen anything; ``None`` asks
    the trust store. In an untrusted workspace, ``base_url``, ``api_key_env``, a scripted
    ``model``, ``[agents.*]``, a less strict ``resolver`` and higher ``max_turns`` or
    ``timeout`` are skipped with a warning naming the file and key.

    Raises :class:`ConfigError` (naming the file, and the line or key) for a file that
    cannot be read, is not TOML, or holds a value of the wrong type.
    """
    values: dict[str, Any] = dict(DEFAULTS)
    for key, value in (defaults or {}).items():
        if key not in DEFAULTS:
            raise KeyError(f"no setting {key!r}")
        values[key] = value
    origins = dict.fromkeys(values, "default")
    agents: dict[str, AgentCommand] = {}
    warnings: list[str] = []

    data, shown = read_user_config()
    _apply_layer(data, shown, values, origins, agents, warnings, restricted=False)

    workspace_trusted = False
    if root is not None:
        data, shown = read_workspace_config(root)
        if trusted is None:
            from redline.trust import is_trusted

            trusted = is_trusted(root)
        workspace_trusted = bool(trusted)
        if data:
            _apply_layer(
                data, shown, values, origins, agents, warnings, restricted=not workspace_trusted
            )

    env_model = os.environ.get(MODEL_ENV, "").strip()
    if env_model:
        values["model"] = env_model
        origins["model"] = f"${MODEL_ENV}"
    env_timeout = os.environ.get(PLUGIN_TIMEOUT_ENV, "").strip()
    if env_timeout:
        try:
            values["plugin_timeout"] = _timeout(_seconds(env_timeout))
        except ValueError as exc:
            raise ConfigError(f"${PLUGIN_TIMEOUT_ENV}: {exc}") from None
        origins["plugin_timeout"] = f"${PLUGIN_TIMEOUT_ENV}"
    for key, value in (command_line or {}).items():
        if key not in DEFAULTS:
            raise KeyError(f"no setting {key!r}")
        if value is not None:
            values[key] = value
            origins[key] = "command line"
    return Settings(
        model=values["model"],
        base_url=values["base_url"],
        api_key_env=values["api_key_env"],
        resolver=values["resolver"],
        max_turns=values["max_turns"],
        timeout=values["timeout"],
        plugin_timeout=values["plugin_timeout"],
        agents=tuple(agents.values()),
        workspace_trusted=workspace_trusted,
        warnings=tuple(warnings),
        origins=origins,
    )


def load_config(root: Path) -> dict[str, Any]:
    """The merged settings as a plain table (kept for older callers; prefer load_settings)."""
    settings = load_settings(root)
    return {key: getattr(settings, key) for key in DEFAULTS}


# -- finding the workspace ------------------------------------------------------------
#: ``[hooks] wait_seconds``: how long ``redline hook`` waits for a decision by default.
HOOK_WAIT_SECONDS = 600.0
MAX_HOOK_WAIT_SECONDS = 24 * 3600.0


@dataclass(frozen=True)
class HookConfig:
    """The ``[hooks]`` table: how long a hook waits, and whether shell calls are reviewed."""

    wait_seconds: float = HOOK_WAIT_SECONDS
    review_shell: bool = False


def _hooks_table(data: Mapping[str, Any], shown: str, found: dict[str, Any]) -> None:
    table = data.get("hooks")
    if table is None:
        return
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: hooks: expected a [hooks] table")
    for key, value in table.items():
        if key == "wait_seconds":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{shown}: hooks.wait_seconds: expected a number of seconds")
            if not (0 < value <= MAX_HOOK_WAIT_SECONDS) or math.isnan(value):
                raise ConfigError(
                    f"{shown}: hooks.wait_seconds: must be above 0 and at most "
                    f"{MAX_HOOK_WAIT_SECONDS:g} seconds"
                )
            found[key] = float(value)
        elif key == "review_shell":
            if not isinstance(value, bool):
                raise ConfigError(f"{shown}: hooks.review_shell: expected true or false")
            found[key] = value
        else:
            raise ConfigError(
                f"{shown}: hooks.{key}: unknown setting (expected wait_seconds or review_shell)"
            )


def hook_settings(root: Path | None) -> HookConfig:
    """``[hooks]`` from the user's config, then the workspace's (the later wins).

    A workspace file may only make review stricter when the workspace is not trusted:
    ``review_shell = true`` always counts; ``review_shell = false`` and ``wait_seconds``
    (a wait too short for anyone to answer) count only in a trusted workspace.
    Raises :class:`ConfigError` naming the file and key.
    """
    found: dict[str, Any] = {}
    data, shown = read_user_config()
    _hooks_table(data, shown, found)
    if root is not None:
        data, shown = read_workspace_config(root)
        workspace: dict[str, Any] = {}
        _hooks_table(data, shown, workspace)
        if workspace:
            from redline.trust import is_trusted

            if is_trusted(root):
                found.update(workspace)
            elif workspace.get("review_shell") is True:
                found["review_shell"] = True
    return HookConfig(
        wait_seconds=found.get("wait_seconds", HOOK_WAIT_SECONDS),
        review_shell=found.get("review_shell", False),
    )


#: ``[git] on_apply`` values, strictest (doing the least in the person's name) first.
GIT_ON_APPLY: tuple[str, ...] = ("none", "stage", "commit")
#: ``[git] trailers`` values: redline's own, the kernel's convention, or both.
GIT_TRAILERS: tuple[str, ...] = ("redline", "kernel", "both")
_GIT_KEYS = ("on_apply", "signoff", "trailers")


@dataclass(frozen=True)
class GitConfig:
    """The ``[git]`` table: what an apply does in git (``on_apply``), and where it was set;
    ``signoff``: add the local git user's ``Signed-off-by``; ``trailers``: which set."""

    on_apply: str = "none"
    origin: str = "default"
    warnings: tuple[str, ...] = ()
    signoff: bool = False
    trailers: str = "both"


def _git_table(data: Mapping[str, Any], shown: str) -> dict[str, Any]:
    table = data.get("git")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: git: expected a [git] table")
    for key in table:
        if key not in _GIT_KEYS:
            raise ConfigError(
                f"{shown}: git.{key}: unknown setting (expected one of {', '.join(_GIT_KEYS)})"
            )
    value = table.get("on_apply")
    if value is not None and value not in GIT_ON_APPLY:
        raise ConfigError(
            f"{shown}: git.on_apply: expected one of {', '.join(GIT_ON_APPLY)}, got {value!r}"
        )
    if "signoff" in table and not isinstance(table["signoff"], bool):
        raise ConfigError(f"{shown}: git.signoff: expected true or false")
    if "trailers" in table and table["trailers"] not in GIT_TRAILERS:
        raise ConfigError(
            f"{shown}: git.trailers: expected one of {', '.join(GIT_TRAILERS)}, "
            f"got {table['trailers']!r}"
        )
    return dict(table)


def git_settings(root: Path | None) -> GitConfig:
    """``[git]`` from the user's config, then the workspace's (read at each apply).

    An untrusted workspace's file may only make ``on_apply`` stricter (``commit`` →
    ``stage`` → ``none``) and may not turn ``signoff`` on: a repository may not make
    redline stage, commit or sign off in the person's name. Its ``trailers`` always
    counts (a project chooses its convention). Raises :class:`ConfigError` naming the file
    and key.
    """
    value, origin = "none", "default"
    data, shown = read_user_config()
    mine = _git_table(data, shown)
    if "on_apply" in mine:
        value, origin = str(mine["on_apply"]), shown
    signoff = bool(mine.get("signoff", False))
    trailers = str(mine.get("trailers", "both"))
    warnings: list[str] = []
    if root is not None:
        data, shown = read_workspace_config(root)
        theirs = _git_table(data, shown)
        if theirs:
            from redline.trust import is_trusted

            trusted = is_trusted(root)
            found = theirs.get("on_apply")
            if found is None:
                pass
            elif trusted or GIT_ON_APPLY.index(found) <= GIT_ON_APPLY.index(value):
                value, origin = str(found), shown
            else:
                warnings.append(
                    f"{shown}: git.on_apply skipped: this workspace is not trusted and it may "
                    f"only make things stricter than {value!r} (redline trust allows it)"
                )
            if "signoff" in theirs and (trusted or not theirs["signoff"]):
                signoff = bool(theirs["signoff"])
            elif "signoff" in theirs:
                warnings.append(
                    f"{shown}: git.signoff skipped: this workspace is not trusted "
                    "(redline trust allows it)"
                )
            trailers = str(theirs.get("trailers", trailers))
    return GitConfig(value, origin, tuple(warnings), signoff, trailers)


def find_workspace_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` (itself included) holding ``.redline`` or ``.git``.

    As git finds its top: a folder (or a symlink) named ``.redline``, or ``.git`` as a
    folder or a file (worktrees and submodules). Without one, ``start`` itself.
    """
    here = Path(start).expanduser().absolute()
    for folder in (here, *here.parents):
        try:
            marker = os.lstat(folder / ".redline")
        except OSError:
            pass
        else:
            if stat.S_ISDIR(marker.st_mode) or stat.S_ISLNK(marker.st_mode):
                return folder
        try:
            git = os.lstat(folder / ".git")
        except OSError:
            continue
        if stat.S_ISDIR(git.st_mode) or stat.S_ISREG(git.st_mode):
            return folder
    return here


# -- [notify] ---------------------------------------------------------------------------
#: ``[notify] desktop``: which escape sequence asks the terminal for a desktop notification.
NOTIFY_DESKTOP: tuple[str, ...] = ("auto", "osc9", "osc777", "off")
NOTIFY_TIMEOUT_SECONDS = 10.0
MAX_NOTIFY_TIMEOUT_SECONDS = 600.0


@dataclass(frozen=True)
class NotifyConfig:
    """The ``[notify]`` table: how the dashboard says that an action arrived unseen.

    ``bell`` rings the terminal bell; ``desktop`` picks the desktop-notification escape
    (``auto`` chooses by the terminal's name); ``command`` is the user's argv run (never
    through a shell) with ``{id}``, ``{label}`` and ``{source}`` filled in, stopped after
    ``timeout`` seconds. ``origin`` names the file the command came from; ``warnings`` say
    what was skipped (an untrusted workspace's table).
    """

    bell: bool = True
    desktop: str = "auto"
    command: tuple[str, ...] = ()
    timeout: float = NOTIFY_TIMEOUT_SECONDS
    origin: str = "default"
    warnings: tuple[str, ...] = ()


def _notify_table(data: Mapping[str, Any], shown: str) -> dict[str, Any]:
    table = data.get("notify")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: notify: expected a [notify] table")
    found: dict[str, Any] = {}
    for key, value in table.items():
        if key == "bell":
            if not isinstance(value, bool):
                raise ConfigError(f"{shown}: notify.bell: expected true or false, got {value!r}")
            found[key] = value
        elif key == "desktop":
            if value not in NOTIFY_DESKTOP:
                raise ConfigError(
                    f"{shown}: notify.desktop: expected one of {', '.join(NOTIFY_DESKTOP)}, "
                    f"got {value!r}"
                )
            found[key] = value
        elif key == "command":
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(part, str) and part for part in value)
                or any("\0" in part for part in value)
            ):
                raise ConfigError(
                    f"{shown}: notify.command: expected a non-empty list of non-empty strings "
                    f'(the program and its arguments, e.g. ["notify-send", "{{label}}"]), '
                    f"got {value!r}"
                )
            found[key] = tuple(value)
        elif key == "timeout":
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 0 < value <= MAX_NOTIFY_TIMEOUT_SECONDS
            ):
                raise ConfigError(
                    f"{shown}: notify.timeout: expected a number of seconds above 0 and at "
                    f"most {MAX_NOTIFY_TIMEOUT_SECONDS:g}, got {value!r}"
                )
            found[key] = float(value)
        else:
            raise ConfigError(
                f"{shown}: notify.{key}: unknown setting "
                "(expected bell, desktop, command or timeout)"
            )
    return found


def notify_settings(root: Path | None) -> NotifyConfig:
    """``[notify]`` from the user's config, then the workspace's (the later wins per key).

    A workspace's ``[notify]`` counts only when the workspace is trusted: its ``command``
    would run a program the repository chose each time an action arrives. An untrusted
    workspace's table is ignored as a whole, with a warning naming the file.
    Raises :class:`ConfigError` naming the file and key.
    """
    data, shown = read_user_config()
    found = _notify_table(data, shown)
    origin = shown if "command" in found else "default"
    warnings: list[str] = []
    if root is not None:
        data, shown = read_workspace_config(root)
        workspace = _notify_table(data, shown)
        if workspace:
            from redline.trust import is_trusted

            if is_trusted(root):
                found.update(workspace)
                if "command" in workspace:
                    origin = shown
            else:
                warnings.append(
                    f"{shown}: notify ignored: this workspace is not trusted, and its command "
                    "would run a program the repository chose (redline trust allows it)"
                )
    return NotifyConfig(
        bell=found.get("bell", True),
        desktop=found.get("desktop", "auto"),
        command=found.get("command", ()),
        timeout=found.get("timeout", NOTIFY_TIMEOUT_SECONDS),
        origin=origin,
        warnings=tuple(warnings),
    )
