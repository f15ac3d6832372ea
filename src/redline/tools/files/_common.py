"""What every file tool shares: confinement, bounded reads and error short-circuits."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from redline.workspace.fsutil import NotRegularFileError, open_regular
from redline.workspace.paths import ConfinementError, relative_to_root, resolve_inside
from redline.workspace.preview import Preview

# Largest file edit/write will load for a preview: both texts live in memory and in the diff.
MAX_EDIT_BYTES = 10 * 1024 * 1024

ParamsT = TypeVar("ParamsT", bound=BaseModel)


class FileToolError(Exception):
    """A failure the model should read as an error result (never a traceback)."""


def coerce_params(params: BaseModel, model: type[ParamsT]) -> ParamsT:
    """The tool's own parameter model, even when a caller hands over a look-alike."""
    if isinstance(params, model):
        return params
    try:
        return model.model_validate(params.model_dump())
    except ValidationError as exc:
        raise FileToolError(f"invalid parameters: {exc}") from None


def default_dot(value: object) -> object:
    """Models often send ``null`` for an optional path; it means the workspace root."""
    return "." if value is None or value == "" else value


def locate(root: Path, path: str) -> tuple[Path, str]:
    """``(absolute path, POSIX path relative to root)``; confinement failures become errors."""
    try:
        absolute = resolve_inside(root, path)
    except ConfinementError as exc:
        raise FileToolError(str(exc)) from None
    return absolute, relative_to_root(root, absolute)


def display(rel: str) -> str:
    return "the workspace root" if rel in ("", ".") else rel


def os_error(rel: str, exc: OSError) -> FileToolError:
    return FileToolError(f"{rel}: {exc.strerror or exc}")


def read_bytes_bounded(absolute: Path, rel: str, limit: int | None = None) -> bytes:
    """A regular file's bytes, refusing folders, missing files and files over ``limit``
    (default MAX_EDIT_BYTES)."""
    if limit is None:
        limit = MAX_EDIT_BYTES
    try:
        if absolute.is_dir():
            raise FileToolError(f"{rel} is a directory, not a file")
        if not absolute.exists():
            raise FileToolError(f"{rel}: no such file")
        size = absolute.stat().st_size
        if size > limit:
            raise FileToolError(
                f"{rel} is too large to edit ({size} bytes; the limit is {limit} bytes)"
            )
        with open_regular(absolute) as handle:
            data = handle.read(limit + 1)
    except NotRegularFileError as exc:
        raise FileToolError(
            f"{rel} {exc.strerror}; redline edits regular text files only"
        ) from None
    except OSError as exc:
        raise os_error(rel, exc) from None
    if len(data) > limit:
        raise FileToolError(f"{rel} is too large to edit (over {limit} bytes)")
    return data


def validate_preview(root: Path, preview: Preview) -> None:
    """Preview-time confinement check by safe apply, when that module is installed."""
    try:
        from redline.workspace.safe_apply import validate_preview as safe_validate
    except ModuleNotFoundError as exc:
        # Only a missing safe_apply module is tolerated; a broken one must surface.
        if exc.name != "redline.workspace.safe_apply":
            raise
        return
    try:
        safe_validate(root, preview)
    except ConfinementError as exc:
        raise FileToolError(str(exc)) from None
    except Exception as exc:
        # safe_apply may raise its own ConfinementError (an ApplyError); the model
        # needs its message, not a traceback.
        raise FileToolError(str(exc) or type(exc).__name__) from None
