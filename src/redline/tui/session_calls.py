"""The blocking calls a person's key makes into the session, run on thread workers.

Each returns (or posts) what the UI needs to know; none touches a widget, so a worker can
run it and post the outcome back as a message (:mod:`redline.tui.messages`).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from textual.message import Message

from redline.review.provenance import GitBatch, finish_batch
from redline.review.queued import resolve_queued
from redline.review.resolve import ResolveOutcome
from redline.review.result import ToolResult
from redline.tui.messages import (
    BatchFinished,
    CommandFinished,
    MarkedFinished,
    ResolutionFinished,
)
from redline.tui.pending import session_queue
from redline.tui.protocol import SessionLike


def dashboard_surface() -> str:
    """``browser`` for a dashboard ``redline serve`` runs (textual-serve's web driver), else
    ``dashboard``: the decisions log's ``via``."""
    import os

    return "browser" if "web_driver" in os.environ.get("TEXTUAL_DRIVER", "") else "dashboard"


def resolve_action(
    session: SessionLike,
    verb: str,
    action_id: str,
    reason: str,
    only: list[str] | None,
    foreign_done: Callable[[str], object],
    batch: GitBatch | None = None,
) -> ResolveOutcome:
    """Apply or discard ``action_id`` (only its ``only`` parts, when given).

    Another process's action is resolved through the workspace queue, as ``redline
    pending`` does; ``foreign_done`` hears its outcome text first, when it succeeded.
    With ``batch``, an apply's ``[git] on_apply`` step waits for the batch's one commit.
    """
    surface = dashboard_surface()
    review = getattr(session, "review", None)
    if review is not None and getattr(review, "via", None) in ("exec", "sdk"):
        review.via = surface  # this session's decisions are made here from now on
    try:
        queue = session_queue(session)
        if queue is not None and session.store.get(action_id) is None:
            result = asyncio.run(
                resolve_queued(queue, action_id, verb, reason, batch=batch, via=surface)
            )
            if result.is_error:
                outcome = ResolveOutcome("failed", result.text, reason=reason)
            elif verb == "apply":
                outcome = ResolveOutcome("applied", result.text, reason=reason)
            else:
                outcome = ResolveOutcome("discarded", result.text, reason=reason)
            if not result.is_error:
                foreign_done(result.text)
        else:
            # The batch only when there is one: sessions (and test fakes) without batches
            # keep working.
            extra: dict[str, Any] = {"batch": batch} if batch is not None else {}
            outcome = session.resolve(
                verb, reason, action_id=action_id, by="human", only=only or None, **extra
            )
    except Exception as exc:
        outcome = ResolveOutcome("failed", f"The session could not {verb} {action_id}: {exc}")
    return outcome


def resolve_all(
    session: SessionLike, verb: str, reason: str, post: Callable[[Message], object]
) -> None:
    """Apply or discard the session's actions top first, until none is left or one cannot be.

    Posts a :class:`BatchFinished` at the end (after the failed resolution, if one failed).
    """
    done = 0
    while True:
        top = session.store.peek()
        if top is None:
            break
        if verb == "apply" and top.stale:
            stop = f"{top.id} ({top.label}) is stale: {top.stale_reason}"
            post(BatchFinished(verb, done, stop))
            return
        try:
            outcome = session.resolve(verb, reason, action_id=top.id, by="human")
        except Exception as exc:
            outcome = ResolveOutcome("failed", str(exc))
        if outcome.is_error:
            post(ResolutionFinished(verb, top.id, reason, outcome))
            post(BatchFinished(verb, done, f"{top.id} ({top.label}) failed"))
            return
        done += 1
    post(BatchFinished(verb, done))


def resolve_marked(
    session: SessionLike,
    verb: str,
    action_ids: tuple[str, ...],
    reason: str,
    post: Callable[[Message], object],
    foreign_done: Callable[[str, str], object],
) -> None:
    """Apply or discard each of ``action_ids`` (top first) with one ``reason``.

    Each goes through the session's own checks (stale, not newest, gone) exactly as if it
    were resolved alone, and one refusal does not stop the others. When an apply re-based
    another marked action, that action is resolved under its new id. Posts one
    :class:`MarkedFinished` with every action's outcome.

    With ``[git] on_apply = "commit"``, the marked applies become one commit (as
    ``redline pending apply ID ID … --batch``); its ``git:`` lines are the message's notes.
    """
    batch = _git_batch(session) if verb == "apply" else None
    renamed: dict[str, str] = {}
    results: list[tuple[str, ResolveOutcome]] = []
    for action_id in action_ids:
        current = action_id
        while current in renamed:
            current = renamed[current]
        outcome = resolve_action(
            session,
            verb,
            current,
            reason,
            None,
            functools.partial(foreign_done, current),
            batch=batch,
        )
        for carried in outcome.rebased:
            if carried.new_id:
                renamed[carried.old_id] = carried.new_id
        results.append((current, outcome))
    notes = finish_batch(batch) if batch is not None else []
    post(MarkedFinished(verb, tuple(results), tuple(notes)))


def _git_batch(session: SessionLike) -> GitBatch | None:
    """A batch for one commit when ``[git] on_apply = "commit"`` (None otherwise, or when
    the setting cannot be read: each apply then says why itself)."""
    from redline.config import ConfigError, git_settings

    queue = session_queue(session)
    root = queue.root if queue is not None else session.cwd
    try:
        on_apply = git_settings(root).on_apply
    except (ConfigError, OSError):
        return None
    return GitBatch(root) if on_apply == "commit" else None


def run_command(command: str, call: Callable[[], Any]) -> CommandFinished:
    """Run ``call`` (undo, re-preview, trust, an edit, the session rules) and say how it went."""
    try:
        value = call()
        result = (
            value if isinstance(value, ToolResult) else ToolResult.text_result(str(value or ""))
        )
    except Exception as exc:
        result = ToolResult.error(f"{command} failed: {exc}")
        return CommandFinished(command, result, logged=False)
    # The session logs undo's refusal itself (a notice event); the rest it does not.
    return CommandFinished(command, result, logged=command == "undo")


def undo_available(session: SessionLike) -> bool:
    """Whether there is an apply to undo (True when the journal cannot be read: pressing
    the key then says why)."""
    probe = getattr(session, "can_undo", None)
    try:
        if callable(probe):
            return bool(probe())
        from redline.workspace.journal import undo_history

        return bool(undo_history(session.cwd))
    except Exception:
        # When the journal cannot be read, leave the key live: pressing it says why.
        return True
