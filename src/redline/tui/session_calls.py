"""The blocking calls a person's key makes into the session, run on thread workers.

Each returns (or posts) what the UI needs to know; none touches a widget, so a worker can
run it and post the outcome back as a message (:mod:`redline.tui.messages`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from textual.message import Message

from redline.review.provenance import GitBatch, finish_batch
from redline.review.resolve import ResolveOutcome
from redline.review.result import ToolResult
from redline.review.session import Decision, Verb
from redline.review.workspace_source import WorkspaceSource
from redline.tui.messages import (
    BatchFinished,
    CommandFinished,
    MarkedFinished,
    ResolutionFinished,
)
from redline.tui.protocol import SessionLike


def dashboard_surface() -> str:
    """``browser`` for a dashboard ``redline serve`` runs (textual-serve's web driver), else
    ``dashboard``: the decisions log's ``via``."""
    import os

    return "browser" if "web_driver" in os.environ.get("TEXTUAL_DRIVER", "") else "dashboard"


def resolve_action(
    source: WorkspaceSource,
    verb: str,
    action_id: str,
    reason: str,
    only: list[str] | None,
    foreign_done: Callable[[str], object],
    batch: GitBatch | None = None,
) -> ResolveOutcome:
    """Apply or discard ``action_id`` (only its ``only`` parts, when given), whoever queued
    it: one call into the workspace's review source (``WorkspaceSource.resolve``), which
    decides through the session (:meth:`SessionLike.decide`, ``ReviewSession.decide``), and
    the session routes another process's action through the workspace queue; ``foreign_done`` hears such an action's
    outcome text first, when it succeeded. With ``batch``, an apply's ``[git] on_apply``
    step waits for the batch's one commit. The decisions log says it was decided here
    (``dashboard``, or ``browser`` under ``redline serve``)."""
    chosen: Verb = "apply" if verb == "apply" else "discard"
    foreign = source.queue is not None and source.own_action(action_id) is None
    try:
        outcome = source.resolve(
            action_id,
            Decision(
                chosen,
                reason,
                tuple(only) if only else None,
                by="human",
                batch=batch,
                via=dashboard_surface(),
            ),
        )
    except Exception as exc:
        return ResolveOutcome("failed", f"The session could not {verb} {action_id}: {exc}")
    if foreign and not outcome.is_error:
        foreign_done(outcome.text)
    return outcome


def resolve_all(
    session: SessionLike,
    verb: str,
    reason: str,
    post: Callable[[Message], object],
    source: WorkspaceSource | None = None,
) -> None:
    """Apply or discard the session's actions top first, until none is left or one cannot be:
    each through the workspace's review source (``source``, made from the session when not
    given), which decides through the session.

    Posts a :class:`BatchFinished` at the end (after the failed resolution, if one failed).
    """
    if source is None:
        from redline.tui.pending import workspace_source

        source = workspace_source(session)
    chosen: Verb = "apply" if verb == "apply" else "discard"
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
            outcome = source.resolve(top.id, Decision(chosen, reason, by="human"))
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
    source: WorkspaceSource | None = None,
) -> None:
    """Apply or discard each of ``action_ids`` (top first) with one ``reason``.

    Each goes through the session's own checks (stale, not newest, gone) exactly as if it
    were resolved alone, and one refusal does not stop the others. When an apply re-based
    another marked action, that action is resolved under its new id. Posts one
    :class:`MarkedFinished` with every action's outcome.

    With ``[git] on_apply = "commit"``, the marked applies become one commit (as
    ``redline pending apply ID ID … --batch``); its ``git:`` lines are the message's notes.
    """
    if source is None:
        from redline.tui.pending import workspace_source

        source = workspace_source(session)
    batch = _git_batch(session) if verb == "apply" else None
    renamed: dict[str, str] = {}
    results: list[tuple[str, ResolveOutcome]] = []
    for action_id in action_ids:
        current = action_id
        while current in renamed:
            current = renamed[current]
        outcome = resolve_action(
            source,
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

    queue = session.queue
    root = queue.root if queue is not None else session.cwd
    try:
        on_apply = git_settings(root).on_apply
    except (ConfigError, OSError):
        return None
    return GitBatch(root) if on_apply == "commit" else None


def apply_session_rules(session: SessionLike) -> list[str]:
    """After a session rule was added: the rules decide this session's waiting actions
    (``session.apply_rules``), and the session rules decide every other process's queued
    action they match, each through the one decision call (:meth:`SessionLike.decide`,
    logged as decided by the rule, via this dashboard). What each did."""
    from redline.rules import ActionFacts
    from redline.rules.hook import applied_text, discarded_text, failed_text
    from redline.rules.model import decide

    lines = list(session.apply_rules())
    queue, rules = session.queue, session.rules
    if queue is None or rules is None or not rules.session_rules:
        return lines
    session_rules = rules.session_rules
    for record in queue.list():
        if session.store.get(record.id) is not None:
            continue
        stale = record.stale or bool(queue.stale_reasons(record))
        decision = decide(session_rules, ActionFacts.of_record(record, stale=stale))
        if not decision.resolves or decision.rule is None:
            continue
        verb: Verb = "apply" if decision.decision == "apply" else "discard"
        outcome = session.decide(
            record.id,
            Decision(verb, decision.reason, by="rule", rule=decision.rule, via=dashboard_surface()),
        )
        if outcome.is_error:
            lines.append(failed_text(decision.rule, verb, record.label, outcome.text))
        elif verb == "apply":
            lines.append(applied_text(decision.rule, record.label, outcome.text))
        else:
            lines.append(discarded_text(decision.rule, record.label, decision.reason))
    return lines


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
    try:
        return session.can_undo()
    except Exception:
        # When the journal cannot be read, leave the key live: pressing it says why.
        return True
