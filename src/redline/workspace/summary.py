"""What :meth:`redline.workspace.preview.Preview.summary` returns: per-file and total line
counts, no file contents.

A module of its own: pydantic reads these back from session logs, and on Python 3.11 it
needs typing_extensions' TypedDict, whose import a hook call queueing its action does
without (docs/performance.md).
"""

from __future__ import annotations

from typing_extensions import TypedDict


class FileSummary(TypedDict, total=False):
    """One file of :meth:`Preview.summary` (``old_path`` only for renames)."""

    kind: str
    path: str
    old_path: str
    via: str  # the path asked for, when a symlinked folder made it differ from ``path``
    added: int
    removed: int


class PreviewSummary(TypedDict):
    """:meth:`Preview.summary`: per-file and total line counts, no file contents."""

    files: list[FileSummary]
    added: int
    removed: int
