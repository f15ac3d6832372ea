"""A review rule's decision on a hook's action, made at its push (docs/rules.md).

The rule decides through :meth:`ReviewSession.resolve`, the one resolution path, as for
every other source. Nothing in a rule's whole apply or discard of the hook's own action
waits (its callbacks are plain functions, the store's lock is free before the queue is
followed), so :func:`run_now` drives that coroutine to its end without an event loop: a
rule-decided call imports no asyncio, and the resolution machinery for parts, edits and
re-bases stays unloaded (issue 49). An apply rule that first runs the checks
(``checks = "pass"``) runs them in a thread, so it is decided on the loop instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Coroutine
from typing import TYPE_CHECKING, TypeVar

from redline.lazylog import LazyLogger

if TYPE_CHECKING:
    from pathlib import Path

    from redline.review.session import ReviewSession
    from redline.review.store import PendingAction
    from redline.rules import ActionFacts, RuleOutcome, RuleSet
    from redline.rules import Decision as RuleDecision

log = LazyLogger(__name__)

T = TypeVar("T")


class NeedsLoop(RuntimeError):
    """The coroutine waited for something: only an event loop can carry it on."""


def run_now(coro: Coroutine[object, object, T]) -> T:
    """Run ``coro``, which never waits, to its end without an event loop (NeedsLoop if it
    does wait: it is closed there, its ``finally`` blocks run)."""
    try:
        coro.send(None)
    except StopIteration as done:
        value: T = done.value
        return value
    coro.close()
    raise NeedsLoop("the resolution waited for something; it needs an event loop")


def rule_files_exist(root: Path) -> bool:
    """Whether a rules file may be there (user or workspace; anything at the path counts,
    so an unreadable or odd one still reaches the rules engine, which reports it)."""
    import os

    from redline.paths import user_config_dir
    from redline.workspace.state import state_dir

    return any(
        os.path.lexists(folder / "rules.toml") for folder in (user_config_dir(), state_dir(root))
    )


def waits_for_checks(rules: RuleSet, agent: str, action: PendingAction) -> bool | None:
    """None: no rule decides ``action``; True: the rule deciding it runs the checks first
    (in a thread: on the loop); False: a rule decides it and nothing waits."""
    decision = rules.decide(_facts(action, agent))
    if not decision.resolves or decision.rule is None:
        return None
    return decision.decision == "apply" and decision.checks == "pass"


def _facts(action: PendingAction, agent: str) -> ActionFacts:
    from redline.rules import ActionFacts

    return dataclasses.replace(ActionFacts.of(action, "hook"), source=f"hook:{agent}")


async def decide(
    rules: RuleSet, session: ReviewSession, agent: str, action: PendingAction
) -> RuleOutcome | None:
    """The rules' decision on ``action``, resolved through ``session`` (None: no rule
    decides it, or the rules failed: it waits for review)."""
    from redline.review.session import Decision, Verb
    from redline.rules import decide_and_resolve

    async def resolve(
        verb: str, reason: str, action_id: str, decision: RuleDecision
    ) -> tuple[bool, str]:
        chosen: Verb = "apply" if verb == "apply" else "discard"
        outcome = await session.resolve(
            action_id, Decision(chosen, reason, by="rule", rule=decision.rule)
        )
        return not outcome.is_error, outcome.text

    try:
        return await decide_and_resolve(
            rules,
            _facts(action, agent),
            action.id,
            action.label,
            resolve,
            preview=action.preview,
        )
    except NeedsLoop:
        raise
    except Exception:  # a broken rule never loses the proposal: it waits for review
        log.exception("review rules could not decide %s", action.id)
        return None
