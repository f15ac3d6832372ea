"""A note from a pre-tool hook to the post-tool hook of the same call.

When a Codex patch is allowed only in part (some files applied, others discarded or still
pending) or with a reviewer's edits, the agent is not told that its input was rewritten;
the post-tool hook tells the model instead. The pre-tool hook (one process) leaves the
text in ``.redline/hooks/notes/<key>``, keyed by the call's agent, session and tool-use
id; the post-tool hook (another process) takes it. Everything under ``.redline/`` is
untrusted: the folders are opened component by component without following links
(:func:`redline.workspace.state.open_state_dir`), the note is written atomically and read
as bounded UTF-8 text, then removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.drivers.hooks.payload import HookPayload

MAX_NOTE_BYTES = 256 * 1024
FOLDER = ("hooks", "notes")


def _key(payload: HookPayload) -> str | None:
    if not payload.tool_use_id:
        return None
    text = f"{payload.agent}\0{payload.session_id}\0{payload.tool_use_id}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def leave_note(root: Path, payload: HookPayload, text: str) -> None:
    """Keep ``text`` for this call's post-tool hook (written atomically)."""
    from redline.workspace.state import open_state_dir

    key = _key(payload)
    if key is None or not text:
        return
    folder = open_state_dir(root, *FOLDER)
    tmp = f".{key}.{secrets.token_hex(4)}"
    try:
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder
        )
        try:
            os.write(fd, text.encode("utf-8")[:MAX_NOTE_BYTES])
        finally:
            os.close(fd)
        os.replace(tmp, key, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    finally:
        os.close(folder)


def take_note(root: Path, payload: HookPayload) -> str:
    """The note left for this call ('' when none, or when it cannot be read), removed."""
    from redline.workspace.state import open_state_dir

    key = _key(payload)
    if key is None:
        return ""
    try:
        folder = open_state_dir(root, *FOLDER, create=False)
    except (OSError, ValueError):
        return ""
    try:
        fd = os.open(key, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        os.close(folder)
        return ""
    try:
        data = os.read(fd, MAX_NOTE_BYTES)
    except OSError:
        data = b""
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(key, dir_fd=folder)
        os.close(folder)
    return data.decode("utf-8", errors="replace")
