"""How fast redline exits when a plugin never returns (target: within 2 s of the stop).

Three cases, each in a fresh ``redline`` process on a scratch workspace with a plugin
that spins forever (a busy loop, no sleep):

- ``exec`` with a stuck ``execute``: seconds from Ctrl-C (SIGINT) to the process's exit;
- ``exec --resolver apply-all`` with a stuck ``apply``: the same;
- ``tools`` with a plugin whose import never finishes: seconds from the end of the load
  timeout (``--plugin-timeout 1``) to the exit, i.e. total time minus the same command's
  time without that plugin, minus the 1 s timeout.

Usage: ``uv run python bench/plugin_exit.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TARGET_S = 2.0

TOOL = """
from pydantic import BaseModel


class Params(BaseModel):
    pass


class Stuck:
    name = "stuck"
    label = "Stuck"
    description = "Never returns"
    parameters = Params
    deferrable = True

    def __init__(self, api):
        self.api = api

    def execute(self, tool_call_id, params):
        if {in_execute}:
            while True:
                pass

        def apply(reason):
            while True:
                pass

        return self.api.push_pending_action(label="stuck", apply=apply)


def factory(api):
    return Stuck(api)
"""


def redline(*args: str) -> list[str]:
    return [sys.executable, "-m", "redline", *args]


def stop_after(args: list[str], marker: str, env: dict[str, str]) -> float:
    """Start ``args``, wait for an output line containing ``marker``, SIGINT, time the exit."""
    process = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    for line in process.stdout:
        if marker in line:
            break
    started = time.perf_counter()
    process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return float("inf")
    return time.perf_counter() - started


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=env, capture_output=True, timeout=60, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        ws = root / "ws"
        ws.mkdir()
        env = dict(
            os.environ, REDLINE_CONFIG_DIR=str(root / "config"), XDG_STATE_HOME=str(root / "state")
        )
        env["REDLINE_SCRIPTED_WAIT_SCALE"] = "0"
        execute_tool = root / "stuck_execute.py"
        execute_tool.write_text(textwrap.dedent(TOOL.format(in_execute=True)), "utf-8")
        apply_tool = root / "stuck_apply.py"
        apply_tool.write_text(textwrap.dedent(TOOL.format(in_execute=False)), "utf-8")
        plan = root / "plan.json"
        steps = [{"call": [{"tool": "stuck", "args": {}}]}, {"say": "never"}]
        plan.write_text(json.dumps({"name": "bench", "steps": steps}), "utf-8")
        spin = root / "spin" / "spin.py"
        spin.parent.mkdir()
        spin.write_text("while True:\n    pass\n", "utf-8")

        def exec_args(tool: Path, *extra: str) -> list[str]:
            return redline(
                "exec", "-C", str(ws), "--json", "--tools", str(tool), "--prompt", "x",
                "--model", f"scripted:{plan}", *extra,
            )  # fmt: skip

        def tools_args(folder: Path | None) -> list[str]:
            extra = ["--tools", str(folder), "--plugin-timeout", "1"] if folder else []
            return redline("tools", "-C", str(ws), *extra)

        cases = {
            "exec, stuck execute (Ctrl-C -> exit)": lambda: stop_after(
                exec_args(execute_tool), '"tool_start"', env
            ),
            "exec, stuck apply (Ctrl-C -> exit)": lambda: stop_after(
                exec_args(apply_tool, "--resolver", "apply-all"), '"pending_pushed"', env
            ),
            "tools, import never ends (timeout -> exit)": lambda: (
                timed(tools_args(spin.parent), env) - timed(tools_args(None), env) - 1.0
            ),
        }
        for name, run in cases.items():
            times = [run() for _ in range(args.runs)]
            worst = max(times)
            verdict = "ok" if worst < TARGET_S else f"over the {TARGET_S:g} s target"
            print(
                f"{name:<45} median {statistics.median(times):5.2f} s  "
                f"worst {worst:5.2f} s  ({verdict})"
            )


if __name__ == "__main__":
    main()
