"""From an agent's tool call to the whole-file change it would make.

``map_call`` returns a :class:`FileChange` (the file's current text and the text after the
call) for the tools that write files, ``None`` for every other tool (they pass through, or
become permission actions with ``[hooks] review_shell``). A call that cannot work (the text
to replace is not in the file, the path leaves the workspace) raises :class:`MappingError`
with the agent's own wording where it has one, so the model reads the usual message.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from redline.drivers.hooks.payload import HookPayload, PayloadError, input_bool, input_string

# In a module of their own (a pass-through call needs only these); importable from here.
from redline.drivers.hooks.tools import CLAUDE_FILE_TOOLS as CLAUDE_FILE_TOOLS
from redline.drivers.hooks.tools import FILE_TOOLS as FILE_TOOLS
from redline.drivers.hooks.tools import SHELL_TOOLS as SHELL_TOOLS
from redline.drivers.hooks.tools import reviewed_tool as reviewed_tool
from redline.drivers.hooks.values import TYPE_CHECKING, Value

if TYPE_CHECKING:
    from redline.jsontypes import JsonObject, JsonValue


class MappingError(ValueError):
    """The tool call cannot be turned into a change; the message is for the model."""


class FileChange(Value):
    """One file the call changes: workspace-relative ``rel``; ``old_text`` None = new file;
    ``delete``: the call removes the file (``new_text`` is then empty)."""

    _fields = ("rel", "old_text", "new_text", "tool", "delete")
    rel: str
    old_text: str | None
    new_text: str
    tool: str
    delete: bool

    def __init__(
        self, rel: str, old_text: str | None, new_text: str, tool: str, delete: bool = False
    ) -> None:
        self._set(rel=rel, old_text=old_text, new_text=new_text, tool=tool, delete=delete)


def inside(root: Path, path_text: str, cwd: str) -> tuple[Path, str]:
    """The absolute path and workspace-relative name of ``path_text``, confined as every
    other way in confines a path (``workspace.paths.resolve_inside``: ``.git``/``.redline``
    at any depth and in any case or spelling, nested repositories' ``.git``, symlinked
    folders resolved); anything else is a MappingError the agent reads as a denial."""
    from redline.workspace.paths import ConfinementError, relative_to_root, resolve_inside

    if "\x00" in path_text or not path_text:
        raise MappingError(f"Blocked by redline: invalid file path {path_text!r}.")
    raw = Path(path_text)
    if not raw.is_absolute():
        raw = Path(cwd or root) / raw
    real_root = Path(os.path.realpath(root))
    try:
        absolute = resolve_inside(real_root, Path(os.path.normpath(raw)))
    except ConfinementError as exc:
        if not Path(os.path.realpath(raw)).is_relative_to(real_root):
            raise MappingError(
                f"Blocked by redline: {path_text} is outside the workspace {real_root}; redline "
                "reviews changes inside the workspace only."
            ) from None
        raise MappingError(f"Blocked by redline: {exc}.") from None
    rel = relative_to_root(real_root, absolute)
    if rel == ".":
        raise MappingError(f"Blocked by redline: {path_text} is the workspace folder itself.")
    return absolute, rel


def read_text(path: Path, rel: str) -> str | None:
    """The file's text, None when it does not exist; anything else is a MappingError."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise MappingError(f"Blocked by redline: {rel} is a folder, not a file.") from None
    except OSError as exc:
        raise MappingError(f"Blocked by redline: cannot read {rel}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise MappingError(
            f"Blocked by redline: {rel} is not UTF-8 text; redline reviews text files only."
        ) from None


def replace_once(text: str, old: str, new: str, replace_all: bool) -> str:
    """Claude Code's Edit: ``old`` must occur (once, unless ``replace_all``)."""
    if old == new:
        raise MappingError("No changes to make: old_string and new_string are exactly the same.")
    count = text.count(old)
    if count == 0:
        raise MappingError(f"String to replace not found in file.\nString: {old}")
    if count > 1 and not replace_all:
        raise MappingError(
            f"Found {count} matches of the string to replace, but replace_all is false. To "
            "replace all occurrences, set replace_all to true. To replace only one occurrence, "
            f"please provide more context to uniquely identify the instance.\nString: {old}"
        )
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)


