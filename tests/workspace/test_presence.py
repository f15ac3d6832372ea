"""Issue 46: presence files of dashboards and followers, live and dead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.presence import present, user_folder, watched, watchers, workspace_folder
from redline.workspace.queue import WorkspaceQueue

# Holds a presence of argv[2] in argv[1] ("-" for every workspace) until stdin closes.
_HOLD = """
import sys
from pathlib import Path
from redline.workspace.presence import present
root = None if sys.argv[1] == "-" else Path(sys.argv[1])
with present(root, sys.argv[2]) as file:
    print(file, flush=True)
    sys.stdin.read()
"""


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    with WorkspaceQueue(root) as queue:
        queue.list()  # opens its folders: the workspace is known, with a queue
    return root


def _hold(root: Path | None, kind: str) -> tuple[subprocess.Popen[str], Path]:
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(root) if root else "-", kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_a_dashboard_in_another_process_watches_until_it_ends(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    assert not watched(root)
    process, file = _hold(root, "dashboard")
    try:
        assert file == workspace_folder(root) / f"{process.pid}.json"
        assert watched(root)
        [live] = watchers(root)
        assert (live.pid, live.kind) == (process.pid, "dashboard")
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait()
    assert not file.exists()  # removed on the way out
    assert not watched(root)


def test_a_killed_dashboard_is_ignored_and_listing_removes_its_file(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    process, file = _hold(root, "dashboard")
    process.kill()
    process.wait()
    assert file.exists()  # killed: it could not remove it
    assert not watched(root)
    assert watchers(root) == []
    assert file.exists()  # reading alone never removes anything
    assert watchers(root, prune=True) == []
    assert not file.exists()


def test_a_reused_pid_with_another_start_time_is_not_alive(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    folder = workspace_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    (folder / f"{pid}.json").write_text(
        json.dumps({"pid": pid, "start_time": 1, "kind": "dashboard", "since": 0.0})
    )
    assert not watched(root)


def test_an_all_workspaces_dashboard_watches_every_workspace(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with present(None, "all") as file:
        assert file is not None and file.parent == user_folder()
        assert watched(root)
        assert [p.kind for p in watchers(root)] == ["all"]
    assert not watched(root)


def test_kinds_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown presence kind"), present(None, "x"):  # type: ignore[arg-type]
        pass
    with pytest.raises(ValueError, match="no workspace"), present(None, "dashboard"):
        pass


def test_workspaces_list_shows_watched_by_live_ones_only(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = _workspace(tmp_path)
    process, _file = _hold(root, "follower")
    dead, dead_file = _hold(root, "dashboard")
    dead.kill()
    dead.wait()
    try:
        assert main(["workspaces", "list", "--json"]) == 0
        data = json.loads(capfd.readouterr().out)
        [row] = [w for w in data["workspaces"] if w["path"] == str(root.resolve())]
        assert [(w["pid"], w["kind"]) for w in row["watched_by"]] == [(process.pid, "follower")]
        assert not dead_file.exists()
        assert main(["workspaces", "list"]) == 0
        text = capfd.readouterr().out
        assert f"watched by follower (pid {process.pid})" in text
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait()


def test_the_dashboard_command_is_present_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redline.commands import dashboard

    root = _workspace(tmp_path)
    seen: list[bool] = []

    def fake_run(_args: object, at: Path) -> int:
        seen.append(watched(at))
        return 0

    monkeypatch.setattr(dashboard, "_run", fake_run)
    assert main(["-C", str(root)]) == 0
    assert seen == [True]
    assert not watched(root)
    assert list(workspace_folder(root).iterdir()) == []


def test_a_team_dashboard_is_present_in_the_workspace_it_was_started_in(tmp_path: Path) -> None:
    import argparse

    from redline.commands.dashboard import _team_presence

    root = _workspace(tmp_path)
    with _team_presence(argparse.Namespace(cwd=str(root))):
        assert [p.kind for p in watchers(root)] == ["team"]
    bare = tmp_path / "no-queue"
    bare.mkdir()
    with _team_presence(argparse.Namespace(cwd=str(bare))):
        assert not (bare / ".redline").exists()  # never creates a queue folder
