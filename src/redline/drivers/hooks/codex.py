"""One Codex ``apply_patch`` call: one pending action per file, all decided, one answer.

The patch is read as Codex would apply it (:mod:`codex_patch`); each file it touches (a
move is the old path deleted and the new one written) is proposed as its own action,
labelled ``apply_patch PATH (n/N)`` with ``details.group`` = the tool-use id, and the hook
waits until every one is decided (or handed over at ``[hooks] wait_seconds``). Then:

- every file applied as proposed → ``allow`` (Codex applies its own patch);
- some applied, some edited by the reviewer, discarded or still pending → ``allow`` with
  ``updatedInput.command`` = a new patch writing exactly what was applied; the model is
  not told of a rewrite by Codex, so the post-tool hook tells it what happened to the
  other files (:mod:`notes`);
- nothing applied → ``deny`` with the reasons (never empty: Codex allows on an empty one).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from redline.drivers.hooks.answers import Answer
from redline.drivers.hooks.gateway import HookCall, HookSettings, follow_queue, open_session
from redline.drivers.hooks.mapping import FileChange, MappingError, map_codex
from redline.drivers.hooks.payload import HookPayload

if TYPE_CHECKING:
    from redline.review.session import PartsServed
    from redline.review.store import PendingAction
    from redline.workspace.queue import Resolution


async def review_patch(root: Path, payload: HookPayload, settings: HookSettings) -> Answer:
    if payload.tool_name != "apply_patch":
        return await HookCall(root, payload, settings).run()
    try:
        proposed = map_codex(root, payload)
    except MappingError as exc:
        return Answer("deny", str(exc))
    changes = [c for c in proposed if c.delete or c.old_text != c.new_text]
    if not changes:
        return Answer("allow", "redline: the patch changes nothing.")
    size = len(changes)
    calls = [
        HookCall(root, payload, settings, group=(n, size) if size > 1 else None)
        for n in range(1, size + 1)
    ]
    # One session for the whole patch: an owner request is served by the session that
    # holds the action, and a process's sessions would take each other's requests.
    queue, session = open_session(root, payload)

    def heard(action: PendingAction, resolution: Resolution | None) -> None:
        for call in calls:
            if call.owns(action.id):
                call.heard(action, resolution)

    def heard_parts(action: PendingAction, served: PartsServed) -> None:
        for call in calls:
            if call.owns(action.id):
                call.heard_parts(action, served)

    session.on_remote = heard
    session.on_removed_elsewhere = heard
    session.on_parts = heard_parts
    try:
        ruled = [
            await call.start(session, queue, change)
            for call, change in zip(calls, changes, strict=True)
        ]
        if not all(ruled):
            follow_queue(session)
        answers = await asyncio.gather(*(call.finish() for call in calls))
    finally:
        session.close()
        queue.close()
    return combine(root, payload, changes, calls, list(answers))


def _final(call: HookCall, proposed: FileChange) -> FileChange:
    return call.change or proposed


def combine(
    root: Path,
    payload: HookPayload,
    changes: list[FileChange],
    calls: list[HookCall],
    answers: list[Answer],
) -> Answer:
    blocked = [a.reason for a in answers if a.kind == "block"]
    if blocked:
        return Answer("block", "\n".join(blocked))
    allowed = [
        _final(call, change)
        for call, change, answer in zip(calls, changes, answers, strict=True)
        if answer.kind == "allow"
    ]
    others = [
        (change.rel, answer.reason)
        for change, answer in zip(changes, answers, strict=True)
        if answer.kind != "allow"
    ]
    if not allowed:
        if len(others) == 1:
            return Answer("deny", others[0][1], action_id=answers[0].action_id)
        return Answer("deny", "\n".join(f"{rel}: {reason}" for rel, reason in others))
    reason = "; ".join(a.reason for a in answers if a.kind == "allow" and a.reason)
    if not others and all(
        a == b for a, b in zip(allowed, changes, strict=True)
    ):  # as proposed: Codex's own patch
        return Answer("allow", reason)
    from redline.drivers.hooks.codex_patch import expressible, generate

    for change in allowed:
        if not change.delete and not expressible(change.new_text):
            return Answer(
                "block",
                f"Codex cannot write the reviewer's version of {change.rel} exactly (apply_patch "
                "ends every file with a newline and has no carriage returns); nothing was "
                "written. Propose the change again.",
            )
    patch = generate([(c.rel, c.old_text, None if c.delete else c.new_text) for c in allowed])
    note = _note(allowed, changes, others)
    from redline.drivers.hooks.notes import leave_note

    leave_note(root, payload, note)
    return Answer("allow", reason or "Applied as reviewed.", {"command": patch})


def _note(
    allowed: list[FileChange], proposed: list[FileChange], others: list[tuple[str, str]]
) -> str:
    lines = ["redline: your apply_patch call was reviewed file by file."]
    edited = {c.rel for c in allowed} - {c.rel for c in proposed if c in allowed}
    for change in allowed:
        how = "with the reviewer's edits" if change.rel in edited else "as proposed"
        verb = "deleted" if change.delete else "written"
        lines.append(f"- {change.rel}: applied {how} ({verb}).")
    for rel, reason in others:
        lines.append(f"- {rel}: not written. {reason}")
    if edited:
        lines.append("Read the edited files before changing them again.")
    return "\n".join(lines)
