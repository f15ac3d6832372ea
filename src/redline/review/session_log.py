"""The session log: append-only JSONL under ``.redline/sessions/``.

Line one is a header with the schema version; every further line is one event. A torn
last line (the process died mid-write) is skipped when the log is read back.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from redline.redaction import redact_urls
from redline.review.events import (
    Event,
    EventFormatError,
    UnknownEvent,
    event_from_dict,
    is_event_type,
)

SCHEMA_VERSION = 1
_KEY_ENV_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,})")


class SessionLogError(ValueError):
    """A log file cannot be read back."""


def _redact(text: str) -> str:
    for name in _KEY_ENV_NAMES:
        secret = os.environ.get(name)
        if secret and len(secret) >= 8:
            text = text.replace(secret, "[redacted]")
    return redact_urls(_KEY_SHAPES.sub("[redacted]", text))


def _open_log(path: Path) -> Any:
    """Open the log for appending: ``0600``, never through a symlink.

    A log under ``<root>/.redline/sessions/`` is opened relative to the checked state
    folder (``0700``; a symlinked ``.redline`` or ``sessions`` is refused). Names that are
    not UTF-8 are written as ``\\udcXX`` JSON escapes (docs/safety.md).
    """
    from redline.workspace.state import STATE_DIR_NAME, open_state_dir

    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    if path.parent.name == "sessions" and path.parent.parent.name == STATE_DIR_NAME:
        dir_fd = open_state_dir(path.parent.parent.parent, "sessions")
    else:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = os.open(path.name, flags, 0o600, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        os.close(fd)
        raise OSError(errno.EPERM, f"{path}: not a session log redline may write to")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.fchmod(fd, 0o600)
    return os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace")


class SessionLog:
    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._handle = _open_log(path)
        self._write({"schema": SCHEMA_VERSION, **header})

    def _write(self, record: dict[str, Any]) -> None:
        line = _redact(json.dumps(record, ensure_ascii=False, default=str))
        with self._lock:
            if self._handle.closed:
                return
            self._handle.write(line + "\n")
            self._handle.flush()

    def write_event(self, event: Event) -> None:
        self._write(event.to_dict())

    def close(self) -> None:
        with self._lock:
            self._handle.close()


def read_log(path: Path) -> tuple[dict[str, Any], Iterator[Event]]:
    """The header and the events of a log; a torn or corrupt line is skipped."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise SessionLogError(f"{path}: cannot read session log: {exc.strerror or exc}") from None
    if not lines:
        raise SessionLogError(f"{path}: empty session log")
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError:
        raise SessionLogError(f"{path}: not a redline session log (bad header line)") from None
    if not isinstance(header, dict) or "schema" not in header:
        raise SessionLogError(f"{path}: not a redline session log (no schema in the header)")
    if header["schema"] != SCHEMA_VERSION:
        raise SessionLogError(
            f"{path}: session log schema {header['schema']} is not supported (expected {SCHEMA_VERSION})"
        )

    def events() -> Iterator[Event]:
        for line in lines[1:]:
            try:
                raw = json.loads(line)
            except json.JSONDecodeError:
                continue
            try:
                yield event_from_dict(raw)
            except EventFormatError:
                # A type a newer redline added is passed through; a broken record is skipped.
                kind = raw.get("type") if isinstance(raw, dict) else None
                if isinstance(kind, str) and not is_event_type(kind):
                    yield UnknownEvent(raw=raw)

    return header, events()


_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def new_session_id() -> str:
    """A fresh session id: the time and a random suffix (``20261201-070102-a1b2c3``)."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class ResumeError(ValueError):
    """No session to resume (none logged, an unknown id, an unreadable log)."""


def session_log_path(root: Path, session_id: str | None, *, source: str | None = None) -> Path:
    """The log of ``session_id``, or of the workspace's most recent session.

    Without an id, ``source`` narrows "most recent" to the sessions whose log header names
    that source: ``source="exec"`` is a ``redline exec`` run, never a dashboard session.
    A log written before headers named their source still counts (it cannot be told apart).
    """
    folder = root / ".redline" / "sessions"
    if session_id is not None:
        if not _SESSION_ID.fullmatch(session_id):
            raise ResumeError(
                f"session {session_id!r}: not a session id such as 20261201-070102-a1b2c3"
            )
        path = folder / f"{session_id}.jsonl"
        if not path.is_file():
            raise ResumeError(f"session {session_id}: no session log in {folder}")
        return path
    try:
        logs = [p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file()]
    except OSError:
        logs = []
    if not logs:
        raise ResumeError(f"no session to resume: {folder} holds no session log")
    if source is not None:
        logs = [p for p in logs if _from_source(p, source)]
        if not logs:
            raise ResumeError(
                f"no session to resume: {folder} holds no log of a `redline {source}` session "
                "(name another one with --session ID)"
            )
    return max(logs, key=lambda p: (p.stat().st_mtime, p.name))


def read_header(path: Path) -> dict[str, Any] | None:
    """A log's header line, or None when it is not one (only the first line is read)."""
    try:
        with path.open("rb") as stream:
            first = stream.readline(1 << 16)
        header = json.loads(first)
    except (OSError, ValueError):
        return None
    return header if isinstance(header, dict) and "schema" in header else None


def _from_source(path: Path, source: str) -> bool:
    header = read_header(path)
    if header is None:
        return True  # unreadable: let the caller report it as it would have
    return bool(header.get("source", source) == source)
