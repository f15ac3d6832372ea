"""Start ``redline serve`` as the user does (a real process on 127.0.0.1, a free port)."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

START_GUARD = 120.0  # seconds: a hang guard, far above the usual second or two


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str  # the printed start URL: http://127.0.0.1:PORT/TOKEN/
    output: list[str]  # everything the server printed so far (stdout and stderr)
    printed: threading.Condition = field(default_factory=threading.Condition)

    def wait_printed(self, text: str, times: int = 1) -> str:
        """Everything printed so far, once ``text`` is in it ``times`` times (the reader
        thread appends lines as the server prints them, maybe after the reply they log)."""
        with self.printed:
            if not self.printed.wait_for(
                lambda: "".join(self.output).count(text) >= times, START_GUARD
            ):
                raise AssertionError(f"the server never printed {text!r}: {self.output!r}")
            return "".join(self.output)

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 0)

    @property
    def token(self) -> str:
        return urlsplit(self.url).path.strip("/")

    @property
    def prefix(self) -> str:
        """The secret path every URL of the server starts with."""
        return f"/{self.token}/"


@contextmanager
def serve(
    args: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None
) -> Iterator[Served]:
    """``redline serve --port 0 ARGS``; stopped (SIGTERM, like Ctrl+C) afterwards."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "redline", "serve", "--port", "0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
        env=env,
    )
    output: list[str] = []
    printed = threading.Condition()
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        # Keep reading all the server prints, so a full pipe never blocks it.
        assert process.stdout is not None
        for line in process.stdout:
            with printed:
                output.append(line)
                printed.notify_all()
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + START_GUARD
        url = None
        while url is None and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                continue
            if line is None:
                break
            found = re.search(r"http://\S+:\d+/[A-Za-z0-9_-]{40,}/", line)
            url = found.group(0) if found else None
        assert url is not None, f"redline serve printed no URL: {''.join(output)!r}"
        yield Served(process, url, output, printed)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=60)
