"""Real git repositories for tests, with git's environment isolated from the machine's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

LOCATING = (
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)


def isolate_git(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """No global or system git config, a private HOME, no inherited repository variables."""
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in LOCATING:
        monkeypatch.delenv(name, raising=False)


def git(root: Path, *args: str, input: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        input=input,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def init_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at ``root`` with ``files`` committed (user set per repository)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Rita Reviewer")
    git(root, "config", "user.email", "rita@example.invalid")
    git(root, "config", "commit.gpgsign", "false")
    for name, text in (files or {}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if files:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
    return root


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def write_config(config_dir: Path, text: str) -> None:
    (config_dir / "config.toml").write_text(text)
