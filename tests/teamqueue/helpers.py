"""Workspaces with proposals in their local queue, and running the CLI in-process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, QueueRecord, Source, WorkspaceQueue


def make_workspace(path: Path, *, git: bool = False, text: str = "one\n") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "a.txt").write_text(text)
    if git:
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
        env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
        subprocess.run(["git", "init", "-q", str(path)], check=True)
        subprocess.run(["git", "-C", str(path), "add", "a.txt"], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(path),
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e.invalid",
                "commit",
                "-qm",
                "root",
            ],
            check=True,
        )
    return path


def propose(root: Path, name: str = "a.txt", add: str = "more\n") -> QueueRecord:
    old = (root / name).read_text()
    preview = Preview([FileModify(name, sha256_bytes(old.encode()), old, old + add)])
    with WorkspaceQueue(root) as queue:
        return queue.push(
            ActionDraft(
                label=f"Edit {name}",
                source=Source.current("exec", "test", "s1"),
                source_tool_name="edit",
                preview=preview,
            )
        )


def cli(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capfd.readouterr()
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err
