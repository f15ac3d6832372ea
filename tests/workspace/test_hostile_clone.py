"""A cloned repository with a malicious ``.redline/`` run through every command.

Three hostile layouts: symlinks inside ``.redline/`` (lock, journal, sessions, aside)
leading to the user's files and folders; ``.redline`` itself a symlink; forged journal
entries whose rollback or undo would delete, move or chmod files outside. Every command
(``ast-edit`` search and apply, ``exec`` on the scripted provider, ``undo``, ``undo
--list``, ``tools``, the dashboard start) must leave every file outside the workspace
unchanged and end with a clear message, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from redline.workspace.preview import sha256_bytes

from .test_hostile_state import forge_entry, tree


def _outside(tmp_path: Path) -> Path:
    out = tmp_path / "home"
    out.mkdir()
    (out / "precious.txt").write_text("the user's data\n")
    (out / "journal").mkdir()
    (out / "sessions").mkdir()
    (out / "aside").mkdir()
    (out / "state").mkdir()
    (out / "empty").mkdir()
    os.chmod(out / "precious.txt", 0o600)
    return out


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "clone"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    return ws


def symlinks_inside(ws: Path, out: Path) -> None:
    state = ws / ".redline"
    state.mkdir()
    os.symlink(out / "precious.txt", state / "lock")
    os.symlink(out / "journal", state / "journal")
    os.symlink(out / "sessions", state / "sessions")
    os.symlink(out / "aside", state / "journal-aside")


def symlinked_state(ws: Path, out: Path) -> None:
    os.symlink(out / "state", ws / ".redline")


def forged_journal(ws: Path, out: Path) -> None:
    rel = os.path.relpath(out, ws)
    sha = sha256_bytes(b"x = 1\n")
    forge_entry(
        ws,
        "000001",
        {
            "kind": "apply",
            "label": "unfinished",
            "files": ["app.py"],
            "ops": [
                {"path": "app.py", "before": None, "after": {"sha256": sha}},
                {
                    "path": f"{rel}/precious.txt",
                    "before": {"sha256": sha, "mode": 0o6777},
                    "after": None,
                },
            ],
            "steps": [{"do": "write", "path": "app.py", "temp": f"{rel}/precious.txt"}],
            "created_dirs": [f"{rel}/empty"],
        },
        {sha: b"x = 1\n"},
    )
    forge_entry(
        ws,
        "000002",
        {
            "kind": "apply",
            "label": "complete",
            "files": ["app.py"],
            "ops": [
                {"path": f"{rel}/stolen.py", "before": {"sha256": sha}, "after": None},
                {"path": "app.py", "before": None, "after": {"sha256": sha}},
            ],
            "steps": [{"do": "rename", "path": "app.py", "source": f"{rel}/stolen.py"}],
            "created_dirs": [],
        },
        {sha: b"x = 1\n"},
        done=True,
    )


LAYOUTS = {
    "symlinks-inside": symlinks_inside,
    "symlinked-state": symlinked_state,
    "forged-journal": forged_journal,
}


def _plan(tmp_path: Path) -> str:
    path = tmp_path / "plan.json"
    steps = [
        {"call": [{"tool": "write", "args": {"path": "notes.md", "content": "# Notes\n"}}]},
        {"resolve": "apply", "reason": "wanted"},
        {"say": "done"},
    ]
    path.write_text(json.dumps({"name": "hostile", "steps": steps}))
    return f"scripted:{path}"


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redline", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_command_leaves_outside_files_alone(
    tmp_path: Path, layout: str, isolated_user_config: Path
) -> None:
    out = _outside(tmp_path)
    ws = _workspace(tmp_path)
    LAYOUTS[layout](ws, out)
    before = tree(out)
    env = {
        **os.environ,
        "REDLINE_CONFIG_DIR": str(isolated_user_config),
        "REDLINE_SCRIPTED_WAIT_SCALE": "0",
    }
    env.pop("OPENAI_API_KEY", None)
    model = _plan(tmp_path)
    commands = [
        ["ast-edit", "-C", str(ws), "--pattern", "x = $A", "--rewrite", "y = $A", "."],
        ["ast-edit", "-C", str(ws), "--json", "--pattern", "x = $A", "."],
        ["ast-edit", "-C", str(ws), "--apply", "--pattern", "x = $A", "--rewrite", "y = $A", "."],
        ["exec", "-C", str(ws), "--model", model, "--prompt", "add notes", "--json"],
        ["exec", "-C", str(ws), "--model", model, "--prompt", "add notes"],
        ["undo", "-C", str(ws), "--list"],
        ["undo", "-C", str(ws)],
        ["undo", "-C", str(ws), "000002"],
        ["tools", "-C", str(ws)],
    ]
    outputs = []
    for args in commands:
        done = _run(args, env)
        shown = f"{args[0]} {args[-1]} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
        outputs.append(shown)
        assert "Traceback" not in done.stderr + done.stdout, shown
        assert done.returncode in (0, 1, 2, 3), shown
        assert tree(out) == before, shown
        if args[0] == "exec" and "--json" in args:
            for line in done.stdout.splitlines():
                json.loads(line)
    text = "\n".join(outputs)
    if layout == "symlinks-inside":
        assert "is a symlink" in text or "is a symbolic link" in text
    elif layout == "symlinked-state":
        assert ".redline is a symlink" in text
    else:
        # Never acted on, never moved: named every time (it could be the user's own).
        assert "2 entries signed with another key" in text
        assert "in .redline/journal: 000001, 000002. They were left in place" in text
    assert tree(out) == before
    assert not (out / "stolen.py").exists()


def test_dashboard_start_refuses_a_hijacked_state_folder(
    tmp_path: Path, isolated_user_config: Path
) -> None:
    out = _outside(tmp_path)
    ws = _workspace(tmp_path)
    symlinks_inside(ws, out)
    before = tree(out)
    env = {**os.environ, "REDLINE_CONFIG_DIR": str(isolated_user_config)}
    done = _run(["-C", str(ws), "--model", _plan(tmp_path)], env)
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr
    assert ".redline/sessions is a symlink" in done.stderr
    assert tree(out) == before


async def test_dashboard_start_with_a_forged_journal(tmp_path: Path) -> None:
    from tests.tui.conftest import wait_until
    from tests.tui.fakes import FakeWatcher

    from redline.drivers.model.providers.scripted import ScriptedProvider
    from redline.sdk import create_agent_session
    from redline.tui.app import RedlineApp

    out = _outside(tmp_path)
    ws = _workspace(tmp_path)
    forged_journal(ws, out)
    before = tree(out)
    plan = Path(_plan(tmp_path).removeprefix("scripted:"))
    session = create_agent_session(ws, ScriptedProvider(plan, wait_scale=0.0), resolver="human")
    try:
        assert any("2 entries signed with another key" in m for m in session.recovery_messages)
        app = RedlineApp(session, watcher_factory=FakeWatcher)
        async with app.run_test(size=(120, 40)) as pilot:
            # Nothing in the forged journal is undoable: `u` is greyed out, and the palette's
            # undo says why without touching anything.
            await wait_until(pilot, lambda: app.check_action("undo", ()) is None, timeout=15)
            app.action_undo()
            await wait_until(pilot, lambda: "cannot be used" in app.activity.plain, timeout=15)
    finally:
        session.close()
    assert tree(out) == before
    assert (ws / "app.py").read_text() == "x = 1\n"
