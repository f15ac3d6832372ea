from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.workspace.paths import iter_workspace_files


@pytest.mark.parametrize("in_git", [False, True])
def test_listing_skips_symlinks_outside_and_special_files(tmp_path: Path, in_git: bool) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "secret.py"
    outside.write_text("print('outside')\n", encoding="utf-8")
    (root / "inside.py").write_text("x = 1\n", encoding="utf-8")
    (root / "out.py").symlink_to(outside)
    (root / "alias.py").symlink_to(root / "inside.py")
    os.mkfifo(root / "pipe.py")
    if in_git:
        import subprocess

        subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert list(iter_workspace_files(root)) == ["alias.py", "inside.py"]