def _claude_edit(current: str | None, payload: HookPayload) -> str:
    old = input_string(payload, "old_string")
    new = input_string(payload, "new_string")
    replace_all = input_bool(payload, "replace_all")
    if current is None:
        if old == "":
            return new  # Claude Code creates the file
        raise MappingError("File does not exist.")
    if old == "":
        if current.strip():
            raise MappingError("Cannot create new file - file already exists.")
        return new
    return replace_once(current, old, new, replace_all)


def _claude_multi_edit(current: str | None, payload: HookPayload) -> str:
    edits = payload.tool_input.get("edits")
    if not isinstance(edits, list) or not edits:
        raise PayloadError("MultiEdit: `tool_input.edits` is missing or not a list of edits")
    text = current
    for number, edit in enumerate(edits, 1):
        if not isinstance(edit, dict):
            raise PayloadError(f"MultiEdit: edit {number} is not an object")
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise PayloadError(f"MultiEdit: edit {number} needs old_string and new_string")
        replace_all = edit.get("replace_all", False) is True
        if text is None:
            if old != "":
                raise MappingError("File does not exist.")
            text = new
            continue
        text = replace_once(text, old, new, replace_all)
    assert text is not None
    return text


def _notebook(current: str | None, payload: HookPayload) -> str:
    """Claude Code's NotebookEdit: the notebook after the cell edit (JSON, indent 1)."""
    if current is None:
        raise MappingError("Notebook file does not exist.")
    try:
        notebook: JsonValue = json.loads(current)
    except ValueError:
        raise MappingError("Notebook is not valid JSON.") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise MappingError("Notebook is not valid JSON.")
    mode = input_string(payload, "edit_mode", default="replace")
    source = input_string(payload, "new_source", default="")
    cell_id = input_string(payload, "cell_id", default="")
    cell_type = input_string(payload, "cell_type", default="")
    index = None
    if cell_id:
        index = next(
            (n for n, c in enumerate(cells) if isinstance(c, dict) and c.get("id") == cell_id),
            None,
        )
        if index is None and cell_id.startswith("cell-") and cell_id[5:].isdigit():
            index = int(cell_id[5:])
        if index is None or index >= len(cells):
            raise MappingError(f'Cell with ID "{cell_id}" not found in notebook.')
    if mode == "insert":
        new_cell: JsonObject = {
            "cell_type": cell_type or "code",
            "source": source,
            "metadata": {},
        }
        if new_cell["cell_type"] == "code":
            new_cell["outputs"] = []
            new_cell["execution_count"] = None
        cells.insert(0 if index is None else index + 1, new_cell)
    elif index is None:
        raise MappingError("Cell ID must be specified when not inserting a new cell.")
    elif mode == "delete":
        del cells[index]
    elif mode == "replace":
        cell = cells[index]
        if not isinstance(cell, dict):
            raise MappingError("Notebook is not valid JSON.")
        cell["source"] = source
        if cell_type:
            cell["cell_type"] = cell_type
        if cell.get("cell_type") == "code":
            cell["execution_count"] = None
            cell["outputs"] = []
    else:
        raise PayloadError(f"NotebookEdit: unknown edit_mode {mode!r}")
    return json.dumps(notebook, indent=1, ensure_ascii=False)


def map_call(root: Path, payload: HookPayload) -> FileChange | None:
    """The change ``payload``'s tool call would make, or None for a tool that writes nothing."""
    if payload.agent == "claude":
        return _map_claude(root, payload)
    if payload.agent == "gemini":
        return _map_gemini(root, payload)
    return None


