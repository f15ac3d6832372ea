"""Faulty plugins against real ``redline`` processes: the process always exits.

Each test runs the command in a subprocess with a generous hang guard (the subprocess
timeout); none measures how long anything took.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import IO, Any

import pytest

from .conftest import echo_plugin

HANG_GUARD = 60.0

# Plugins that never finish, burning CPU as a runaway loop does (no sleep to interrupt).
BUSY_IMPORT = "while True:\n    pass\n"

BUSY_EXECUTE = """
from pydantic import BaseModel


class Params(BaseModel):
    pass


class Spin:
    name = "spin"
    label = "Spin"
    description = "Never returns"
    parameters = Params

    def execute(self, tool_call_id, params):
        while True:
            pass


def factory(api):
    return Spin()
"""

# Writes around Python's sys.stdout: straight to file descriptor 1, and from a thread of
# its own that outlives the call.
FD_WRITER = """
import os
import threading

from pydantic import BaseModel

os.write(1, b"raw bytes from the import\\n")
print("printed at import")


class Params(BaseModel):
    pass


class Loud:
    name = "loud"
    label = "Loud"
    description = "Writes everywhere"
    parameters = Params

    def execute(self, tool_call_id, params):
        os.write(1, b"raw bytes from execute\\n")
        print("printed in execute")
        done = threading.Event()

        def later():
            print("printed from a thread of its own")
            os.write(1, b"raw bytes from a thread\\n")
            done.set()

        threading.Thread(target=later).start()
        done.wait(5)
        return "shouted"


def factory(api):
    return Loud()
"""


@pytest.fixture
def env(tmp_path: Path, isolated_user_config: Path) -> dict[str, str]:
    environ = dict(os.environ)
    environ["REDLINE_CONFIG_DIR"] = str(isolated_user_config)
    environ["REDLINE_SCRIPTED_WAIT_SCALE"] = "0"
    environ.pop("REDLINE_PLUGIN_TIMEOUT", None)
    environ["PYTHONUNBUFFERED"] = "1"
    return environ


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return root


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def plan(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"name": "process", "steps": steps}), encoding="utf-8")
    return f"scripted:{path}"


def redline(*args: str) -> list[str]:
    return [sys.executable, "-m", "redline", *args]


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=HANG_GUARD, check=False
    )


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def read_until(stream: IO[str], predicate: Any) -> list[str]:
    lines = []
    for line in stream:  # the subprocess's hang guard bounds this
        lines.append(line)
        if predicate(line):
            return lines
    return lines


def test_tools_exits_when_a_plugin_import_never_finishes(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    folder = tmp_path / "plugins"
    stuck = write(folder / "a_spin.py", BUSY_IMPORT)
    write(folder / "b_good.py", echo_plugin("good"))
    done = run(
        redline("tools", "-C", str(workspace), "--tools", str(folder), "--plugin-timeout", "1"),
        env,
    )
    assert done.returncode == 0, done.stderr
    assert f"{stuck.resolve()}: did not finish loading within 1 s" in done.stdout
    assert "  good " in done.stdout


def test_exec_exits_when_a_plugin_import_never_finishes(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    stuck = write(tmp_path / "spin.py", BUSY_IMPORT)
    env["REDLINE_PLUGIN_TIMEOUT"] = "1"
    done = run(
        redline(
            "exec", "-C", str(workspace), "--json", "--tools", str(stuck), "--prompt", "x",
            "--model", plan(tmp_path, [{"say": "finished"}]),
        ),
        env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    [error] = [e for e in events if e["type"] == "plugin_error"]
    assert error["path"] == str(stuck.resolve()) and "did not finish loading" in error["message"]
    assert events[-1]["type"] == "agent_end" and events[-1]["status"] == "done"


def test_ctrl_c_ends_exec_while_an_execute_spins(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    spin = write(tmp_path / "spin.py", BUSY_EXECUTE)
    model = plan(tmp_path, [{"call": [{"tool": "spin", "args": {}}]}, {"say": "never"}])
    args = redline(
        "exec", "-C", str(workspace), "--json", "--tools", str(spin), "--prompt", "x",
        "--model", model,
    )  # fmt: skip
    with subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        seen = read_until(process.stdout, lambda line: '"tool_start"' in line)
        assert any('"tool_start"' in line for line in seen)
        process.send_signal(signal.SIGINT)
        try:
            rest, _err = process.communicate(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert process.returncode in (1, 130)
    for line in [*seen, *rest.splitlines()]:
        if line.strip():
            json.loads(line)  # never a half line or a stray print


def test_a_real_ctrl_c_during_plugin_load_stops_the_run(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    marker = tmp_path / "loading"
    slow = write(
        tmp_path / "slow.py",
        f"""
        import pathlib, time
        pathlib.Path({str(marker)!r}).write_text("started")
        while True:
            time.sleep(0.05)
        """,
    )
    args = redline(
        "exec", "-C", str(workspace), "--tools", str(slow), "--prompt", "x",
        "--model", plan(tmp_path, [{"say": "never"}]),
    )  # fmt: skip
    with subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        # Poll for the plugin's marker, bounded by the hang guard.
        for _ in range(int(HANG_GUARD / 0.05)):
            if marker.exists() or process.poll() is not None:
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(0.05)
        assert marker.exists()
        process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert "agent start" not in out  # the person stopped it: the run never began


def test_exec_json_stays_json_whatever_a_plugin_writes(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    loud = write(tmp_path / "loud.py", FD_WRITER)
    model = plan(tmp_path, [{"call": [{"tool": "loud", "args": {}}]}, {"say": "ok"}])
    done = run(
        redline(
            "exec", "-C", str(workspace), "--json", "--tools", str(loud), "--prompt", "x",
            "--model", model,
        ),
        env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)  # every line parses
    printed = {e["text"] for e in events if e["type"] == "plugin_output"}
    assert {"printed at import", "printed in execute"} <= printed
    # What bypasses Python's sys.stdout ends up on stderr, never between the JSON lines.
    assert "raw bytes from execute" in done.stderr
    assert "raw bytes from the import" in done.stderr
    assert "raw bytes" not in done.stdout


def test_base_url_credentials_are_never_printed_or_logged(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    env.pop("OPENAI_API_KEY", None)
    done = run(
        redline(
            "exec", "-C", str(workspace), "--json", "--prompt", "x", "--model", "openai:m",
            "--base-url", "http://someone:hunter2secret@127.0.0.1:9/v1",
        ),
        env,
    )  # fmt: skip
    assert done.returncode == 1
    logs = list((workspace / ".redline" / "sessions").glob("*.jsonl"))
    logged = "".join(path.read_text(encoding="utf-8") for path in logs)
    for text in (done.stdout, done.stderr, logged):
        assert "hunter2secret" not in text
        assert "someone" not in text
    start = next(e for e in json_lines(done.stdout) if e["type"] == "agent_start")
    assert "http://***@127.0.0.1:9/v1" in start["model"]
    assert '"model": "openai:m @ http://***@127.0.0.1:9/v1"' in logged.splitlines()[0]
