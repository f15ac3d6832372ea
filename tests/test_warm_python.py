"""The warm test interpreter (tests/warm_python.py) gives what an ordinary process gives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests import warm_python

HANG_GUARD = 120

PROBE = """
import json, os, sys
if sys.argv[1] == "block":
    print("ready", flush=True)
    sys.stdin.read()
    raise SystemExit(0)
mask = os.umask(0)
print(json.dumps({
    "argv": sys.argv[1:],
    "cwd": os.getcwd(),
    "foo": os.environ.get("WARM_PROBE_FOO"),
    "stdin": sys.stdin.read(),
    "umask": mask,
    "hash_randomization": sys.flags.hash_randomization,
    "main": __name__,
}))
print("to stderr", file=sys.stderr)
raise SystemExit(int(sys.argv[2]))
"""


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    """A folder holding ``probe.py``: run from there as ``python -m probe``."""
    (tmp_path / "probe.py").write_text(PROBE)
    return tmp_path


def both(probe: Path, *args: str, **kwargs: Any) -> tuple[Any, Any]:
    """The probe's (code, stdout, stderr) run warm and run as an ordinary process."""
    argv = [sys.executable, "-m", "probe", *args]
    results = []
    for warm in (True, False):
        proc: subprocess.Popen[str] = (
            warm_python.WarmPopen("probe", argv, **kwargs)
            if warm
            else subprocess.Popen(argv, **kwargs)
        )
        out, err = proc.communicate("from stdin", timeout=HANG_GUARD)
        results.append((proc.returncode, json.loads(out), err))
    return results[0], results[1]


def test_a_warm_child_gets_the_folder_environment_stdin_and_umask(probe: Path) -> None:
    env = {**os.environ, "WARM_PROBE_FOO": "bar"}
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    warm, ordinary = both(probe, "x", "7", cwd=probe, env=env, umask=0o027, text=True, **pipes)
    assert warm == ordinary
    code, seen, err = warm
    assert code == 7
    assert seen["argv"] == ["x", "7"]
    assert seen["cwd"] == str(probe)
    assert (seen["foo"], seen["stdin"], seen["umask"], seen["main"]) == (
        "bar",
        "from stdin",
        0o027,
        "__main__",
    )
    assert err == "to stderr\n"


def test_a_different_python_environment_starts_python_anew(probe: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    warm, ordinary = both(probe, "x", "0", cwd=probe, env=env, text=True, **pipes)
    assert warm == ordinary
    assert warm[1]["hash_randomization"] == 0


def test_redline_commands_go_warm_and_end_as_ordinary_ones(tmp_path: Path) -> None:
    for args in (["--version"], ["no-such-command"]):
        argv = [sys.executable, "-m", "redline", *args]
        warm = warm_python.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert isinstance(warm, warm_python.WarmPopen)
        with pytest.raises(ChildProcessError):  # the server's child, not ours
            os.waitpid(warm.pid, os.WNOHANG)
        out, err = warm.communicate(timeout=HANG_GUARD)
        ordinary = subprocess.run(argv, capture_output=True, timeout=HANG_GUARD)
        assert (warm.returncode, out, err) == (
            ordinary.returncode,
            ordinary.stdout,
            ordinary.stderr,
        )
    other = warm_python.popen([sys.executable, "-c", "pass"])
    assert not isinstance(other, warm_python.WarmPopen)
    assert other.wait(HANG_GUARD) == 0


def test_a_signal_ends_a_warm_child_as_it_ends_an_ordinary_one(probe: Path) -> None:
    argv = [sys.executable, "-m", "probe", "block"]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    for proc in (
        warm_python.WarmPopen("probe", argv, cwd=probe, text=True, **pipes),
        subprocess.Popen(argv, cwd=probe, text=True, **pipes),
    ):
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        assert proc.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(0.01)
        proc.terminate()
        assert proc.wait(HANG_GUARD) == -signal.SIGTERM
        proc.stdin.close()  # type: ignore[union-attr]
        proc.stdout.close()


def test_the_launcher_stands_in_for_the_process_and_passes_signals(probe: Path) -> None:
    command, args = warm_python.stdio_command("probe", "x", "5")
    assert command == sys.executable
    done = subprocess.run(
        [command, *args], cwd=probe, input="in", capture_output=True, text=True, timeout=HANG_GUARD
    )
    assert done.returncode == 5
    assert json.loads(done.stdout)["stdin"] == "in"
    assert json.loads(done.stdout)["cwd"] == str(probe)
    assert done.stderr == "to stderr\n"

    command, args = warm_python.stdio_command("probe", "block")
    with subprocess.Popen(
        [command, *args], cwd=probe, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as launcher:
        assert launcher.stdout is not None
        assert launcher.stdout.readline() == "ready\n"
        launcher.terminate()
        assert launcher.wait(HANG_GUARD) == -signal.SIGTERM
