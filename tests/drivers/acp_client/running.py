"""A `redline exec --agent --json` subprocess whose events a test reads as they come."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests import warm_python
from tests.drivers.acp_client.test_exec_agent import AGENT, HANG_GUARD, of


class Exec:
    """A running `redline exec --agent --json`; its events are collected by a thread."""

    def __init__(
        self,
        tmp_path: Path,
        workspace: Path,
        steps: list[dict[str, Any]] | None,
        *extra: str,
        env: dict[str, str] | None = None,
    ) -> None:
        script = tmp_path / "script.json"
        if steps is not None:
            script.write_text(json.dumps(steps))
        self.record = tmp_path / "record.jsonl"
        command = shlex.join([sys.executable, str(AGENT), str(script), str(self.record)])
        argv = [sys.executable, "-m", "redline", "exec", "--agent", command]
        argv += ["-C", str(workspace), "--json", *extra]
        self.events: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self.proc = warm_python.popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                with self._changed:
                    self.events.append(json.loads(line))
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, what: str, condition: Callable[[list[dict[str, Any]]], bool]) -> None:
        """Block until ``condition(events)`` holds; a hang guard only, never a timing."""
        with self._changed:
            ok = self._changed.wait_for(
                lambda: condition(self.events) or self.proc.poll() is not None, HANG_GUARD
            )
            if not ok or not condition(self.events):
                raise AssertionError(f"exec never got to {what}; events: {self.events}")

    def wait_for_waiting(self) -> str:
        """Until exec says it waits for review; returns the action id it waits for."""

        def waiting(events: list[dict[str, Any]]) -> bool:
            return any(
                e["type"] == "notice" and e["message"].startswith("Waiting for review of")
                for e in events
            )

        self.wait_for("waiting for review", waiting)
        return str(of(self.events, "pending_pushed")[-1]["action_id"])

    def finish(self) -> tuple[int, str]:
        try:
            code = self.proc.wait(HANG_GUARD)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self._reader.join(HANG_GUARD)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()

    def heard(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(HANG_GUARD)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def prompts(heard: list[dict[str, Any]]) -> list[str]:
    return [h["text"] for h in heard if h["event"] == "prompt"]
