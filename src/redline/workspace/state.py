"""The workspace's private state folder, ``.redline/``."""

from __future__ import annotations

import os
from pathlib import Path

STATE_DIR_NAME = ".redline"
JOURNAL_DIR_NAME = "journal"
ASIDE_DIR_NAME = "journal-aside"
GITIGNORE_TEXT = "*\n"


def state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


def journal_dir(root: Path) -> Path:
    return state_dir(root) / JOURNAL_DIR_NAME


def aside_dir(root: Path) -> Path:
    return state_dir(root) / ASIDE_DIR_NAME


def ensure_state_dir(root: Path) -> Path:
    """Create ``.redline/`` with a ``.gitignore`` of ``*`` so it never lands in commits."""
    folder = state_dir(root)
    folder.mkdir(exist_ok=True)
    gitignore = folder / ".gitignore"
    if not gitignore.exists():
        # Written beside then moved, so a crash never leaves an empty .gitignore behind.
        tmp = folder / f".gitignore.{os.getpid()}.tmp"
        tmp.write_text(GITIGNORE_TEXT, encoding="utf-8")
        os.replace(tmp, gitignore)
    return folder
