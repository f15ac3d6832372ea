"""batch_rename_preview: rename many files at once, but only after someone says yes.

An example redline custom tool (the design note's ``batch_rename_preview`` made real).
Load it with ``redline --tools examples/tools/batch_rename_preview.py`` or copy it into
``.redline/tools/`` (trusted workspaces) or ``~/.config/redline/tools/``.

Parameters:
  pattern  which files: a glob. Without a ``/`` it matches file names anywhere in the
           workspace (``*.txt``); with one it matches the workspace-relative path
           (``docs/*.txt``; ``*`` may cross folders there).
  find     the text to replace in each matching file *name* (never in folder names).
  replace  what to put instead.
  regex    treat ``find`` as a Python regular expression (``replace`` may use ``\\1``).

Calling the tool renames nothing: it pushes one pending action whose preview lists every
``old -> new`` path. ``resolve`` with ``apply`` writes all renames through redline's safe
apply (stale check, all or nothing, journal, ``redline undo``); ``discard`` drops them.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from redline import (
    PREVIEW_BANNER,
    CustomToolAPI,
    FileRename,
    Preview,
    ToolResult,
    sha256_bytes,
)

__all__ = ["factory"]


class BatchRenameParams(BaseModel):
    pattern: str = Field(
        min_length=1,
        description="Glob for the files to rename: '*.txt' matches names anywhere, "
        "'docs/*.txt' matches workspace-relative paths",
    )
    find: str = Field(min_length=1, description="Text to find in each matching file name")
    replace: str = Field(description="Replacement text (may be empty)")
    regex: bool = Field(default=False, description="Treat find as a Python regular expression")


def _files_label(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _listing(renames: list[FileRename]) -> str:
    return "\n".join(f"  {r.old_path} -> {r.new_path}" for r in renames)


class BatchRenamePreview:
    name = "batch_rename_preview"
    label = "Batch Rename Preview"
    description = (
        "Rename every file matching a glob by replacing text in its file name. Nothing is "
        "renamed until the pending action is applied with resolve."
    )
    parameters = BatchRenameParams
    deferrable = True

    def __init__(self, api: CustomToolAPI) -> None:
        self.api = api

    def plan(self, params: BatchRenameParams) -> list[FileRename]:
        """One FileRename per file whose name changes; refuses clashes up front."""
        from redline.workspace.paths import iter_workspace_files

        root: Path = self.api.cwd
        try:
            finder = re.compile(params.find if params.regex else re.escape(params.find))
        except re.error as exc:
            raise ValueError(f"find is not a valid regular expression: {exc}") from None
        # A plain replacement must not read backslashes in `replace` as group references.
        replacement = params.replace if params.regex else params.replace.replace("\\", "\\\\")

        match_path = "/" in params.pattern
        renames: list[FileRename] = []
        claimed: dict[str, str] = {}
        for rel in iter_workspace_files(root):
            old = PurePosixPath(rel)
            subject = rel if match_path else old.name
            if not fnmatch.fnmatchcase(subject, params.pattern):
                continue
            new_name = finder.sub(replacement, old.name)
            if new_name == old.name:
                continue
            if new_name in ("", ".", "..") or "/" in new_name or "\\" in new_name:
                raise ValueError(f"{rel}: {new_name!r} is not a file name")
            new = str(old.with_name(new_name))
            if new in claimed:
                raise ValueError(f"{claimed[new]} and {rel} would both become {new}")
            if (root / new).exists():
                raise ValueError(f"{rel} -> {new}: {new} already exists")
            claimed[new] = rel
            digest = sha256_bytes((root / rel).read_bytes())
            renames.append(FileRename(old_path=rel, new_path=new, old_sha256=digest))
        return renames

    def execute(self, tool_call_id: str, params: BatchRenameParams) -> str:
        renames = self.plan(params)
        if not renames:
            return (
                f"No file matching {params.pattern!r} has {params.find!r} in its name; "
                "nothing to rename."
            )
        preview = Preview(renames)
        label = f"Batch rename: {_files_label(len(renames))}"
        listing = _listing(renames)

        def apply(reason: str) -> ToolResult:
            # Safe apply re-checks every file and refuses the whole batch if any target
            # appeared meanwhile; its ApplyError becomes resolve's failure message.
            receipt = self.api.apply_preview(preview)
            return ToolResult.text_result(
                f"Renamed {_files_label(len(renames))}. Reason: {reason}\n{listing}",
                details={
                    "journal_entry": receipt.entry_id,
                    "renamed": [[r.old_path, r.new_path] for r in renames],
                },
            )

        def reject(reason: str) -> str:
            return (
                f"Discarded batch rename of {_files_label(len(renames))}; nothing was "
                f"renamed. Reason: {reason}\nDropped:\n{listing}"
            )

        action_id = self.api.push_pending_action(
            label=label,
            apply=apply,
            reject=reject,
            preview=preview,
            source_tool_name=self.name,
        )
        return f"{PREVIEW_BANNER}\n{label} (pending action {action_id}):\n{listing}"


def factory(api: CustomToolAPI) -> BatchRenamePreview:
    return BatchRenamePreview(api)
