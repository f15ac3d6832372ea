"""Issue 46: with no dashboard watching, the process that queued an action tells the person."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded

from redline.cli import main
from redline.config import NotifyConfig
from redline.notify import (
    NONE_AVAILABLE,
    OSASCRIPT_LINES,
    Arrival,
    availability,
    platform_argv,
    platform_notifier,
    spawn_detached,
)
from redline.review import unseen
from redline.workspace.presence import present
from redline.workspace.queue import WorkspaceQueue

# Records its argv (after the output path) as one JSON line in argv[1].
RECORDER = """
import json, sys
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps(sys.argv[2:]) + "\\n")
"""


def fake_program(path: Path, out: Path) -> Path:
    """A stand-in for a notifier at ``path`` that records its whole argv in ``out``."""
    path.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"with open({str(out)!r}, 'a', encoding='utf-8') as f:\n"
        "    f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    path.chmod(0o755)
    return path


#: A label's worth of everything a shell or AppleScript would read as code.
TRICKY = "a\"b$(touch pwned)'c`id` & \u201cq\u201d ¬.txt"

_HOLD = """
import sys
from pathlib import Path
from redline.workspace.presence import present
with present(Path(sys.argv[1]), "dashboard") as file:
    print(file, flush=True)
    sys.stdin.read()
