"""Open a text in the person's editor ($VISUAL, then $EDITOR) and read it back."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path


class EditorError(RuntimeError):
    """No editor is set, it cannot be started, or the edited text cannot be read back."""


def editor_command() -> list[str]:
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            try:
                parts = shlex.split(value)
            except ValueError as exc:
                raise EditorError(f"${name} ({value!r}) cannot be parsed: {exc}") from None
            if parts:
                return parts
    raise EditorError("no editor set: set $VISUAL or $EDITOR (for example EDITOR=nano)")


def edit_text(text: str, *, suffix: str = "") -> str | None:
    """``text`` as the person saved it, or None when the editor exits non-zero (cancelled).

    The temporary file lives in the system's temporary folder (never in the workspace),
    readable only by this user, and is removed afterwards. The text is written and read
    as UTF-8 with line endings untouched.
    """
    command = editor_command()
    safe_suffix = "".join(ch for ch in suffix if ch.isalnum() or ch in "._-")[-64:]
    folder = tempfile.mkdtemp(prefix="redline-edit-")
    path = Path(folder) / (safe_suffix or "proposal.txt")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as out:
            out.write(text)
        try:
            done = subprocess.run([*command, str(path)], check=False)
        except OSError as exc:
            raise EditorError(f"cannot start the editor {command[0]!r}: {exc}") from None
        if done.returncode != 0:
            return None
        try:
            with open(path, encoding="utf-8", errors="surrogateescape", newline="") as src:
                return src.read()
        except OSError as exc:
            raise EditorError(f"cannot read the edited text back: {exc}") from None
    finally:
        for leftover in Path(folder).iterdir():
            leftover.unlink(missing_ok=True)
        os.rmdir(folder)
