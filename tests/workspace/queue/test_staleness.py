"""The listing's staleness check confines each folder once (issue 29: 10,000 files) and
answers exactly as confining every file on its own did."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.workspace import fsutil, paths
from redline.workspace.queue import staleness


def _one_by_one(root: Path, rel: str) -> str | None:
    """The check as it was: every path through the full confinement rules."""
    try:
        target = paths.resolve_inside(root, rel)
    except paths.ConfinementError:
        return ""
    current = fsutil.read_current(target)
    if current.kind == "missing":
        return None
    return (current.sha256 or "") if current.kind == "file" else ""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("secret\n")
    for folder in ("src/pkg", ".git/hooks", "venv", "node_modules", "deep/a/b"):
        (root / folder).mkdir(parents=True)
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "src" / "app.py").write_text("a = 1\n")
    (root / "src" / "pkg" / "mod.py").write_text("b = 2\n")
    (root / "deep" / "a" / "b" / "c.py").write_text("c = 3\n")
    (root / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    (root / "venv" / "lib.py").write_text("v\n")
    (root / "top.py").write_text("top\n")
    os.symlink("src", root / "tests")  # a symlinked folder inside the workspace
    os.symlink(outside, root / "escape")  # ... and one leading outside
    os.symlink(".git", root / "gitlink")  # ... and one into a protected folder
    os.symlink(outside / "secret.py", root / "src" / "leak.py")  # a leaf symlink
    os.symlink("app.py", root / "src" / "alias.py")
    (root / "src" / "folder.py").mkdir()  # a folder where a file was
    os.mkfifo(root / "src" / "pipe.py")
    return root


RELS = [
    "src/app.py",
    "src/pkg/mod.py",
    "deep/a/b/c.py",
    "top.py",
    "tests/app.py",
    "tests/pkg/mod.py",
    "escape/secret.py",
    "gitlink/hooks/pre-commit",
    ".git/hooks/pre-commit",
    "src/.git",
    "src/.redline",
    "venv/lib.py",
    "node_modules/x.js",
    "src/leak.py",
    "src/alias.py",
    "src/folder.py",
    "src/pipe.py",
    "src/missing.py",
    "missing/dir/x.py",
    "src/./app.py",
    "src/pkg/../app.py",
    "../outside/secret.py",
    "src/../../outside/secret.py",
    "src\\app.py",
]


@pytest.mark.parametrize("rel", RELS)
def test_each_path_reads_as_the_full_rules_say(tree: Path, rel: str) -> None:
    cache: dict[str, str | None] = {}
    assert staleness._sha(tree, rel, cache) == _one_by_one(tree, rel)


def test_a_folder_is_confined_once_per_listing(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for number in range(50):
        (tree / "src" / f"f{number}.py").write_text(f"{number}\n")
    calls: list[str] = []
    original = paths.resolve_inside

    def counting(root: Path, rel: str | Path) -> Path:
        calls.append(str(rel))
        return original(root, rel)

    monkeypatch.setattr(paths, "resolve_inside", counting)
    cache: dict[str, str | None] = {}
    for number in range(50):
        change = {"kind": "modify", "path": f"src/f{number}.py", "old_sha256": "0" * 64}
        reasons = staleness.quick_stale(tree, {"changes": [change]}, cache)
        assert reasons == [f"src/f{number}.py (modified since the preview)"]
    assert calls == ["src"]


def test_top_level_files_share_the_root_check(tree: Path) -> None:
    cache: dict[str, str | None] = {}
    assert staleness._sha(tree, "top.py", cache) == _one_by_one(tree, "top.py")
    assert cache["\0."] == str(tree.resolve())