"""


def wait_for_lines(path: Path, count: int = 1) -> list[list[str]]:
    """The recorded argvs, once ``count`` are there (the notifier runs detached)."""
    deadline = time.monotonic() + 120  # a hang guard, never a timing
    while True:
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            if len(lines) >= count:
                return [json.loads(line) for line in lines]
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing recorded in {path}")
        threading.Event().wait(0.02)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "a.txt").write_text("hello\nworld\n", encoding="utf-8")
    with WorkspaceQueue(ws) as queue:
        queue.list()
    return ws


@pytest.fixture
def recorder(tmp_path: Path) -> tuple[Path, Path]:
    script = tmp_path / "record.py"
    script.write_text(RECORDER, encoding="utf-8")
    return script, tmp_path / "argv.jsonl"


def _config(isolated_user_config: Path, text: str) -> None:
    (isolated_user_config / "config.toml").write_text(text, encoding="utf-8")


def _notify_command(recorder: tuple[Path, Path]) -> str:
    script, out = recorder
    argv = [sys.executable, str(script), str(out), "{id}", "{label}", "{source}"]
    return f"[notify]\ncommand = {json.dumps(argv)}\n"


def _hook(root: Path, name: str, **tool_input: Any) -> subprocess.CompletedProcess[bytes]:
    """One real ``redline hook claude`` process (it hands over after ``wait_seconds``)."""
    return subprocess.run(
        [sys.executable, "-m", "redline", "hook", "claude"],
        input=recorded(name, root, **tool_input),
        cwd=root,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_a_hook_with_no_dashboard_runs_the_notify_command_with_the_label_literally(
    root: Path, recorder: tuple[Path, Path], isolated_user_config: Path
) -> None:
    _config(isolated_user_config, _notify_command(recorder) + "[hooks]\nwait_seconds = 0.05\n")
    target = root / TRICKY
    done = _hook(root, "pre-write.json", file_path=str(target), content="x\n")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert "still pending review" in answer["permissionDecisionReason"]
    assert b"\x1b" not in done.stdout + done.stderr  # never a terminal escape
    [argv] = wait_for_lines(recorder[1])
    assert argv == ["pa-1", f"Write {TRICKY}", "hook:claude"]
    assert not (root / "pwned").exists()


def test_a_killed_dashboard_does_not_count_but_a_live_one_does(
    root: Path,
    recorder: tuple[Path, Path],
    isolated_user_config: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _config(isolated_user_config, _notify_command(recorder))
    dead = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert dead.stdout is not None
    left = Path(dead.stdout.readline().strip())
    dead.kill()
    dead.wait()
    assert left.exists()  # a killed dashboard leaves its file behind
    assert unseen.tell_if_unseen(root, "pa-7", "Write a.txt", "hook:claude") == sys.executable
    assert wait_for_lines(recorder[1]) == [["pa-7", "Write a.txt", "hook:claude"]]

    started: list[Any] = []
    monkeypatch.setattr("redline.notify.spawn_detached", lambda *a: started.append(a))
    with present(root, "dashboard"):
        assert unseen.tell_if_unseen(root, "pa-8", "Write a.txt", "hook:claude") is None
    with present(None, "all"):  # a dashboard over every workspace watches this one too
        assert unseen.tell_if_unseen(root, "pa-9", "Write a.txt", "hook:claude") is None
    assert started == []


def test_at_most_one_notification_per_action(
    root: Path, monkeypatch: pytest.MonkeyPatch, isolated_user_config: Path
) -> None:
    _config(isolated_user_config, '[notify]\ncommand = ["true"]\n')
    started: list[Any] = []
    monkeypatch.setattr("redline.notify.spawn_detached", lambda *a: started.append(a))
    assert unseen.tell_if_unseen(root, "pa-3", "x", "mcp") == "true"
    assert unseen.tell_if_unseen(root, "pa-3", "x", "mcp") is None
    assert len(started) == 1


def test_without_a_command_the_desktop_notifier_gets_the_label_as_one_argument(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    out = tmp_path / "notify-send.jsonl"
    fake = fake_program(bin_dir / "notify-send", out)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    monkeypatch.delenv("SSH_TTY", raising=False)
    if sys.platform == "darwin":
        pytest.skip("macOS uses osascript (tested below)")
    assert unseen.tell_if_unseen(root, "pa-4", f"Write {TRICKY}", "exec") == str(fake)
    [argv] = wait_for_lines(out)
    assert argv[:2] == ["--app-name=redline", "redline"]
    assert argv[2] == f"pa-4 Write {TRICKY} (exec) waits for review"


def test_osascript_gets_the_label_as_its_argument_never_in_its_script(tmp_path: Path) -> None:
    found = platform_notifier({}, system="darwin", which=lambda name: f"/usr/bin/{name}")
    assert found == ("osascript", "/usr/bin/osascript")
    text = f"pa-5 Write {TRICKY} (hook:claude) waits for review"
    argv = platform_argv("osascript", "/usr/bin/osascript", text)
    assert argv[-1] == text
    script = argv[1:-1]
    assert script == [part for line in OSASCRIPT_LINES for part in ("-e", line)]
    assert "item 1 of argv" in script[3]
    assert not any(TRICKY in part for part in script)
    # Run for real through a stand-in that records what it received.
    out = tmp_path / "osascript.jsonl"
    fake = fake_program(tmp_path / "osascript", out)
    arrival = Arrival("pa-5", f"Write {TRICKY}", "hook:claude")
    assert spawn_detached(platform_argv("osascript", str(fake), text), arrival, 10) is None
    [received] = wait_for_lines(out)
    assert received == [*script, text]


def test_where_nothing_can_show_it_says_none_available(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    assert platform_notifier({"SSH_CONNECTION": "1 2 3 4"}, system="darwin") is None
    assert platform_notifier({}, system="linux", which=lambda name: "/usr/bin/x") is None
    assert availability(NotifyConfig(), {}) == NONE_AVAILABLE
    assert availability(NotifyConfig(command=("x",), origin="c.toml"), {}) == (
        "[notify] command x (c.toml)"
    )
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SSH_CONNECTION", "1 2 3 4")
    main(["workspaces", "list"])
    assert "notify: none available" in capfd.readouterr().out


def test_exec_tells_of_what_its_rules_left_pending(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redline.review.store import PendingAction, PendingActionStore
    from redline.workspace.queue import Source

    told: list[str] = []
    monkeypatch.setattr(unseen, "tell_if_unseen", lambda _r, action_id, *_a: told.append(action_id))
    later: list[Callable[[], None]] = []
    with WorkspaceQueue(root) as queue:
        store = PendingActionStore(queue=queue, source=Source.current("exec"))
        finish = unseen.watch_store(root, store, after=lambda _delay, due: later.append(due))
        kept = store.push(PendingAction(label="kept", apply=lambda _r: None, kind="custom"))
        decided = store.push(PendingAction(label="ruled", apply=lambda _r: None, kind="custom"))
        store.remove(decided.id)  # a rule decided it before the grace ended
        for due in later:
            due()
        assert told == [kept.id]
        # Ending before the grace: what still waits is told at once, and only once.
        last = store.push(PendingAction(label="last", apply=lambda _r: None, kind="custom"))
        finish()
        later[-1]()  # its timer fires after all: nothing more
        finish()
    assert told == [kept.id, last.id]


def test_a_redline_exec_process_that_leaves_an_edit_for_review_notifies(
    root: Path, recorder: tuple[Path, Path], isolated_user_config: Path, tmp_path: Path
) -> None:
    _config(isolated_user_config, _notify_command(recorder))
    steps = [
        {"call": [{"tool": "write", "args": {"path": "notes.md", "content": "n\n"}}]},
        {"say": "waiting for review"},
    ]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"name": "t", "steps": steps}), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "redline",
            "exec",
            "--model",
            f"scripted:{plan}",
            "--resolver",
            "human",
            "--json",
            "--prompt",
            "go",
        ],
        cwd=root,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert b"\x1b" not in done.stdout
    with WorkspaceQueue(root) as queue:
        [record] = queue.list()
    [argv] = wait_for_lines(recorder[1])
    assert argv == [record.id, record.label, "exec"], done.stderr
