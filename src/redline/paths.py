"""Where redline keeps a user's files: the small path helpers every layer may use."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["USER_CONFIG_ENV", "user_config_dir"]

USER_CONFIG_ENV = "REDLINE_CONFIG_DIR"


def user_config_dir() -> Path:
    """``$REDLINE_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/redline``, else ``~/.config/redline``."""
    explicit = os.environ.get(USER_CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "redline"
