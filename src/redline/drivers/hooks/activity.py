"""The hook activity log: what each ``redline hook`` call did, for the dashboard to show.

A hook call runs in the agent's process, so its life — asked about a tool call, waiting
as ``pa-N``, answered allow / allow with the input rewritten / deny / block, handed over
after ``[hooks] wait_seconds``, the agent's write recorded after the tool ran — is written
as small JSON lines to ``.redline/hooks/activity.jsonl``, which the dashboard follows.

Writing (the hook process; standard library only, no new import on the hook's path):
one ``os.write`` of one whole line per entry to a file opened ``O_APPEND``, so lines of
concurrent hook calls never interleave; no fsync. Past :data:`MAX_BYTES` the writer moves
the file to ``activity.jsonl.1`` (one generation kept) under an ``flock`` of the old file,
so two writers never both rotate. The log is a view, not a record: a failure to write it
is logged and never changes the hook's answer.

The dashboard reads it with :mod:`redline.drivers.hooks.activity_reader`, which treats
every line as untrusted input.
"""

from __future__ import annotations

import json
import os
import stat
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from redline.drivers.hooks.answers import Answer
    from redline.drivers.hooks.payload import HookPayload
    from redline.jsontypes import JsonObject, JsonValue

#: ``.redline/<FOLDER>/<FILE_NAME>``
FOLDER = "hooks"
FILE_NAME = "activity.jsonl"
ROTATED_NAME = FILE_NAME + ".1"
#: The log is moved aside when it grows past this many bytes.
MAX_BYTES = 1024 * 1024
#: A line longer than this is skipped by the reader (the writer never writes one).
MAX_LINE_BYTES = 32 * 1024
VERSION = 1
#: What an entry's ``event`` may be.
EVENTS = ("asked", "waiting", "handed_over", "answered", "written")
#: How an ``answered`` entry's ``answer`` may read.
ANSWERS = ("allow", "allow-rewritten", "deny", "block", "pass")

SHORT = 200  # agent, session, tool, action ids, …
REASON = 2000
DIFF = 8000
_FILE_MODE = 0o600


# -- writing (the hook process) ------------------------------------------------------------
def record(root: Path, payload: HookPayload, event: str, **fields: JsonValue) -> None:
    """Append one entry about ``payload``'s hook call (never raises)."""
    try:
        entry: JsonObject = {
            "v": VERSION,
            "time": round(time.time(), 3),
            "pid": os.getpid(),
            "agent": payload.agent,
            "session": payload.session_id,
            "call": payload.tool_use_id,
            "tool": payload.tool_name,
            "event": event,
        }
        for key, value in fields.items():
            if value is None:
                continue
            if isinstance(value, str):
                limit = DIFF if key == "diff" else REASON if key == "reason" else SHORT * 5
                value = cut(value, limit)
            entry[key] = value
        append_line(root, json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
    except Exception as exc:  # the log is a view: never let it change the hook's answer
        import logging

        logging.getLogger(__name__).debug("could not write the hook activity log: %s", exc)


def answer_kind(answer: Answer) -> str:
    """``allow``, ``allow-rewritten``, ``deny`` or ``block`` for an :class:`Answer`."""
    if answer.kind == "allow" and answer.updated_input is not None:
        return "allow-rewritten"
    return str(answer.kind)


def target_of(payload: HookPayload) -> str:
    """What the call works on, in a few words: a file, a patch's files, a command."""
    tool_input = payload.tool_input
    for key in ("file_path", "notebook_path", "absolute_path", "path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return _relative(value, payload.cwd)
    command = tool_input.get("command")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if isinstance(command, str):
        if payload.tool_name == "apply_patch" and "*** Begin Patch" in command:
            files = [
                line.split(":", 1)[1].strip()
                for line in command.splitlines()
                if line.startswith(("*** Add File:", "*** Update File:", "*** Delete File:"))
            ]
            return ", ".join(files)
        return command
    url = tool_input.get("url") or tool_input.get("query")
    return url if isinstance(url, str) else ""


def _relative(path: str, cwd: str) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def append_line(root: Path, line: str) -> None:
    """Append ``line`` (one JSON document, no newline in it) as one write."""
    from redline.workspace.state import open_state_dir

    data = (line + "\n").encode("utf-8")
    dir_fd = open_state_dir(root, FOLDER)
    try:
        for _attempt in range(2):
            fd = open_log(dir_fd, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                if os.fstat(fd).st_size >= MAX_BYTES and _rotate(dir_fd, fd):
                    continue  # moved aside: write to a fresh file
                os.write(fd, data)
                return
            finally:
                os.close(fd)
    finally:
        os.close(dir_fd)


def open_log(dir_fd: int, flags: int) -> int:
    fd = os.open(FILE_NAME, flags | os.O_NOFOLLOW | os.O_CLOEXEC, _FILE_MODE, dir_fd=dir_fd)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        os.close(fd)
        raise OSError(f".redline/{FOLDER}/{FILE_NAME} is not a regular file of this user")
    return fd


def _rotate(dir_fd: int, fd: int) -> bool:
    """Move the full log aside (True), unless another writer did it first."""
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        try:
            current = os.stat(FILE_NAME, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return True
        mine = os.fstat(fd)
        if (current.st_dev, current.st_ino) != (mine.st_dev, mine.st_ino):
            return True  # another writer moved it: write to the new one
        os.replace(FILE_NAME, ROTATED_NAME, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return True
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
