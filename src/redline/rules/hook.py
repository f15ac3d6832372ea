"""The one hook every push path calls: decide a freshly pushed action by the rules.

:func:`run_rules` evaluates the rules for one action and, when a rule says ``apply`` or
``discard``, resolves it through the caller's normal resolution path (``resolve``), so
the stale check, safe apply, journal and undo are the same as for a person's decision.
It returns what the model should read instead of the preview banner.

The built-in agent session calls it from ``AgentSession._execute`` path with
``AgentSession._resolve(..., by="rule")``; the workspace queue, ACP and MCP push paths
call it the same way with their own resolver (for the queue:
``redline.review.queued.resolve_queued(queue, id, verb, reason,
resolved_by="rule", rule=name)``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redline.review.store import PendingAction
from redline.rules.model import ActionFacts, Decision
from redline.rules.ruleset import RuleSet

if TYPE_CHECKING:
    from redline.workspace.preview import Preview
    from redline.workspace.queue import WorkspaceQueue

# (verb, reason, action_id, decision) -> (succeeded, the resolution's result text)
RuleResolver = Callable[[str, str, str, Decision], Awaitable[tuple[bool, str]]]


@dataclass(frozen=True)
class RuleOutcome:
    """What a rule did to one action."""

    decision: Decision
    action_id: str
    label: str
    resolved: bool
    result_text: str
    text: str


def applied_text(rule: str, label: str, result_text: str) -> str:
    head = f"Applied by rule {rule}: {label.rstrip('.')}."
    result_text = result_text.strip()
    return f"{head}\n{result_text}" if result_text else head


def discarded_text(rule: str, label: str, reason: str) -> str:
    return f"Discarded by rule {rule}: {label.rstrip('.')}. Reason: {reason}"


def checks_failed_text(rule: str, label: str, why: str, summary: str) -> str:
    line = f" ({summary})" if summary else ""
    return (
        f"Rule {rule} would apply {label.rstrip('.')} once its checks pass, but {why}{line}. "
        "It waits for review."
    )


def failed_text(rule: str, verb: str, label: str, result_text: str) -> str:
    return (
        f"Rule {rule} would {verb} {label.rstrip('.')}, but that failed: "
        f"{result_text.strip()} It waits for review."
    )


async def run_rules(
    rules: RuleSet,
    action: PendingAction,
    resolve: RuleResolver,
    *,
    source_kind: str = "agent",
) -> RuleOutcome | None:
    """Decide ``action`` by ``rules``; None when the rules leave it for review (``ask``)."""
    return await decide_and_resolve(
        rules,
        ActionFacts.of(action, source_kind),
        action.id,
        action.label,
        resolve,
        preview=action.preview,
    )


async def decide_and_resolve(
    rules: RuleSet,
    facts: ActionFacts,
    action_id: str,
    label: str,
    resolve: RuleResolver,
    *,
    preview: Preview | None = None,
) -> RuleOutcome | None:
    """:func:`run_rules` for a push path that has facts rather than a PendingAction (for
    example a workspace-queue record: ``ActionFacts.of_record(record)``).

    An apply rule with ``checks = "pass"`` first runs the configured checks on ``preview``
    (in a thread; see :mod:`redline.checks.gate`) and applies only when every one passes
    with no new findings; otherwise the action waits for review and the outcome says why.
    """
    decision = rules.decide(facts)
    if not decision.resolves or decision.rule is None:
        return None
    verb = decision.decision
    if verb == "apply" and decision.checks == "pass":
        import asyncio

        from redline.checks.gate import checks_gate

        answer = await asyncio.to_thread(
            checks_gate, rules.root, action_id, preview, trusted=rules.trusted()
        )
        if not answer.passed:
            asked = Decision(
                "ask",
                rule=decision.rule,
                why=f"{decision.why}; but {answer.why}",
                origin=decision.origin,
                where=decision.where,
                checks=decision.checks,
            )
            text = checks_failed_text(decision.rule, label, answer.why, answer.summary)
            return RuleOutcome(asked, action_id, label, False, answer.why, text)
    reason = decision.reason  # an apply rule may have none; the event names the rule
    ok, result_text = await resolve(verb, reason, action_id, decision)
    if not ok:
        text = failed_text(decision.rule, verb, label, result_text)
    elif verb == "apply":
        text = applied_text(decision.rule, label, result_text)
    else:
        text = discarded_text(decision.rule, label, decision.reason)
    return RuleOutcome(decision, action_id, label, ok, result_text, text)


def queue_resolver(queue: WorkspaceQueue, via: str = "mcp") -> RuleResolver:
    """A :data:`RuleResolver` that resolves by id in the workspace queue, logged as
    ``resolved_by="rule"`` with the rule's name (for push paths without a session)."""

    async def resolve(
        verb: str, reason: str, action_id: str, decision: Decision
    ) -> tuple[bool, str]:
        from redline.review.queued import resolve_queued

        result = await resolve_queued(
            queue, action_id, verb, reason, resolved_by="rule", rule=decision.rule, via=via
        )
        return not result.is_error, result.text

    return resolve
