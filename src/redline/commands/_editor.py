"""Open a text in the person's editor ($VISUAL, then $EDITOR) and read it back."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


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


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
DEFAULT_NAME = "proposal.txt"


def temp_name(name: str) -> str:
    """A file name for the temporary copy that keeps ``name``'s extension for the editor.

    Any character other than letters, digits, ``.``, ``_`` and ``-`` becomes ``_``; a name
    of dots only (``.``, ``..``: not a file name), an empty one, or one starting with
    ``-`` falls back to ``proposal.txt``-like names, so every file name has a safe one.
    """
    safe = _UNSAFE.sub("_", name)[-64:]
    if not safe.strip("."):
        return DEFAULT_NAME
    if safe.startswith("-"):
        safe = "proposal" + safe
    return safe


def _make_writable(path: str) -> None:
    with contextlib.suppress(OSError):
        mode = os.lstat(path).st_mode
        if not stat.S_ISLNK(mode):
            os.chmod(path, stat.S_IMODE(mode) | stat.S_IRWXU)


def remove_tree(folder: Path) -> str | None:
    """Remove ``folder`` and whatever an editor left in it (files, sub-folders, read-only
    ones, symlinks: never followed). None when it is gone, else why not."""

    def retry(function: Callable[..., Any], path: str, _exc: object) -> None:
        _make_writable(os.path.dirname(path))
        _make_writable(path)
        function(path)

    try:
        if sys.version_info >= (3, 12):
            shutil.rmtree(folder, onexc=retry)
        else:
            shutil.rmtree(folder, onerror=retry)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


class EditSession:
    """One temporary copy of a text for the person's editor.

    The copy lives in a private (``0700``) folder of the system's temporary folder, never
    in the workspace. :meth:`run` opens the editor and reads the text back; the folder is
    removed when the session ends well. If the text cannot be read back, or the caller
    calls :meth:`keep` (what was edited could not be used), or the session ends with an
    exception, the folder is kept and :attr:`kept_note` says where the text is.
    """

    def __init__(self, text: str, name: str) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="redline-edit-"))
        os.chmod(self.folder, 0o700)
        self.path = self.folder / temp_name(name)
        self.edited = False
        self.reported = False  # the person has been told where the kept text is
        self._keep = False
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as out:
            out.write(text)

    @property
    def kept_note(self) -> str:
        return f"your edited text is kept in {self.path}"

    def run(self) -> str | None:
        """The text as the person saved it, or None when the editor exits non-zero."""
        command = editor_command()
        try:
            done = subprocess.run([*command, str(self.path)], check=False)
        except OSError as exc:
            raise EditorError(f"cannot start the editor {command[0]!r}: {exc}") from None
        if done.returncode != 0:
            return None
        self.edited = True
        try:
            with open(self.path, encoding="utf-8", errors="surrogateescape", newline="") as src:
                return src.read()
        except OSError as exc:
            self._keep = self.reported = True
            raise EditorError(
                f"cannot read the edited text back from {self.path}: {exc.strerror or exc}; "
                f"what the editor left is kept in {self.folder}"
            ) from None

    def keep(self) -> str:
        """Keep the edited text (the caller could not use it and reports where it is)."""
        self._keep = self.reported = True
        return self.kept_note

    def close(self, failed: bool = False) -> str | None:
        """Remove the folder, unless the edit must be kept; a note for the person or None."""
        if self._keep or (failed and self.edited):
            self._keep = True
            return self.kept_note
        why = remove_tree(self.folder)
        if why is not None:
            return f"could not remove the temporary folder {self.folder}: {why}"
        return None


@contextlib.contextmanager
def editor_session(text: str, *, name: str = "") -> Iterator[EditSession]:
    """An :class:`EditSession` whose end is reported on stderr when it leaves something."""
    session = EditSession(text, name)
    failed = True
    try:
        yield session
        failed = False
    finally:
        note = session.close(failed=failed)
        if note is not None and not session.reported:
            print(f"redline: {note}", file=sys.stderr)


def edit_text(text: str, *, suffix: str = "") -> str | None:
    """``text`` as the person saved it, or None when the editor exits non-zero (cancelled).

    The temporary copy is removed afterwards, whatever the editor left beside it; if it
    cannot be read back it is kept and the error says where.
    """
    with editor_session(text, name=suffix) as session:
        return session.run()
