"""A note from a pre-tool hook to the post-tool hook of the same call (standard library).

When a Codex patch is allowed only in part (some files applied, others discarded or still
pending), the agent is not told that its input was rewritten; the post-tool hook tells the
model instead. The pre-tool hook (one process) leaves the text in
``.redline/hooks/notes/<key>``, keyed by the call's session and tool-use id; the post-tool
hook (another process) takes it. Everything under ``.redline/`` is untrusted: a note is
read as UTF-8 text of bounded size and removed once read.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.drivers.hooks.payload import HookPayload

MAX_NOTE_BYTES = 256 * 1024


def _note_path(root: Path, payload: HookPayload) -> Path | None:
    if not payload.tool_use_id:
        return None
    key = hashlib.sha256(
        f"{payload.agent}\0{payload.session_id}\0{payload.tool_use_id}".encode()
    ).hexdigest()[:40]
    return root / ".redline" / "hooks" / "notes" / key


def leave_note(root: Path, payload: HookPayload, text: str) -> None:
    """Keep ``text`` for this call's post-tool hook (written atomically)."""
    path = _note_path(root, payload)
    if path is None or not text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".note.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8")[:MAX_NOTE_BYTES])
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def take_note(root: Path, payload: HookPayload) -> str:
    """The note left for this call ('' when none, or when it cannot be read), removed."""
    path = _note_path(root, payload)
    if path is None:
        return ""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_NOTE_BYTES)
    except OSError:
        return ""
    with contextlib.suppress(OSError):
        os.unlink(path)
    return data.decode("utf-8", errors="replace")
