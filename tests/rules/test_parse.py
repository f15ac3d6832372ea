"""Reading rules files: every field, and malformed files named by file, line and key."""

from __future__ import annotations

import pytest

from redline.rules import Rule, RulesFileError, parse_rules

FULL = b"""
# the issue's example, every field
[[rule]]
name = "tests"
decision = "apply"
tools = ["edit", "ast_edit"]
paths = ["tests/**"]
max_changed_lines = 40
kinds = ["modify", "create"]
reason = "tests are cheap to review later"

[[rule]]
name = "migrations"
decision = "discard"
paths = ["migrations/**"]
reason = "never touch migrations"

[[rule]]
name = "rest"
decision = "ask"
"""


def test_every_field_is_read_in_file_order() -> None:
    rules = parse_rules(FULL, "rules.toml", "user")
    assert [r.name for r in rules] == ["tests", "migrations", "rest"]
    tests = rules[0]
    assert tests == Rule(
        name="tests",
        decision="apply",
        tools=("edit", "ast_edit"),
        paths=("tests/**",),
        max_changed_lines=40,
        kinds=("modify", "create"),
        reason="tests are cheap to review later",
        origin="user",
        file="rules.toml",
        line=3,
    )
    assert rules[1].line == 12 and rules[1].reason == "never touch migrations"
    rest = rules[2]
    assert (rest.tools, rest.paths, rest.max_changed_lines, rest.kinds) == (None,) * 4
    assert rest.where == "rules.toml:18"


def test_empty_file_has_no_rules() -> None:
    assert parse_rules(b"# nothing yet\n", "rules.toml", "user") == ()


@pytest.mark.parametrize(
    ("text", "line", "key", "words"),
    [
        ('[[rule]]\nname = "a"\ndecison = "apply"\n', 3, "decison", "did you mean 'decision'"),
        ('[[rule]]\nname = "a"\ndecision = "apply"\npath = ["x"]\n', 4, "path", "unknown key"),
        ('[[rule]]\ndecision = "apply"\n', 1, "name", "required"),
        ('[[rule]]\nname = ""\ndecision = "apply"\n', 2, "name", "required"),
        ('[[rule]]\nname = "a"\n', 1, "decision", "expected one of"),
        ('[[rule]]\nname = "a"\ndecision = "allow"\n', 3, "decision", "'allow'"),
        ('[[rule]]\nname = "a"\ndecision = "apply"\ntools = "edit"\n', 4, "tools", "list"),
        ('[[rule]]\nname = "a"\ndecision = "apply"\ntools = []\n', 4, "tools", "empty"),
        ('[[rule]]\nname = "a"\ndecision = "apply"\npaths = [3]\n', 4, "paths", "list"),
        (
            '[[rule]]\nname = "a"\ndecision = "apply"\nmax_changed_lines = -1\n',
            4,
            "max_changed_lines",
            "at least 0",
        ),
        (
            '[[rule]]\nname = "a"\ndecision = "apply"\nmax_changed_lines = true\n',
            4,
            "max_changed_lines",
            "whole number",
        ),
        ('[[rule]]\nname = "a"\ndecision = "apply"\nkinds = ["edit"]\n', 4, "kinds", "'edit'"),
        ('[[rule]]\nname = "a"\ndecision = "discard"\n', 1, "reason", "required for a discard"),
        ('[[rule]]\nname = "a"\ndecision = "ask"\nreason = 5\n', 4, "reason", "string"),
        (
            '\n[[rule]]\nname = "a"\ndecision = "ask"\n[[rule]]\nname = "a"\ndecision = "ask"\n',
            6,
            "name",
            "used twice",
        ),
        ("rules = 1\n", 1, "rules", "only [[rule]]"),
    ],
)
def test_malformed_rules_name_file_line_and_key(text: str, line: int, key: str, words: str) -> None:
    with pytest.raises(RulesFileError) as caught:
        parse_rules(text.encode(), "/home/me/rules.toml", "user")
    error = caught.value
    assert (error.file, error.line, error.key) == ("/home/me/rules.toml", line, key)
    assert str(error).startswith(f"/home/me/rules.toml:{line}: {key}: ")
    assert words in str(error)


def test_invalid_toml_names_the_line() -> None:
    with pytest.raises(RulesFileError) as caught:
        parse_rules(b'[[rule]]\nname = "a"\ndecision = apply\n', "r.toml", "user")
    assert caught.value.line == 3 and "not valid TOML" in str(caught.value)


def test_not_utf8_is_an_error() -> None:
    with pytest.raises(RulesFileError, match="not UTF-8"):
        parse_rules(b"\xff\xfe", "r.toml", "user")
