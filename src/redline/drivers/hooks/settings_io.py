"""Reading and writing the agents' settings files (JSON, TOML) without losing anything.

A file that cannot be read or parsed is left alone with a message naming it and the cause;
writes go to a temporary file in the same folder, renamed over the original (keeping its
mode), so the agent never reads a half-written file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.jsontypes import JsonObject


class InstallError(Exception):
    """The configuration cannot be read or written; the message names the file and cause."""


def read_json(path: Path) -> JsonObject:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InstallError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InstallError(f"{path}: not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path}: expected a JSON object; nothing was changed")
    return data


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` atomically (a temporary file renamed over it), keeping the file's mode."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise InstallError(f"{path}: cannot write: {exc.strerror or exc}") from None


def write_json(path: Path, data: JsonObject) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
