"""The ``a`` key's offer: a session rule that always applies this tool's changes under this
folder, with the question that says what it will match and where it is kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from redline.review.store import PendingAction
from redline.rules import ActionFacts, session_rule_for
from redline.rules.model import Rule, decide
from redline.tui.protocol import SessionLike
from redline.workspace.queue import QueueError


@dataclass(frozen=True)
class RuleOffer:
    rule: Rule
    question: str


def offer_for(
    session: SessionLike, action: PendingAction, rules: Sequence[Rule] = ()
) -> RuleOffer | None:
    """The rule for ``action`` and the question to ask; None when it changes no files.

    ``rules``: the rules in force now (session rules first). The question names only the
    actions the new rule will really apply at once: rules decide the stack from the top and
    stop at the first action they leave for a person (so an action below it is not claimed,
    even when the new rule matches it), and a rule that comes first decides its actions."""
    rule = session_rule_for(ActionFacts.of(action))
    if rule is None:
        return None
    folder = rule.paths[0] if rule.paths else "**"
    tool = rule.tools[0] if rule.tools else action.source_tool_name
    now = applied_now(session.store.snapshot(), rule, rules)
    now += [i for i in queued_now(session, rule, rules) if i not in now]
    also = f" It applies {', '.join(now)} now." if now else ""
    question = (
        f"Always apply {tool} changes under {folder} for this session?\n\n"
        f"It matches every change the {tool} tool proposes to files under {folder} "
        f"(this one, {action.id}, included), from this session's agent and from the "
        f"other processes queueing in this workspace.{also} "
        "It is kept in memory for this session only and saved nowhere; a rule that "
        "lasts goes in rules.toml (see docs/rules.md)."
    )
    return RuleOffer(rule, question)


def applied_now(
    actions: Sequence[PendingAction], new: Rule, rules: Sequence[Rule] = ()
) -> list[str]:
    """The ids (top first) that deciding ``actions`` (top first) with ``rules`` plus ``new``
    (after the other session rules) applies by ``new``; it stops where the rules ask."""
    session = [r for r in rules if r.origin == "session"]
    files = [r for r in rules if r.origin != "session"]
    combined = [*session, new, *files]
    found: list[str] = []
    for action in actions:
        decision = decide(combined, ActionFacts.of(action))
        if not decision.resolves or decision.checks == "pass":
            break  # a person (or the checks) decides this one: the rules stop here
        if decision.decision == "apply" and decision.rule == new.name:
            found.append(action.id)
    return found


def queued_now(session: SessionLike, new: Rule, rules: Sequence[Rule] = ()) -> list[str]:
    """The ids of other processes' queued actions that the session rules plus ``new``
    would decide by ``new`` now (as ``session_calls.apply_session_rules`` then does)."""
    queue = session.queue
    if queue is None:
        return []
    combined = [*(r for r in rules if r.origin == "session"), new]
    found: list[str] = []
    try:
        records = queue.list()
    except QueueError:  # the question is advice: an unreadable queue names nothing more
        return []
    for record in records:
        if session.store.get(record.id) is not None:
            continue
        decision = decide(combined, ActionFacts.of_record(record, stale=record.stale))
        if decision.resolves and decision.decision == "apply" and decision.rule == new.name:
            found.append(record.id)
    return found
