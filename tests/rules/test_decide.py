"""How rules decide: every condition, first match wins, and the safety limits."""

from __future__ import annotations

import pytest

from redline.review.store import PendingAction
from redline.rules import ActionFacts, FileFact, Rule, decide
from redline.workspace.preview import FileCreate, FileModify, FileRename, Preview


def facts(*paths: str, tool: str = "edit", kind: str = "modify", **more: object) -> ActionFacts:
    files = tuple(FileFact((p,), kind) for p in paths)  # type: ignore[arg-type]
    return ActionFacts(source_tool_name=tool, files=files, **more)  # type: ignore[arg-type]


def rule(name: str = "r", decision: str = "apply", **more: object) -> Rule:
    return Rule(name=name, decision=decision, **more)  # type: ignore[arg-type]


def test_no_rules_means_ask() -> None:
    decision = decide([], facts("a.py"))
    assert (decision.decision, decision.rule) == ("ask", None)
    assert not decision.resolves and "no rule matched" in decision.why


def test_first_match_wins_in_order() -> None:
    rules = [
        rule("discard-mig", "discard", paths=("migrations/**",), reason="no"),
        rule("all", "apply"),
    ]
    assert decide(rules, facts("migrations/0001.py")).rule == "discard-mig"
    assert decide(rules, facts("src/a.py")).rule == "all"
    assert decide(list(reversed(rules)), facts("migrations/0001.py")).rule == "all"


def test_discard_carries_its_reason() -> None:
    decision = decide([rule("m", "discard", reason="hand-written")], facts("x"))
    assert (decision.decision, decision.reason, decision.resolves) == (
        "discard",
        "hand-written",
        True,
    )


@pytest.mark.parametrize(
    ("tools", "tool", "kind", "matches"),
    [
        (("edit",), "edit", "agent", True),
        (("edit",), "write", "agent", False),
        (("ast_*",), "ast_edit", "agent", True),
        (("acp:*",), "acp:write_text_file", "acp", True),
        (("acp:*",), "write_text_file", "acp", True),  # the source kind counts as the prefix
        (("acp:*",), "edit", "agent", False),
        (("mcp:*",), "mcp:propose_edit", "mcp", True),
        (("acp:edit",), "acp:execute", "acp", False),
    ],
)
def test_tools_globs(tools: tuple[str, ...], tool: str, kind: str, matches: bool) -> None:
    decision = decide([rule(tools=tools)], facts("a.py", tool=tool, source_kind=kind))
    assert (decision.rule == "r") is matches


def test_paths_every_file_must_match_gitignore_style() -> None:
    r = rule(paths=("tests/**", "*.md"))
    assert decide([r], facts("tests/unit/test_a.py", "docs/guide.md")).rule == "r"
    assert decide([r], facts("tests/test_a.py", "src/a.py")).rule is None
    why = decide([r], facts("tests/test_a.py", "src/a.py")).why
    assert "no rule matched" in why


def test_a_rename_needs_both_paths_to_match() -> None:
    r = rule(paths=("tests/**",))
    inside = ActionFacts("batch_rename", files=(FileFact(("tests/a.py", "tests/b.py"), "rename"),))
    across = ActionFacts("batch_rename", files=(FileFact(("src/a.py", "tests/b.py"), "rename"),))
    assert decide([r], inside).rule == "r"
    assert decide([r], across).rule is None


def test_an_action_with_no_files_never_matches_a_rule_with_paths() -> None:
    permission = ActionFacts("custom", has_preview=False)
    r = rule(paths=("**",), kinds=("permission",))
    assert decide([r], permission).rule is None
    assert decide([rule(kinds=("permission",))], permission).decision == "apply"


def test_max_changed_lines_counts_added_plus_removed() -> None:
    r = rule(max_changed_lines=40)
    assert decide([r], facts("a", added=20, removed=20)).rule == "r"
    assert decide([r], facts("a", added=21, removed=20)).rule is None


@pytest.mark.parametrize(
    ("kinds", "action_kinds", "matches"),
    [
        (("modify", "create"), ("modify",), True),
        (("modify", "create"), ("modify", "create"), True),
        (("modify",), ("modify", "delete"), False),
        (("rename",), ("rename",), True),
        (("delete",), ("create",), False),
    ],
)
def test_kinds_every_kind_must_be_listed(
    kinds: tuple[str, ...], action_kinds: tuple[str, ...], matches: bool
) -> None:
    files = tuple(FileFact((f"f{i}",), k) for i, k in enumerate(action_kinds))  # type: ignore[arg-type]
    decision = decide([rule(kinds=kinds)], ActionFacts("edit", files=files))
    assert (decision.rule == "r") is matches


def test_a_stale_action_is_never_applied_but_may_be_discarded() -> None:
    decision = decide([rule("tests")], facts("tests/a.py", stale=True))
    assert decision.decision == "ask" and decision.rule == "tests"
    assert "stale" in decision.why and not decision.resolves
    discard = decide([rule("d", "discard", reason="r")], facts("a", stale=True))
    assert discard.decision == "discard"


def test_no_preview_needs_permission_kind_or_the_tool_named() -> None:
    bare = ActionFacts("deploy", has_preview=False)
    assert decide([rule()], bare).decision == "ask"
    assert "no preview" in decide([rule()], bare).why
    assert decide([rule(tools=("dep*",))], bare).decision == "ask"  # a glob is not naming it
    assert decide([rule(tools=("deploy",))], bare).decision == "apply"
    assert decide([rule(kinds=("permission",))], bare).decision == "apply"


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd", "a/../../b"])
def test_nothing_outside_the_workspace_is_applied(path: str) -> None:
    decision = decide([rule()], facts(path))
    assert decision.decision == "ask" and "outside the workspace" in decision.why
    # and no paths glob matches it either
    assert decide([rule(paths=("**",))], facts(path)).rule is None


def test_facts_of_a_pending_action() -> None:
    preview = Preview(
        [
            FileModify("src/a.py", "0" * 64, "x\ny\n", "x\nz\n"),
            FileCreate("tests/t.py", "1\n2\n"),
            FileRename("old.py", "new.py", "0" * 64),
        ]
    )
    action = PendingAction(
        label="Edit", apply=lambda r: None, source_tool_name="edit", preview=preview
    )
    got = ActionFacts.of(action)
    assert got.kinds == ("modify", "create", "rename")
    assert got.all_paths == ("src/a.py", "tests/t.py", "old.py", "new.py")
    assert (got.added, got.removed, got.has_preview, got.stale) == (3, 1, True, False)
    bare = ActionFacts.of(PendingAction(label="Run", apply=lambda r: None, source_tool_name="sh"))
    assert bare.kinds == ("permission",) and not bare.has_preview and bare.files == ()


def test_the_session_rule_offered_for_an_action() -> None:
    from redline.rules import session_rule_for

    offered = session_rule_for(facts("tests/unit/a.py", "tests/unit/deep/b.py"))
    assert offered is not None
    assert offered.name == "always apply edit changes under tests/unit/**"
    assert (offered.tools, offered.paths, offered.origin) == (
        ("edit",),
        ("tests/unit/**",),
        "session",
    )
    assert decide([offered], facts("tests/unit/x/y.py")).decision == "apply"
    assert decide([offered], facts("tests/other.py")).rule is None
    top = session_rule_for(facts("a.py", tool="write"))
    assert top is not None and top.paths == ("**",)
    assert session_rule_for(ActionFacts("sh", has_preview=False)) is None
