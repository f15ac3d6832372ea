"""Where redline keeps its own state: the user config directory and workspace config."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

USER_CONFIG_ENV = "REDLINE_CONFIG_DIR"


def user_config_dir() -> Path:
    """``$REDLINE_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/redline``, else ``~/.config/redline``."""
    explicit = os.environ.get(USER_CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "redline"


def workspace_state_dir(root: Path) -> Path:
    return root / ".redline"


class ConfigError(ValueError):
    """A config file exists but cannot be read."""


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None


def load_config(root: Path) -> dict[str, Any]:
    """Workspace ``.redline/config.toml`` over the user's ``config.toml``."""
    merged = _read_toml(user_config_dir() / "config.toml")
    merged.update(_read_toml(workspace_state_dir(root) / "config.toml"))
    return merged
