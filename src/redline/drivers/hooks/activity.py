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

Reading (the dashboard, any process): everything in the file is untrusted — a line that
is not a JSON object of the expected shape, or is too long, is skipped and counted; text
fields are cut to a bounded length and control characters replaced. The reader keeps the
file open, so a rotation loses nothing: it reads the old file to its end, then the new
one from the start.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

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

_SHORT = 200  # agent, session, tool, action ids, …
_REASON = 2000
_DIFF = 8000
_FILE_MODE = 0o600


# -- writing (the hook process) ------------------------------------------------------------
def record(root: Path, payload: Any, event: str, **fields: Any) -> None:
    """Append one entry about ``payload``'s hook call (never raises)."""
    try:
        entry: dict[str, Any] = {
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
                limit = _DIFF if key == "diff" else _REASON if key == "reason" else _SHORT * 5
                value = _cut(value, limit)
            entry[key] = value
        append_line(root, json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
    except Exception as exc:  # the log is a view: never let it change the hook's answer
        log.debug("could not write the hook activity log: %s", exc)


def answer_kind(answer: Any) -> str:
    """``allow``, ``allow-rewritten``, ``deny`` or ``block`` for an :class:`Answer`."""
    if answer.kind == "allow" and answer.updated_input is not None:
        return "allow-rewritten"
    return str(answer.kind)


def target_of(payload: Any) -> str:
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
            fd = _open_log(dir_fd, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                if os.fstat(fd).st_size >= MAX_BYTES and _rotate(dir_fd, fd):
                    continue  # moved aside: write to a fresh file
                os.write(fd, data)
                return
            finally:
                os.close(fd)
    finally:
        os.close(dir_fd)


def _open_log(dir_fd: int, flags: int) -> int:
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


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- reading (the dashboard) ---------------------------------------------------------------
@dataclass(frozen=True)
class HookEntry:
    """One checked line of the log."""

    time: float
    pid: int
    agent: str
    session: str
    call: str
    tool: str
    event: str
    target: str = ""
    action: str = ""
    answer: str = ""
    reason: str = ""
    as_approved: bool | None = None
    diff: str = ""

    @property
    def source(self) -> str:
        """The canonical source the queue's badges use (``hook:claude``)."""
        return f"hook:{self.agent}"


@dataclass(frozen=True)
class ReadResult:
    entries: list[HookEntry]
    skipped: int


_CONTROL = {c: "?" for c in range(32) if c not in (9, 10)} | {127: "?"}
_CONTROL_ONE_LINE = {**_CONTROL, 10: " ", 9: " "}


def _text(data: dict[str, Any], key: str, limit: int, *, lines: bool = False) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise ValueError(key)
    return _cut(value, limit).translate(_CONTROL if lines else _CONTROL_ONE_LINE)


def parse_line(raw: bytes) -> HookEntry | None:
    """The entry ``raw`` holds, or None when it is not one (untrusted input)."""
    if len(raw) > MAX_LINE_BYTES:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("v") != VERSION:
        return None
    try:
        event = data.get("event")
        stamp = data.get("time")
        pid = data.get("pid")
        approved = data.get("as_approved")
        if event not in EVENTS or not isinstance(stamp, (int, float)) or isinstance(stamp, bool):
            return None
        if not isinstance(pid, int) or isinstance(pid, bool):
            return None
        if approved is not None and not isinstance(approved, bool):
            return None
        answer = _text(data, "answer", _SHORT)
        if event == "answered" and answer not in ANSWERS:
            return None
        agent = _text(data, "agent", _SHORT)
        if not agent:
            return None
        return HookEntry(
            time=float(stamp),
            pid=pid,
            agent=agent,
            session=_text(data, "session", _SHORT),
            call=_text(data, "call", _SHORT),
            tool=_text(data, "tool", _SHORT),
            event=str(event),
            target=_text(data, "target", _SHORT * 5),
            action=_text(data, "action", _SHORT),
            answer=answer,
            reason=_text(data, "reason", _REASON, lines=True),
            as_approved=approved,
            diff=_text(data, "diff", _DIFF, lines=True),
        )
    except ValueError:
        return None


class ActivityReader:
    """Reads the entries appended since the last read; one thread at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd: int | None = None
        self._ident: tuple[int, int] | None = None
        self._partial = b""

    def skip_to_end(self) -> None:
        """Start after what the log holds now (the dashboard shows calls from now on)."""
        self._reopen(at_end=True)

    def read(self) -> ReadResult:
        """The complete lines appended since the last call (a partial last line waits)."""
        entries: list[HookEntry] = []
        skipped = 0
        for _round in range(3):  # the open file to its end, then a rotated-in new one
            if self._fd is None and not self._reopen(at_end=False):
                break
            lines, bad = self._drain()
            entries.extend(lines)
            skipped += bad
            if not self._moved():
                break
            lines, bad = self._drain()  # what a writer appended just before the move
            entries.extend(lines)
            skipped += bad + (1 if self._partial.strip() else 0)
            self._close()
            self._partial = b""
        return ReadResult(entries, skipped)

    def close(self) -> None:
        self._close()

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd, self._ident = None, None

    def _reopen(self, *, at_end: bool) -> bool:
        from redline.workspace.state import open_state_dir

        self._close()
        try:
            dir_fd = open_state_dir(self.root, FOLDER, create=False)
        except (FileNotFoundError, NotADirectoryError):
            return False
        try:
            try:
                fd = _open_log(dir_fd, os.O_RDONLY | os.O_NONBLOCK)
            except FileNotFoundError:
                return False
        finally:
            os.close(dir_fd)
        info = os.fstat(fd)
        self._fd, self._ident = fd, (info.st_dev, info.st_ino)
        if at_end:
            os.lseek(fd, 0, os.SEEK_END)
        return True

    def _drain(self) -> tuple[list[HookEntry], int]:
        assert self._fd is not None
        chunks = [self._partial]
        while True:
            chunk = os.read(self._fd, 256 * 1024)
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        *lines, self._partial = data.split(b"\n")
        if len(self._partial) > MAX_LINE_BYTES:  # a runaway line: count it, drop it
            lines.append(self._partial)
            self._partial = b""
        entries: list[HookEntry] = []
        bad = 0
        for line in lines:
            if not line.strip():
                continue
            entry = parse_line(line)
            if entry is None:
                bad += 1
            else:
                entries.append(entry)
        return entries, bad

    def _moved(self) -> bool:
        """Whether the path now names another file (rotated or removed)."""
        path = self.root / ".redline" / FOLDER / FILE_NAME
        try:
            info = os.stat(path, follow_symlinks=False)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) != self._ident


def log_folder(root: Path) -> Path:
    """``.redline/hooks/``, made (and checked) so it can be watched."""
    from redline.workspace.state import open_state_dir, state_dir

    os.close(open_state_dir(root, FOLDER))
    return state_dir(root) / FOLDER
