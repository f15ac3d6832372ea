#!/usr/bin/env python3
"""A recording hook for agents' command hooks (Codex, Gemini CLI, Claude Code): standard library only.

    python3 record_hook.py DIR

Appends one JSON line per call to ``DIR/calls.jsonl``: ``{"argv", "payload"}`` (``payload``:
the parsed stdin, or ``{"unparsed": text}``). Then answers as ``DIR/answers.json`` says; it
maps the payload's ``hook_event_name`` (or ``"*"``) to an answer:

    {"stdout": "text" or a JSON value, "stderr": "text", "exit": 0, "hang": false}

``stdout`` given as a JSON value is printed as JSON; ``hang: true`` makes the hook block
until the agent kills it (a hook that runs past its timeout). No answer → exit 0, no output.
The answers file is read at every call, so a test changes the answer without touching the
agent's hook configuration (a changed command would change its trust hash in Codex).
"""

from __future__ import annotations

import json
import os
import sys
import threading


def main() -> int:
    folder = sys.argv[1]
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {"unparsed": raw}
    line = json.dumps({"argv": sys.argv[2:], "payload": payload}) + "\n"
    fd = os.open(os.path.join(folder, "calls.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    try:
        with open(os.path.join(folder, "answers.json"), encoding="utf-8") as f:
            answers = json.load(f)
    except FileNotFoundError:
        answers = {}
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    answer = answers.get(event) or answers.get("*") or {}
    out = answer.get("stdout")
    if out is not None:
        sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
        sys.stdout.flush()
    if answer.get("stderr"):
        sys.stderr.write(answer["stderr"])
        sys.stderr.flush()
    if answer.get("hang"):
        threading.Event().wait()
    return int(answer.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
