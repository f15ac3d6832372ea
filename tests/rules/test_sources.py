"""``sources = [globs over kind:name]`` in a rule."""

from __future__ import annotations

import pytest

from redline.rules.model import ActionFacts, FileFact, decide
from redline.rules.parse import RulesFileError, parse_rules

RULES = b"""
[[rule]]
name = "hooks and cursor"
decision = "apply"
sources = ["hook:*", "mcp:cursor"]
"""


def facts(source: str, kind: str) -> ActionFacts:
    return ActionFacts(
        "edit", source_kind=kind, files=(FileFact(("a.py",), "modify"),), source=source
    )


@pytest.mark.parametrize(
    ("source", "kind", "decision"),
    [
        ("hook:claude", "hook", "apply"),
        ("hook:codex", "hook", "apply"),
        ("mcp:cursor", "mcp", "apply"),
        ("mcp:zed", "mcp", "ask"),
        ("exec", "exec", "ask"),
        ("", "hook", "ask"),  # only the kind is known: "hook" is not "hook:*"
    ],
)
def test_sources_match_the_canonical_source(source: str, kind: str, decision: str) -> None:
    rules = parse_rules(RULES, "rules.toml", "user")
    assert rules[0].sources == ("hook:*", "mcp:cursor")
    assert decide(rules, facts(source, kind)).decision == decision


def test_why_names_the_source() -> None:
    rules = parse_rules(RULES, "rules.toml", "user")
    assert "source hook:claude" in decide(rules, facts("hook:claude", "hook")).why


def test_sources_must_be_a_list_of_strings() -> None:
    with pytest.raises(RulesFileError, match="sources: expected a list of non-empty strings"):
        parse_rules(b'[[rule]]\nname = "x"\ndecision = "apply"\nsources = "hook:*"\n', "r", "user")
