"""Review rules: decide the obvious actions automatically, leave the rest for review.

See docs/rules.md. :class:`RuleSet` holds the rules in force for a workspace (session,
workspace when trusted, user); :func:`run_rules` is the hook a push path calls.
"""

from __future__ import annotations

from redline.rules.hook import (
    RuleOutcome,
    RuleResolver,
    decide_and_resolve,
    queue_resolver,
    run_rules,
)
from redline.rules.model import ActionFacts, Decision, FileFact, Rule, decide, session_rule_for
from redline.rules.parse import RulesFileError, parse_rules
from redline.rules.ruleset import RuleSet, RulesSnapshot, user_rules_file, workspace_rules_file

__all__ = [
    "ActionFacts",
    "Decision",
    "FileFact",
    "Rule",
    "RuleOutcome",
    "RuleResolver",
    "RuleSet",
    "RulesFileError",
    "RulesSnapshot",
    "decide",
    "decide_and_resolve",
    "parse_rules",
    "queue_resolver",
    "run_rules",
    "session_rule_for",
    "user_rules_file",
    "workspace_rules_file",
]
