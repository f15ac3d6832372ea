"""The few git calls redline makes: one subprocess each, no shell, NUL-separated output.

Generic on purpose (other features reuse it): it only asks git questions and never writes
into a repository (no index refresh, no objects): ``GIT_OPTIONAL_LOCKS=0`` keeps even
``git status``-style commands from taking the index lock.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["GitError", "git", "is_work_tree", "list_files"]

#: Seconds a single git call may take before it counts as failed.
GIT_TIMEOUT = 30.0


class GitError(RuntimeError):
    """git is missing, or a git call failed; the message says which and why."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.pop("GIT_INDEX_FILE", None)
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    return env


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    """Run ``git -C root ARGS`` and return its standard output (GitError on failure)."""
    exe = shutil.which("git")
    if exe is None:
        raise GitError("git is not installed (not found on PATH)")
    merged = _env()
    if env:
        merged.update(env)
    try:
        done = subprocess.run(
            [exe, "-C", str(root), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=merged,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} in {root} took longer than {GIT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        cause = detail[-1] if detail else f"exit status {done.returncode}"
        raise GitError(f"git {args[0]} in {root} failed: {cause}")
    return done.stdout


def is_work_tree(root: Path) -> bool:
    """True when ``root`` is the top of a git working tree (False without git)."""
    try:
        top = git(root, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape")
    except GitError:
        return False
    try:
        return Path(top.strip()).resolve() == Path(root).resolve()
    except OSError:
        return False


def list_files(root: Path, *, untracked: bool = True) -> list[str]:
    """The working tree's files as git sees them, root-relative with ``/``: tracked files,
    and with ``untracked`` also untracked ones that ``.gitignore`` does not exclude.

    Names that are not UTF-8 come back with surrogate escapes (``os.fsdecode``)."""
    args = ["ls-files", "-z", "--cached"]
    if untracked:
        args += ["--others", "--exclude-standard"]
    out = git(root, *args)
    names = dict.fromkeys(os.fsdecode(part) for part in out.split(b"\0") if part)
    return list(names)
