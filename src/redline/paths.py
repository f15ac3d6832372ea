"""Where redline keeps a user's files: the small path helpers every layer may use."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "STATE_HOME_ENV",
    "USER_CONFIG_ENV",
    "UserDirError",
    "user_cache_dir",
    "user_config_dir",
    "user_home",
    "user_state_dir",
    "user_state_dir_text",
]

USER_CONFIG_ENV = "REDLINE_CONFIG_DIR"
STATE_HOME_ENV = "XDG_STATE_HOME"


class UserDirError(OSError):
    """The user's home folder cannot be found (no ``HOME`` and no passwd entry)."""


def user_config_dir() -> Path:
    """``$REDLINE_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/redline``, else ``~/.config/redline``."""
    from pathlib import Path

    explicit = os.environ.get(USER_CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "redline"


def user_home() -> Path:
    """``$HOME`` when it is an absolute path, else this user's home from the passwd database.

    A client may start redline with a bare environment (the MCP SDK passes almost nothing
    unless told to); the passwd entry of the real user id still names the same home.
    """
    from pathlib import Path

    return Path(_home_text())


def _home_text() -> str:
    home = os.environ.get("HOME", "")
    if os.path.isabs(home):
        return home
    import pwd

    try:
        entry = pwd.getpwuid(os.getuid())
    except KeyError:
        raise UserDirError(
            f"cannot find your home folder: HOME is not set and user id {os.getuid()} has no "
            "passwd entry; set HOME or XDG_STATE_HOME"
        ) from None
    if not os.path.isabs(entry.pw_dir):
        raise UserDirError(
            f"cannot find your home folder: HOME is not set and the passwd entry of user id "
            f"{os.getuid()} names no absolute home; set HOME or XDG_STATE_HOME"
        )
    return str(entry.pw_dir)


def user_state_dir() -> Path:
    """redline's per-user state (the state key): ``$XDG_STATE_HOME/redline``, else
    ``~/.local/state/redline``. Never depends on ``REDLINE_CONFIG_DIR`` or the workspace.

    A relative ``XDG_STATE_HOME`` is ignored, as the XDG base directory spec says.
    """
    from pathlib import Path

    return Path(user_state_dir_text())


def user_state_dir_text() -> str:
    """:func:`user_state_dir` as a string, without importing ``pathlib`` (a hook call that
    only looks at its session's outbox, docs/performance.md)."""
    xdg = os.environ.get(STATE_HOME_ENV, "")
    base = xdg if os.path.isabs(xdg) else os.path.join(_home_text(), ".local", "state")
    return os.path.join(base, "redline")


def user_cache_dir() -> Path:
    """redline's per-user cache (check scratch trees): ``$XDG_CACHE_HOME/redline``, else
    ``~/.cache/redline``. A relative ``XDG_CACHE_HOME`` is ignored, as the XDG spec says."""
    from pathlib import Path

    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else user_home() / ".cache"
    return base / "redline"
