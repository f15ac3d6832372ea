"""The errors safe apply, undo and recovery raise.

Every message names each file involved and the cause, so a person (or the model) can act
on it without a traceback. ``except ApplyError`` catches all of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from redline.workspace import paths

Problem = tuple[str, str]


def describe(problems: Sequence[Problem]) -> str:
    """``a.py (modified since the preview), b.py (deleted since the preview)``."""
    return ", ".join(f"{path} ({cause})" for path, cause in problems)


def count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class ApplyError(Exception):
    """Applying (or undoing) failed; ``problems`` lists ``(path, cause)`` pairs."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems: list[Problem] = list(problems)

    @property
    def files(self) -> list[str]:
        return [path for path, _ in self.problems]

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class StaleError(ApplyError):
    """A file differs from what the preview was computed from; re-preview can fix it."""


# Both hierarchies on purpose: callers of the apply API catch ApplyError, callers of the
# path helpers catch paths.ConfinementError, and both must see confinement failures.
class ConfinementError(ApplyError, paths.ConfinementError):
    """A path leads outside the workspace or into a folder redline never touches."""


class LockError(ApplyError):
    """Another redline process is writing to the workspace."""


class WriteError(ApplyError):
    """A file cannot be written (read-only, too large, disk full, permission...)."""


class UndoError(ApplyError):
    """Undo is refused (files changed since the apply) or there is nothing to undo."""


# Every undo failure is an UndoError (callers of undo catch just that) and keeps its
# specific kind too.
class UndoLockError(UndoError, LockError):
    """Undo could not take the workspace lock."""


class UndoStaleError(UndoError, StaleError):
    """A file changed while the undo was running; the undo was rolled back."""


class UndoWriteError(UndoError, WriteError):
    """Writing failed during the undo; the undo was rolled back."""


def as_undo_error(exc: ApplyError) -> UndoError:
    if isinstance(exc, UndoError):
        return exc
    for kind, undo_kind in (
        (LockError, UndoLockError),
        (StaleError, UndoStaleError),
        (WriteError, UndoWriteError),
    ):
        if isinstance(exc, kind):
            return undo_kind(str(exc), exc.problems)
    return UndoError(str(exc), exc.problems)
