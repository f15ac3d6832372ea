"""The post-tool side of a hook call: what the agent wrote after redline said "allow".

``post_tool`` (``PostToolUse`` for Claude Code and Codex, ``AfterTool`` for Gemini CLI)
compares each written file with the approved text and records the write in the journal,
so ``redline undo`` reverts it; a different write is reported with its diff.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from redline.drivers.hooks.mapping import MappingError
from redline.drivers.hooks.payload import HookPayload

if TYPE_CHECKING:
    from redline.workspace.entries import Entry
    from redline.workspace.preview import FileChange as PreviewChange

log = logging.getLogger(__name__)


def _written_paths(payload: HookPayload) -> list[tuple[str, str | None]]:
    """The paths the agent's call wrote, each with the text it was to write (when known)."""
    if payload.agent == "codex":
        from redline.drivers.hooks.codex_patch import PatchError, parse

        command = payload.tool_input.get("command")
        if payload.tool_name != "apply_patch" or not isinstance(command, str):
            return []
        try:
            sections = parse(command)
        except PatchError:
            return []
        found: list[tuple[str, str | None]] = []
        for section in sections:
            found.append((section.path, section.contents if section.op == "add" else None))
            if section.move_to:
                found.append((section.move_to, None))
        return found
    key = "notebook_path" if payload.tool_name == "NotebookEdit" else "file_path"
    path_text = payload.tool_input.get(key)
    if not isinstance(path_text, str):
        return []
    approved = payload.tool_input.get("content")
    if not isinstance(approved, str):
        approved = payload.tool_input.get("new_string")
    return [(path_text, approved if isinstance(approved, str) else None)]


def post_tool(root: Path, payload: HookPayload) -> str:
    """Record what the agent wrote after an allowed call; returns a note ('' when none)."""
    from redline.drivers.hooks.mapping import inside
    from redline.drivers.hooks.notes import take_note

    notes = [note for note in [take_note(root, payload)] if note]
    for path_text, approved in _written_paths(payload):
        try:
            _path, rel = inside(root, path_text, payload.cwd)
        except MappingError:
            continue
        notes.extend(_record_write(root, payload, rel, approved))
    return "\n".join(notes)


def _record_write(root: Path, payload: HookPayload, rel: str, approved: str | None) -> list[str]:
    from redline.drivers.hooks.mapping import read_text
    from redline.workspace.entries import Entry, iter_entries
    from redline.workspace.journal import finish_external

    waiting = [
        entry
        for _folder, entry in iter_entries(root)
        if isinstance(entry, Entry)
        and entry.kind == "external"
        and not entry.complete
        and entry.source_tool_name.startswith("hook:")
        and entry.files == [rel]
    ]
    from redline.drivers.hooks import activity

    notes = []
    for entry in waiting:
        before = _pre_image(entry)
        outcome = finish_external(root, entry.id)
        if outcome.changed and entry.action_id:
            notes.extend(_git_after_write(root, payload, entry, before, outcome.as_approved))
        if outcome.changed and outcome.as_approved:
            activity.record(
                root, payload, "written", target=rel, action=entry.action_id, as_approved=True
            )
        if not outcome.changed or outcome.as_approved:
            continue
        diff = ""
        if isinstance(approved, str):
            from redline.workspace.preview import FileModify, Preview

            with contextlib.suppress(MappingError):
                now = read_text(root / rel, rel) or ""
                diff = "\n" + Preview([FileModify(rel, "", approved, now)]).diff()
        activity.record(
            root,
            payload,
            "written",
            target=rel,
            action=entry.action_id,
            as_approved=False,
            diff=diff.lstrip("\n"),
        )
        notes.append(
            f"redline: the agent's write of {rel} differs from what the reviewer approved "
            f"(recorded as journal entry {outcome.entry_id}; `redline undo` reverts it).{diff}"
        )
    return notes


def _pre_image(entry: Entry) -> bytes | None:
    """The journaled bytes of the file before the agent's write (None: it did not exist,
    or the copy cannot be read)."""
    from redline.workspace.entries import read_blob

    op = entry.ops[0]
    if op.before is None:
        return None
    try:
        return read_blob(entry, op.before.sha256)
    except Exception:
        log.debug("cannot read the pre-image of %s", op.path, exc_info=True)
        return None


def _git_after_write(
    root: Path, payload: HookPayload, entry: Entry, before: bytes | None, as_approved: bool
) -> list[str]:
    """Stage or commit the agent's recorded write of an applied action (``[git] on_apply``);
    the decisions log learns the bytes written and the model behind them either way."""
    from redline.config import ConfigError, git_settings
    from redline.review.provenance import Decided, record_agent_write
    from redline.workspace.decisions import DecisionsError, latest_applied
    from redline.workspace.preview import (
        DecodeError,
        FileCreate,
        FileDelete,
        FileModify,
        Preview,
        decode_text,
        sha256_bytes,
    )

    try:
        on_apply = git_settings(root).on_apply
    except ConfigError as exc:
        return [f"git: {exc}; nothing was staged"]
    action_id = entry.action_id
    assert action_id is not None, "only an action's journaled write comes here"
    rel = entry.ops[0].path
    if not as_approved:
        if on_apply == "none":
            return []
        return [
            f"git: {rel} was not {'staged' if on_apply == 'stage' else 'committed'}: the "
            "agent's write differs from what the reviewer approved"
        ]
    try:
        now: bytes | None = (Path(root) / rel).read_bytes()
    except FileNotFoundError:
        now = None
    except OSError as exc:
        return [f"git: cannot read {rel}: {exc.strerror or exc}; nothing was staged"]
    try:
        if now is None:
            if before is None:
                return []
            change: PreviewChange = FileDelete(
                rel, sha256_bytes(before), decode_text(before, rel)[0]
            )
        else:
            text, encoding = decode_text(now, rel)
            if before is None:
                change = FileCreate(rel, text, encoding)
            else:
                change = FileModify(
                    rel, sha256_bytes(before), decode_text(before, rel)[0], text, encoding
                )
    except DecodeError as exc:
        return [f"git: {exc}; nothing was staged"]
    try:
        decided = latest_applied(root, action_id)
    except DecisionsError:
        decided = None
    from redline.drivers.hooks.agent_model import model_of
    from redline.review.trailers import assisted

    source = decided.source if decided is not None else f"hook:{payload.agent}"
    model, why = model_of(payload)
    helper, why = assisted(source, model, why)
    facts = Decided(
        action_id,
        decided.label if decided is not None else entry.label,
        source,
        "apply",
        decided.reason if decided is not None else "",
        decided.edited if decided is not None else False,
        decided.resolved_by if decided is not None else "person",
        Preview([change]),
        via=decided.via if decided is not None else "hook",
        rule=decided.rule if decided is not None else None,
        assisted_by=helper,
        assisted_why=why,
    )
    return record_agent_write(root, facts)
