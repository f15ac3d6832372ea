"""``sources = [globs over kind:name]`` in a rule."""

from __future__ import annotations

from pathlib import Path

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


def test_old_records_of_an_mcp_client_read_as_mcp_name() -> None:
    from redline.workspace.queue import Source

    assert Source("mcp", "cursor").canonical == "mcp:cursor"
    assert Source("mcp", "cursor via MCP").canonical == "mcp:cursor"  # queued by 0.x
    assert Source("mcp", "MCP client").canonical == "mcp"
    assert Source("mcp", "").canonical == "mcp"


def test_the_old_spelling_in_a_rule_still_matches_and_rules_list_warns(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import os

    from redline.cli import main

    old = b'[[rule]]\nname = "old"\ndecision = "apply"\nsources = ["mcp:cursor via MCP"]\n'
    rules = parse_rules(old, "rules.toml", "user")
    assert decide(rules, facts("mcp:cursor", "mcp")).decision == "apply"
    assert decide(rules, facts("mcp:zed", "mcp")).decision == "ask"
    config = Path(os.environ["REDLINE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "rules.toml").write_bytes(old)
    capfd.readouterr()
    assert main(["rules", "-C", str(tmp_path), "list"]) == 0
    err = capfd.readouterr().err
    assert "rule 'old'" in err
    assert "source 'mcp:cursor via MCP' is the old spelling of 'mcp:cursor'" in err
    (config / "rules.toml").write_bytes(RULES)
    assert main(["rules", "-C", str(tmp_path), "list"]) == 0
    assert "old spelling" not in capfd.readouterr().err
