"""The hook activity log read back for the dashboard (see :mod:`.activity`).

Everything in the file is untrusted: a line that is not a JSON object of the expected
shape, or is too long, is skipped and counted; text fields are cut to a bounded length and
control characters replaced. The reader keeps the file open, so a rotation loses nothing:
it reads the old file to its end, then the new one from the start.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from redline.drivers.hooks.activity import (
    ANSWERS,
    DIFF,
    EVENTS,
    FILE_NAME,
    FOLDER,
    MAX_LINE_BYTES,
    REASON,
    SHORT,
    VERSION,
    cut,
    open_log,
)

if TYPE_CHECKING:
    from redline.jsontypes import JsonObject


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


def _text(data: JsonObject, key: str, limit: int, *, lines: bool = False) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise ValueError(key)
    return cut(value, limit).translate(_CONTROL if lines else _CONTROL_ONE_LINE)


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
        answer = _text(data, "answer", SHORT)
        if event == "answered" and answer not in ANSWERS:
            return None
        agent = _text(data, "agent", SHORT)
        if not agent:
            return None
        return HookEntry(
            time=float(stamp),
            pid=pid,
            agent=agent,
            session=_text(data, "session", SHORT),
            call=_text(data, "call", SHORT),
            tool=_text(data, "tool", SHORT),
            event=str(event),
            target=_text(data, "target", SHORT * 5),
            action=_text(data, "action", SHORT),
            answer=answer,
            reason=_text(data, "reason", REASON, lines=True),
            as_approved=approved,
            diff=_text(data, "diff", DIFF, lines=True),
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
                fd = open_log(dir_fd, os.O_RDONLY | os.O_NONBLOCK)
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
