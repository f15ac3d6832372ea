"""Where the e2e tests find the agents' real CLIs (installed by scripts/install-agents.sh)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

AGENTS_DIR_ENV = "REDLINE_AGENTS_DIR"
DEFAULT_AGENTS_DIR = Path("~/.cache/redline-ci/agents")


def agents_dir() -> Path:
    return Path(os.environ.get(AGENTS_DIR_ENV) or DEFAULT_AGENTS_DIR).expanduser()


def agent_binary(name: str) -> str:
    """The agent's binary; skips (a failure under ``CI=true``) when it is not installed."""
    binary = agents_dir() / "node_modules" / ".bin" / name
    if binary.exists() and os.access(binary, os.X_OK):
        return str(binary)
    reason = (
        f"{name} is not installed in {binary.parent} (run scripts/install-agents.sh, or set "
        f"${AGENTS_DIR_ENV})"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason)
    pytest.skip(reason)
