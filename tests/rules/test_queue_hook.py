"""The hook for push paths without a session: decide a queue record and resolve it by id."""

from __future__ import annotations

from pathlib import Path

from tests.workspace.queue.helpers import create_draft

from redline.rules import (
    ActionFacts,
    RuleSet,
    decide_and_resolve,
    queue_resolver,
    user_rules_file,
)
from redline.workspace.queue import WorkspaceQueue

RULES = """[[rule]]
name = "notes"
decision = "apply"
paths = ["notes/**"]

[[rule]]
name = "migrations"
decision = "discard"
paths = ["migrations/**"]
reason = "hand-written"
"""


async def test_queue_records_are_decided_and_logged_as_by_rule(tmp_path: Path) -> None:
    user_rules_file().parent.mkdir(parents=True, exist_ok=True)
    user_rules_file().write_text(RULES, encoding="utf-8")
    rules = RuleSet(tmp_path)
    with WorkspaceQueue(tmp_path) as queue:
        note = queue.push(create_draft("notes/a.md", "hello\n"))
        mig = queue.push(create_draft("migrations/1.py", "x\n"))
        other = queue.push(create_draft("src/a.py", "y\n"))
        resolve = queue_resolver(queue)
        outcomes = [
            await decide_and_resolve(
                rules, ActionFacts.of_record(record), record.id, record.label, resolve
            )
            for record in (note, mig, other)
        ]
        applied, discarded, left = outcomes
        assert left is None
        assert applied is not None and applied.resolved
        assert applied.text.startswith(f"Applied by rule notes: {note.label}.")
        assert discarded is not None
        assert discarded.text == f"Discarded by rule migrations: {mig.label}. Reason: hand-written"
        assert [r.id for r in queue.list()] == [other.id]
        for record, rule in ((note, "notes"), (mig, "migrations")):
            resolution = queue.resolution(record.id)
            assert resolution is not None
            assert (resolution.resolved_by, resolution.rule) == ("rule", rule)
    assert (tmp_path / "notes" / "a.md").read_text(encoding="utf-8") == "hello\n"
    assert not (tmp_path / "migrations" / "1.py").exists()
