"""The ``a`` key's offer: a session rule that always applies this tool's changes under this
folder, with the question that says what it will match and where it is kept."""

from __future__ import annotations

from dataclasses import dataclass

from redline.review.store import PendingAction
from redline.rules import ActionFacts, session_rule_for
from redline.rules.model import Rule, mismatch
from redline.tui.protocol import SessionLike


@dataclass(frozen=True)
class RuleOffer:
    rule: Rule
    question: str


def offer_for(session: SessionLike, action: PendingAction) -> RuleOffer | None:
    """The rule for ``action`` and the question to ask; None when it changes no files."""
    rule = session_rule_for(ActionFacts.of(action))
    if rule is None:
        return None
    folder = rule.paths[0] if rule.paths else "**"
    tool = rule.tools[0] if rule.tools else action.source_tool_name
    now = [
        other.id
        for other in session.store.snapshot()
        if other.id != action.id and mismatch(rule, ActionFacts.of(other)) is None
    ]
    also = f" It would also apply {', '.join(now)} now." if now else ""
    question = (
        f"Always apply {tool} changes under {folder} for this session?\n\n"
        f"It matches every change the {tool} tool proposes to files under {folder} "
        f"(this one, {action.id}, included), from this session's agent.{also} "
        "It is kept in memory for this session only and saved nowhere; a rule that "
        "lasts goes in rules.toml (see docs/rules.md)."
    )
    return RuleOffer(rule, question)
