"""The rules in force: where they come from, trust, reloading, and broken files."""

from __future__ import annotations

import os
from pathlib import Path

from redline.rules import ActionFacts, FileFact, Rule, RuleSet, user_rules_file
from redline.trust import revoke, trust

APPLY_ALL = '[[rule]]\nname = "{name}"\ndecision = "apply"\n'
DISCARD_ALL = '[[rule]]\nname = "{name}"\ndecision = "discard"\nreason = "{name} says no"\n'


def write_user(text: str) -> Path:
    path = user_rules_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_workspace(root: Path, text: str) -> Path:
    (root / ".redline").mkdir(mode=0o700, exist_ok=True)
    path = root / ".redline" / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


def edit(path: str = "src/a.py") -> ActionFacts:
    return ActionFacts("edit", files=(FileFact((path,), "modify"),), added=1, removed=1)


def test_no_files_no_rules(tmp_path: Path) -> None:
    snapshot = RuleSet(tmp_path).snapshot()
    assert snapshot.rules == () and snapshot.errors == () and snapshot.notes == ()
    assert RuleSet(tmp_path).decide(edit()).decision == "ask"


def test_user_rules_always_count(tmp_path: Path) -> None:
    write_user(APPLY_ALL.format(name="mine"))
    decision = RuleSet(tmp_path).decide(edit())
    assert (decision.decision, decision.rule, decision.origin) == ("apply", "mine", "user")


def test_untrusted_workspace_rules_are_ignored_and_said_so(tmp_path: Path) -> None:
    write_workspace(tmp_path, APPLY_ALL.format(name="repo"))
    rules = RuleSet(tmp_path)
    snapshot = rules.snapshot()
    assert snapshot.rules == () and not snapshot.workspace_trusted
    assert snapshot.ignored_workspace_file == str(tmp_path / ".redline" / "rules.toml")
    assert "not trusted" in snapshot.notes[0]
    assert rules.decide(edit()).decision == "ask"


def test_trusted_workspace_rules_come_before_user_rules(tmp_path: Path) -> None:
    write_user(APPLY_ALL.format(name="mine"))
    write_workspace(tmp_path, DISCARD_ALL.format(name="repo"))
    rules = RuleSet(tmp_path)
    assert rules.decide(edit()).rule == "mine"
    trust(tmp_path)  # trusting while the rule set lives takes effect at once
    snapshot = rules.snapshot()
    assert [r.name for r in snapshot.rules] == ["repo", "mine"]
    assert [r.origin for r in snapshot.rules] == ["workspace", "user"]
    assert snapshot.decide(edit()).rule == "repo" and snapshot.ignored_workspace_file is None
    revoke(tmp_path)
    assert rules.decide(edit()).rule == "mine"
    assert RuleSet(tmp_path, trusted=True).decide(edit()).rule == "repo"  # --trust


def test_session_rules_come_first(tmp_path: Path) -> None:
    write_user(DISCARD_ALL.format(name="mine"))
    rules = RuleSet(tmp_path)
    stored = rules.add_session_rule(
        Rule(name="src edits", decision="apply", tools=("edit",), paths=("src/**",))
    )
    assert stored.origin == "session" and stored.where == "this session"
    assert rules.decide(edit("src/a.py")).rule == "src edits"
    assert rules.decide(edit("lib/a.py")).rule == "mine"
    assert rules.remove_session_rule("src edits")
    assert rules.decide(edit("src/a.py")).rule == "mine"


def test_an_edited_file_takes_effect_at_the_next_decision(tmp_path: Path) -> None:
    path = write_user(APPLY_ALL.format(name="first"))
    rules = RuleSet(tmp_path)
    assert rules.decide(edit()).rule == "first"
    path.write_text(DISCARD_ALL.format(name="second"), encoding="utf-8")
    assert rules.decide(edit()).rule == "second"
    path.unlink()
    assert rules.decide(edit()).rule is None


def test_a_malformed_file_contributes_nothing_and_the_other_still_counts(tmp_path: Path) -> None:
    write_user(APPLY_ALL.format(name="mine") + "bogus = 1\n")
    write_workspace(tmp_path, DISCARD_ALL.format(name="repo"))
    seen: list[tuple[str, ...]] = []
    rules = RuleSet(tmp_path, trusted=True)
    rules.on_notes_changed(lambda snap: seen.append(snap.notes))
    snapshot = rules.snapshot()
    assert [r.name for r in snapshot.rules] == ["repo"]
    assert len(snapshot.errors) == 1 and "rules.toml:4: bogus: unknown key" in snapshot.errors[0]
    rules.snapshot()
    assert len(seen) == 1  # told once, not at every decision
    write_user(APPLY_ALL.format(name="mine"))
    assert [r.name for r in rules.snapshot().rules] == ["repo", "mine"]
    assert seen[-1] == ()


def test_a_symlinked_workspace_rules_file_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text(APPLY_ALL.format(name="sneaky"), encoding="utf-8")
    (tmp_path / ".redline").mkdir(mode=0o700)
    os.symlink(elsewhere, tmp_path / ".redline" / "rules.toml")
    snapshot = RuleSet(tmp_path, trusted=True).snapshot()
    assert snapshot.rules == ()
    assert "symlink" in snapshot.errors[0]


def test_a_redline_file_instead_of_a_folder_is_named(tmp_path: Path) -> None:
    (tmp_path / ".redline").write_text("not a folder", encoding="utf-8")
    snapshot = RuleSet(tmp_path, trusted=True).snapshot()
    assert snapshot.rules == ()
    assert ".redline is not a folder" in snapshot.errors[0]
