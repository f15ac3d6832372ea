"""``redline demo`` removes its temporary copy when it ends, unless ``--keep`` is given."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from redline.cli import main


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The dashboard replaced by a stand-in that records the workspace and quits."""
    seen: list[Path] = []

    def fake_launch(session: Any, *, prompt: str | None = None, notices: Any = ()) -> int:
        found = re.search(r"copied to (\S+);", " ".join(notices))
        assert found, notices
        seen.append(Path(found.group(1)))
        assert (seen[-1] / "inventory").is_dir()  # the copy is there while it runs
        session.close()
        return 0

    monkeypatch.setattr("redline.commands.dashboard.launch", fake_launch)
    return seen


def copies(root: Path) -> list[Path]:
    return sorted(root.glob("redline-demo-*"))


def test_the_temporary_copy_is_removed_on_quit(
    temp_root: Path, launched: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo"]) == 0
    assert launched and launched[0].is_relative_to(temp_root)
    assert copies(temp_root) == []
    assert "kept" not in capsys.readouterr().err


def test_the_copy_is_removed_when_the_demo_is_interrupted(
    temp_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(session: Any, **_: Any) -> int:
        session.close()
        raise KeyboardInterrupt

    monkeypatch.setattr("redline.commands.dashboard.launch", interrupted)
    assert main(["demo"]) == 130
    assert copies(temp_root) == []


def test_keep_keeps_the_copy_and_prints_where(
    temp_root: Path, launched: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--keep"]) == 0
    [copy] = copies(temp_root)
    workspace = copy / "inventory"
    assert launched == [workspace]
    assert (workspace / "inventory" / "store.py").is_file()
    assert f"the sample project is kept in {workspace}" in capsys.readouterr().err


def test_keep_path_copies_there_and_keeps_it(
    tmp_path: Path, temp_root: Path, launched: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "mine"
    assert main(["demo", "--keep", str(target)]) == 0
    assert (target / "inventory" / "store.py").is_file()
    assert copies(temp_root) == []
    assert f"kept in {target}" in capsys.readouterr().err


def test_headless_run_removes_or_keeps_its_changes(
    temp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--headless", "--no-wait"]) == 0
    err = capsys.readouterr().err
    assert "removed when the demo ends, and not remembered in `redline workspaces`" in err
    assert copies(temp_root) == []
    from redline.workspace.known import read_all

    assert read_all() == []  # the throwaway copy is not a known workspace
    assert main(["demo", "--headless", "--no-wait", "--keep"]) == 0
    [copy] = copies(temp_root)
    assert [k.path for k in read_all()] == [str((copy / "inventory").resolve())]
    assert (copy / "inventory" / "CHANGELOG.md").is_file()  # the agent resolver applied it
    assert "kept in" in capsys.readouterr().err


def test_a_non_empty_keep_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x", encoding="utf-8")
    assert main(["demo", "--keep", str(tmp_path / "full")]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
