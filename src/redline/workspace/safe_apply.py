"""Apply a :class:`~redline.workspace.preview.Preview` to the workspace, safely.

The only code in redline that writes workspace files. It refuses stale previews, writes
all files or none, journals every apply for crash recovery and undo, and never touches
anything outside the workspace root (see docs/safety.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from redline.workspace import fsutil, journal, paths, transaction
from redline.workspace.entries import FileState, PathOp, Step
from redline.workspace.errors import (
    ApplyError,
    ConfinementError,
    LockError,
    Problem,
    StaleError,
    WriteError,
    count,
    describe,
)
from redline.workspace.lock import workspace_lock
from redline.workspace.preview import (
    FileCreate,
    FileDelete,
    FileModify,
    FileRename,
    Preview,
    change_title,
    encode_text,
    sha256_bytes,
)

__all__ = [
    "ApplyError",
    "ApplyReceipt",
    "ConfinementError",
    "LockError",
    "StaleError",
    "WriteError",
    "apply_preview",
    "check_preview",
    "validate_preview",
]


@dataclass(frozen=True)
class ApplyReceipt:
    """What an apply did: its journal entry (for undo) and the paths it touched."""

    entry_id: str
    files: list[str]
    label: str
    recovered: list[str] = field(default_factory=list)


@dataclass
class _Checks:
    confinement: list[Problem] = field(default_factory=list)
    stale: list[Problem] = field(default_factory=list)
    refused: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.confinement or self.stale or self.refused)


def _cause(exc: paths.ConfinementError, rel: str) -> str:
    return str(exc).removeprefix(f"{rel}: ")


def _locate(root: Path, rel: str, checks: _Checks, *, follow: bool) -> tuple[Path, str] | None:
    """The physical path to work on and its journal name, or None (problem recorded).

    Folders on the way are resolved so two spellings of one file are seen as one, and a
    symlink that lands in ``.git/`` or a venv is refused like the folder itself.
    """
    try:
        lexical = paths.resolve_inside(root, rel)
        if follow and lexical.is_symlink():
            physical = lexical.resolve(strict=False)
        else:
            physical = Path(os.path.realpath(lexical.parent)) / lexical.name
        physical_rel = paths.relative_to_root(root, physical)
        paths.resolve_inside(root, physical_rel)
    except paths.ConfinementError as exc:
        checks.confinement.append((rel, _cause(exc, rel)))
        return None
    except (OSError, RuntimeError, ValueError) as exc:
        # RuntimeError: Path.resolve on a symlink loop; ValueError: resolved outside.
        cause = "symlink loop" if isinstance(exc, RuntimeError) else f"cannot resolve path: {exc}"
        checks.confinement.append((rel, cause))
        return None
    return physical, physical_rel


def _expect_file(
    current: fsutil.Current, sha256: str, rel: str, checks: _Checks, *, may_be_link: bool = False
) -> bool:
    """Is ``current`` exactly the file the preview was computed from (and writable)?"""
    if current.kind == "missing":
        checks.stale.append((rel, "deleted since the preview"))
    elif current.kind == "dir":
        checks.stale.append((rel, "is a folder, not a file"))
    elif current.kind == "symlink" and not may_be_link:
        checks.refused.append(
            (rel, "is a symbolic link; redline only deletes or renames regular files")
        )
    elif current.kind == "other":
        checks.refused.append((rel, "is not a regular file"))
    elif current.kind == "error":
        checks.refused.append((rel, f"cannot be read: {current.error}"))
    elif current.data is None:
        checks.refused.append(
            (
                rel,
                f"too large ({fsutil.human_size(current.size)}; redline handles files up to "
                f"{fsutil.human_size(fsutil.MAX_FILE_BYTES)})",
            )
        )
    elif current.sha256 != sha256:
        checks.stale.append((rel, "modified since the preview"))
    elif current.mode is not None and not current.mode & 0o200:
        checks.refused.append(
            (rel, f"is read-only (mode {current.mode:o}); make it writable first (chmod u+w)")
        )
    else:
        return True
    return False


def _expect_absent(current: fsutil.Current, rel: str, checks: _Checks, what: str) -> bool:
    if current.kind == "missing":
        return True
    if current.kind == "dir":
        checks.stale.append((rel, "a folder already exists at this path"))
    else:
        checks.stale.append((rel, f"{what} already exists".lstrip()))
    return False


def _missing_dirs(root: Path, target: Path, rel: str, checks: _Checks) -> list[str] | None:
    """Folders to create for ``target`` (outermost first), or None if a file is in the way."""
    missing: list[str] = []
    folder = target.parent
    while folder != root and folder.is_relative_to(root):
        if folder.is_dir():
            break
        if os.path.lexists(folder):
            checks.stale.append(
                (rel, f"{paths.relative_to_root(root, folder)} is a file, not a folder")
            )
            return None
        missing.append(paths.relative_to_root(root, folder))
        folder = folder.parent
    return list(reversed(missing))


def _old_text_matches(change: FileModify, data: bytes | None) -> bool:
    """Does the preview's ``old_text`` encode to exactly the file's bytes?

    A preview built from text read with universal newlines (``read_text()`` on a CRLF
    file) carries the right hash but LF text: applying it would silently rewrite every
    line ending, so it is refused like a stale preview.
    """
    if data is None or not change.old_text:
        # No old text carried (some producers leave it empty): the hash check decides.
        return True
    try:
        return encode_text(change.old_text, change.encoding) == data
    except (LookupError, UnicodeError):
        return False


def _encode(change: FileModify | FileCreate, checks: _Checks) -> bytes | None:
    try:
        data = encode_text(change.new_text, change.encoding)
    except (LookupError, UnicodeError) as exc:
        checks.refused.append(
            (change.path, f"new text cannot be encoded as {change.encoding}: {exc}")
        )
        return None
    if len(data) > fsutil.MAX_FILE_BYTES:
        checks.refused.append(
            (change.path, f"new contents too large ({fsutil.human_size(len(data))})")
        )
        return None
    return data


def _confine_all(root: Path, preview: Preview, checks: _Checks) -> None:
    for change in preview.changes:
        for rel in change.paths:
            _locate(root, rel, checks, follow=isinstance(change, FileModify))


def _build(root: Path, preview: Preview, checks: _Checks, label: str) -> transaction.Plan:
    """Check every change against the files on disk and gather what the apply needs."""
    plan = transaction.Plan(kind="apply", label=label, files=list(preview.paths))
    claimed: dict[str, str] = {}  # real path -> the preview's path for it
    dirs: dict[str, None] = {}

    def claim(rel: str, shown: str) -> bool:
        if rel in claimed:
            checks.refused.append((shown, "touched more than once by the preview"))
            return False
        claimed[rel] = shown
        return True

    for change in preview.changes:
        if isinstance(change, FileModify):
            located = _locate(root, change.path, checks, follow=True)
            if located is None or not claim(located[1], change.path):
                continue
            target, rel = located
            current = fsutil.read_current(target)
            new = _encode(change, checks)
            if not _expect_file(current, change.old_sha256, change.path, checks) or new is None:
                continue
            if not _old_text_matches(change, current.data):
                checks.stale.append(
                    (
                        change.path,
                        "the preview's old text differs from the file's bytes (line endings "
                        "or encoding; was it read with read_text()? read it with newline='')",
                    )
                )
                continue
            assert current.data is not None and current.sha256 and current.signature
            plan.ops.append(
                PathOp(
                    rel,
                    FileState(current.sha256, current.mode),
                    FileState(sha256_bytes(new), current.mode),
                )
            )
            plan.steps.append(Step("write", rel))
            plan.blobs[current.sha256] = current.data
            plan.new_bytes[rel] = new
            plan.modes[rel] = current.mode
            if current.uid is not None and current.gid is not None:
                plan.owners[rel] = (current.uid, current.gid)
            plan.signatures[rel] = current.signature
        elif isinstance(change, FileCreate):
            located = _locate(root, change.path, checks, follow=False)
            if located is None or not claim(located[1], change.path):
                continue
            target, rel = located
            new = _encode(change, checks)
            missing = _missing_dirs(root, target, change.path, checks)
            if not _expect_absent(fsutil.read_current(target), change.path, checks, ""):
                continue
            if new is None or missing is None:
                continue
            dirs.update(dict.fromkeys(missing))
            plan.ops.append(PathOp(rel, None, FileState(sha256_bytes(new), None)))
            plan.steps.append(Step("write", rel))
            plan.new_bytes[rel] = new
        elif isinstance(change, FileDelete):
            located = _locate(root, change.path, checks, follow=False)
            if located is None or not claim(located[1], change.path):
                continue
            target, rel = located
            current = fsutil.read_current(target)
            if not _expect_file(current, change.old_sha256, change.path, checks):
                continue
            assert current.data is not None and current.sha256 and current.signature
            plan.ops.append(PathOp(rel, FileState(current.sha256, current.mode), None))
            plan.steps.append(Step("delete", rel))
            plan.blobs[current.sha256] = current.data
            plan.signatures[rel] = current.signature
        elif isinstance(change, FileRename):
            source = _locate(root, change.old_path, checks, follow=False)
            dest = _locate(root, change.new_path, checks, follow=False)
            if source is None or dest is None:
                continue
            if not claim(source[1], change.old_path) or not claim(dest[1], change.new_path):
                continue
            current = fsutil.read_current(source[0])
            ok = _expect_file(current, change.old_sha256, change.old_path, checks)
            missing = _missing_dirs(root, dest[0], change.new_path, checks)
            absent = _expect_absent(
                fsutil.read_current(dest[0]), change.new_path, checks, "rename target"
            )
            if not ok or missing is None or not absent:
                continue
            assert current.data is not None and current.sha256 and current.signature
            state = FileState(current.sha256, current.mode)
            dirs.update(dict.fromkeys(missing))
            plan.ops.append(PathOp(source[1], state, None))
            plan.ops.append(PathOp(dest[1], None, state))
            plan.steps.append(Step("rename", dest[1], source=source[1]))
            plan.blobs[current.sha256] = current.data
            plan.signatures[source[1]] = current.signature
    plan.created_dirs = list(dirs)
    # The journal names the real paths written; what they were asked as is kept beside:
    # the preview's own ``via``, or the path it names when that is not the real one.
    plan.files = list(dict.fromkeys(op.path for op in plan.ops)) or plan.files
    plan.via = {
        real: preview.asked(asked)
        for real, asked in claimed.items()
        if real in plan.files and preview.asked(asked) != real
    }
    return plan


def _raise_for(checks: _Checks) -> None:
    if checks.confinement:
        raise ConfinementError(
            f"Refused: {count(len(checks.confinement), 'path')} outside what redline may "
            f"touch: {describe(checks.confinement)}. Nothing was written.",
            checks.confinement,
        )
    if checks.stale:
        raise StaleError(
            f"Refused: {count(len(checks.stale), 'file')} changed since the preview: "
            f"{describe(checks.stale)}. Nothing was written.",
            checks.stale,
        )
    if checks.refused:
        raise WriteError(
            f"Refused: {describe(checks.refused)}. Nothing was written.", checks.refused
        )


def _root(root: Path) -> Path:
    resolved = Path(root).resolve()
    if not resolved.is_dir():
        raise ApplyError(f"Workspace {root} is not a folder.", [(str(root), "not a folder")])
    return resolved


def validate_preview(root: Path, preview: Preview) -> None:
    """Preview-time check: every path lies inside the workspace and outside protected folders."""
    checks = _Checks()
    _confine_all(_root(root), preview, checks)
    _raise_for(_Checks(confinement=checks.confinement))


def check_preview(root: Path, preview: Preview) -> list[str]:
    """Why the preview no longer fits the files (``"path (cause)"`` each); [] when fresh.

    Read-only; takes no lock. Covers changed, deleted and newly created files and paths
    that became unsafe (e.g. a folder replaced by a symlink leading outside).
    """
    checks = _Checks()
    resolved = _root(root)
    _confine_all(resolved, preview, checks)
    if not checks.confinement:
        _build(resolved, preview, checks, "")
    return [f"{path} ({cause})" for path, cause in checks.confinement + checks.stale]


def _default_label(preview: Preview) -> str:
    if len(preview.changes) == 1:
        return change_title(preview.changes[0])
    return f"{len(preview.changes)} file changes"


def apply_preview(
    root: Path,
    preview: Preview,
    *,
    label: str = "",
    source_tool_name: str = "",
    action_id: str | None = None,
    undoes: str | None = None,
) -> ApplyReceipt:
    """Write ``preview`` to the workspace, all files or none; journaled for undo.

    ``undoes``: the preview takes the apply of that journal entry back (an undo written as
    a merge, e.g. a revert over later commits): it is journaled as that entry's undo, so
    the apply counts as undone and the write itself is not offered for undo.

    Raises :class:`StaleError`, :class:`ConfinementError`, :class:`LockError` or
    :class:`WriteError` (all :class:`ApplyError`) with a message naming every file.
    """
    resolved = _root(root)
    label = label or _default_label(preview)
    if not preview.changes:
        return ApplyReceipt(entry_id="", files=[], label=label)
    with workspace_lock(resolved):
        recovered = journal.recover_locked(resolved, full=False)
        checks = _Checks()
        _confine_all(resolved, preview, checks)
        _raise_for(checks)
        plan = _build(resolved, preview, checks, label)
        _raise_for(checks)
        plan.source_tool_name = source_tool_name
        plan.action_id = action_id
        if undoes is not None:
            plan.kind, plan.undoes = "undo", undoes
        entry = transaction.run(resolved, plan)
        journal.prune(resolved)
    return ApplyReceipt(entry_id=entry.id, files=list(plan.files), label=label, recovered=recovered)
