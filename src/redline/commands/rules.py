"""``redline rules``: the review rules in force, and what they would decide.

``redline rules list`` shows every rule in evaluation order and where it came from (and
says so when an untrusted workspace's rules file is ignored); ``redline rules check``
shows, for each pending action of the workspace queue, which rule would decide and why.
A rule's ``checks = "pass"`` is shown with its conditions and evaluated: ``list`` says
which checks it waits on (or why it can never apply), ``check`` reads the action's stored
results — it runs nothing — and says ``ask`` unless every check has a current pass.
A malformed rules file is reported (file, line, key) and the command exits 1; the rules of
the other file are still listed and used.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from redline.commands._common import add_workspace_option

if TYPE_CHECKING:
    from pathlib import Path

    from redline.checks.gate import GateAnswer
    from redline.rules import ActionFacts, Decision, Rule, RulesSnapshot

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    sub = parser.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="the rules in force, first match first")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    check = sub.add_parser("check", help="which rule would decide each pending action, and why")
    check.add_argument("--json", action="store_true", help="print one JSON object")


def _out(text: str, *, err: bool = False) -> None:
    import sys

    from redline.workspace.names import shown

    print(shown(text), file=sys.stderr if err else sys.stdout)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from redline.rules import RuleSet

    root = Path(args.cwd)
    if not root.is_dir():
        _out(f"redline rules: workspace {root} is not a folder", err=True)
        return EXIT_BAD_INPUT
    snapshot = RuleSet(root.resolve()).snapshot()
    if args.rules_command == "list":
        code = _list(root.resolve(), snapshot, args.json)
        _warn_old_spellings(snapshot)
    else:
        code = _check(root.resolve(), snapshot, args.json)
    if not args.json:
        for error in snapshot.errors:
            _out(f"redline rules: {error}", err=True)
    return EXIT_FAILED if snapshot.errors and code == EXIT_OK else code


def _warn_old_spellings(snapshot: RulesSnapshot) -> None:
    """One line on stderr for each source a rule spells the old way (still matched)."""
    from redline.rules.model import old_spellings

    for rule in snapshot.rules:
        where = f" ({rule.file}:{rule.line})" if rule.file else ""
        for old, new in old_spellings(rule):
            _out(
                f"redline rules: rule {rule.name!r}{where}: source {old!r} is the old spelling "
                f"of {new!r}; it still matches in this release, write {new!r}",
                err=True,
            )


def _dump(data: Any) -> str:
    from redline.workspace.names import json_dumps

    return json_dumps(data)


def _conditions(rule: Rule) -> str:
    parts = []
    if rule.tools is not None:
        parts.append("tools " + ", ".join(rule.tools))
    if rule.paths is not None:
        parts.append("paths " + ", ".join(rule.paths))
    if rule.kinds is not None:
        parts.append("kinds " + ", ".join(rule.kinds))
    if rule.max_changed_lines is not None:
        parts.append(f"at most {rule.max_changed_lines} changed lines")
    conditions = " · ".join(parts) if parts else "every action"
    if rule.checks == "pass":
        conditions += ' · checks = "pass": applies only once every check passes'
    return conditions


def _checks_in_force(root: Path, trusted: bool) -> str:
    """What a ``checks = "pass"`` rule waits on in ``root``, in words."""
    from redline.checks import load_checks
    from redline.config import ConfigError

    try:
        config = load_checks(root, trusted=trusted)
    except ConfigError as exc:
        return f"the checks cannot be read ({exc}), so it never applies"
    if config.skipped:
        names = ", ".join(s.name for s in config.skipped)
        return f"check(s) {names} cannot run ({config.skipped[0].why}), so it never applies"
    if not config.checks:
        return "no checks are configured, so it never applies"
    return "waits on checks " + ", ".join(c.name for c in config.checks)


def _common_json(snapshot: RulesSnapshot) -> dict[str, Any]:
    return {
        "errors": list(snapshot.errors),
        "workspace_trusted": snapshot.workspace_trusted,
        "ignored_workspace_file": snapshot.ignored_workspace_file,
    }


def _list(root: Path, snapshot: RulesSnapshot, as_json: bool) -> int:
    from redline.termtext import one_line

    waits = ""
    if any(rule.checks == "pass" for rule in snapshot.rules):
        waits = _checks_in_force(root, snapshot.workspace_trusted)
    if as_json:
        rules = []
        for rule in snapshot.rules:
            summary = rule.summary()
            if rule.checks == "pass":
                summary["checks_in_force"] = waits
            rules.append(summary)
        _out(_dump({"rules": rules, **_common_json(snapshot)}))
        return EXIT_OK
    if not snapshot.rules:
        _out("No review rules: a person reviews every action.")
    else:
        _out("Review rules, first match wins:")
        for index, rule in enumerate(snapshot.rules, start=1):
            _out(f"{index:>3}. {rule.name}  {rule.decision}  ({rule.origin}: {rule.where})")
            _out(f"     {_conditions(rule)}")
            if rule.checks == "pass":
                _out(f"     checks: {waits}")
            if rule.reason:
                _out(f"     reason: {one_line(rule.reason)}")
    if snapshot.ignored_workspace_file is not None:
        _out(snapshot.notes[-1])
    return EXIT_OK


def pending_facts(root: Path) -> list[tuple[str, ActionFacts]] | None:
    """``(id, facts)`` of every pending action of the workspace queue, top first.

    Stale is checked against the disk (by hash), as ``redline pending list`` does.
    """
    from redline.rules import ActionFacts
    from redline.workspace.queue import WorkspaceQueue

    queue = WorkspaceQueue(root)
    try:
        records = queue.list()
        cache: dict[str, str | None] = {}
        return [
            (
                record.id,
                ActionFacts.of_record(
                    record, stale=record.stale or bool(queue.stale_reasons(record, cache))
                ),
            )
            for record in records
        ]
    finally:
        queue.close()


def _check(root: Path, snapshot: RulesSnapshot, as_json: bool) -> int:
    try:
        pending = pending_facts(root)
    except Exception as exc:
        _out(f"redline rules: cannot read the workspace queue: {exc}", err=True)
        return EXIT_FAILED
    items = []
    for action_id, facts in pending or []:
        decision = snapshot.decide(facts)
        extra: dict[str, Any] = {}
        if decision.decision == "apply" and decision.checks == "pass":
            answer = _stored_checks(root, action_id, snapshot.workspace_trusted)
            decision = _with_checks(decision, answer)
            extra["checks"] = {
                "passed": answer.passed,
                "why": answer.why,
                "summary": answer.summary,
            }
        items.append(
            {
                "id": action_id,
                "label": facts.label,
                "source_tool_name": facts.source_tool_name,
                **decision.to_dict(),
                **extra,
            }
        )
    from redline.termtext import one_line

    if as_json:
        _out(_dump({"actions": items, **_common_json(snapshot)}))
        return EXIT_OK
    if pending is None:
        _out("This redline has no workspace queue to check; nothing is pending.")
    elif not items:
        _out("No pending actions.")
    for item in items:
        rule = f" by rule {item['rule']}" if item["rule"] else ""
        _out(f"{item['id']}  {one_line(item['label'])}  [{one_line(item['source_tool_name'])}]")
        _out(f"     {item['decision']}{rule}: {one_line(item['why'])}")
    if snapshot.ignored_workspace_file is not None:
        _out(snapshot.notes[-1])
    return EXIT_OK


def _stored_checks(root: Path, action_id: str, trusted: bool) -> GateAnswer:
    """A ``checks = "pass"`` rule's condition for a queued action, from its stored
    results (nothing runs)."""
    from redline.checks.gate import GateAnswer, checks_gate
    from redline.workspace.queue import QueueError, WorkspaceQueue

    try:
        queue = WorkspaceQueue(root, reconcile=False)
        try:
            record = queue.get(action_id)
            preview = queue.preview(record) if record is not None else None
        finally:
            queue.close()
    except QueueError as exc:
        return GateAnswer(False, f"{action_id} cannot be read: {exc}")
    return checks_gate(root, action_id, preview, trusted=trusted, run=False)


def _with_checks(decision: Decision, answer: GateAnswer) -> Decision:
    """The decision once the rule's checks are counted (``ask`` unless they all pass)."""
    from dataclasses import replace

    if answer.passed:
        return replace(decision, why=f"{decision.why}; every check passed")
    line = f" ({answer.summary})" if answer.summary else ""
    return replace(decision, decision="ask", why=f"{decision.why}; but {answer.why}{line}")