def _map_claude(root: Path, payload: HookPayload) -> FileChange | None:
    tool = payload.tool_name
    if tool not in CLAUDE_FILE_TOOLS:
        return None
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    path, rel = inside(root, input_string(payload, key), payload.cwd)
    current = read_text(path, rel)
    if tool == "Write":
        new = input_string(payload, "content")
    elif tool == "Edit":
        new = _claude_edit(current, payload)
    elif tool == "MultiEdit":
        new = _claude_multi_edit(current, payload)
    else:
        new = _notebook(current, payload)
    return FileChange(rel, current, new, tool)


def _map_gemini(root: Path, payload: HookPayload) -> FileChange | None:
    """Gemini CLI's ``write_file`` {file_path, content} and ``replace`` {file_path,
    old_string, new_string, instruction, allow_multiple?}, in Gemini's own wording."""
    tool = payload.tool_name
    if tool not in FILE_TOOLS["gemini"]:
        return None
    path_text = input_string(payload, "file_path")
    path, rel = inside(root, path_text, payload.cwd)
    current = read_text(path, rel)
    if tool == "write_file":
        return FileChange(rel, current, input_string(payload, "content"), tool)
    old = input_string(payload, "old_string")
    new = input_string(payload, "new_string")
    allow_multiple = input_bool(payload, "allow_multiple")
    if current is None:
        if old == "":
            return FileChange(rel, None, new, tool)
        raise MappingError(
            f"File not found: {path_text}. Cannot apply edit. Use an empty old_string to "
            "create a new file."
        )
    if old == "":
        raise MappingError(
            f"Failed to edit. Attempted to create a file that already exists: {path_text}"
        )
    if old == new:
        raise MappingError(
            f"No changes to apply. The old_string and new_string are identical in file: {path_text}"
        )
    count = current.count(old)
    if count == 0:
        raise MappingError(
            f"Could not find an exact match for 'old_string' in '{path_text}'. If previous "
            "edits modified the file or you are modifying lines outside your recent read "
            "window, please use ReadFile to inspect the target lines before retrying with an "
            "exact 'old_string'."
        )
    if count > 1 and not allow_multiple:
        raise MappingError(
            f"Failed to edit, expected 1 occurrence but found {count} for old_string in file: "
            f"{path_text}. Set allow_multiple to true to replace every occurrence."
        )
    return FileChange(rel, current, current.replace(old, new), tool)


def map_codex(root: Path, payload: HookPayload) -> list[FileChange]:
    """Codex's ``apply_patch``: one change per file the patch touches (a move is the old
    path deleted and the new one written), computed as Codex would apply it."""
    from redline.drivers.hooks.codex_patch import PatchError, apply_chunks, parse

    command = input_string(payload, "command")
    try:
        sections = parse(command)
    except PatchError as exc:
        raise MappingError(f"apply_patch verification failed: {exc}") from None
    if not sections:
        raise MappingError("apply_patch verification failed: the patch changes no file.")
    changes: list[FileChange] = []
    seen: set[str] = set()

    def add(change: FileChange) -> None:
        if change.rel in seen:
            raise MappingError(
                f"Blocked by redline: the patch changes {change.rel} more than once; send one "
                "section per file."
            )
        seen.add(change.rel)
        changes.append(change)

    try:
        for section in sections:
            path, rel = inside(root, section.path, payload.cwd)
            current = read_text(path, rel)
            if section.op == "add":
                add(FileChange(rel, current, section.contents, "apply_patch"))
                continue
            if current is None:
                verb = "delete" if section.op == "delete" else "update"
                raise MappingError(
                    f"apply_patch verification failed: Failed to read file to {verb} {rel}: "
                    "No such file or directory (os error 2)"
                )
            if section.op == "delete":
                add(FileChange(rel, current, "", "apply_patch", delete=True))
                continue
            new = apply_chunks(current, section.chunks, rel)
            if section.move_to is None:
                add(FileChange(rel, current, new, "apply_patch"))
                continue
            target, target_rel = inside(root, section.move_to, payload.cwd)
            add(FileChange(rel, current, "", "apply_patch", delete=True))
            add(FileChange(target_rel, read_text(target, target_rel), new, "apply_patch"))
    except PatchError as exc:
        raise MappingError(f"apply_patch verification failed: {exc}") from None
    return changes
