"""``redline log``: the workspace's decisions (applied, edited, discarded with reason).

Read from the append-only decisions log (``redline.workspace.decisions``), oldest first;
``--markdown`` is ready to paste into a pull request description, ``--json`` prints
``{"decisions": [...]}``. ``--since REF`` keeps the decisions made since the branch left
REF (the committer time of ``git merge-base REF HEAD``); outside git it is exit 2.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from redline.commands._common import add_workspace_option

if TYPE_CHECKING:
    from pathlib import Path

    from redline.workspace.decisions import DecisionRecord

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help='print {"decisions": [...]}')
    form.add_argument(
        "--markdown", action="store_true", help="a Markdown list for a pull request description"
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="check that each applied action's commit holds the bytes it applied",
    )
    parser.add_argument(
        "--since",
        metavar="REF",
        help="only decisions made since this branch left REF (needs git)",
    )


def _err(text: str) -> None:
    import sys

    from redline.workspace.names import shown

    print(shown(f"redline log: {text}"), file=sys.stderr)


def _since(root: Path, ref: str) -> float | str:
    """The cut-off time for ``--since REF``, or the message of why there is none."""
    from redline.workspace.git import GitError, repo_of, run_git

    repo = repo_of(root)
    if repo is None:
        return f"--since {ref}: {root} is not in a git working tree"
    if ref.startswith("-"):
        return f"--since {ref}: not a git ref"
    try:
        base = run_git(repo.top, "merge-base", "--end-of-options", ref, "HEAD")
        if base.returncode != 0:
            return f"--since {ref}: no common history between {ref} and HEAD (is it a ref?)"
        when = run_git(repo.top, "log", "-1", "--format=%ct", base.stdout.decode().strip())
    except GitError as exc:
        return f"--since {ref}: {exc}"
    try:
        return float(when.stdout.decode().strip())
    except ValueError:
        return f"--since {ref}: cannot read the time of the merge base"


#: A revision's place: reviser id → (the id it revises, its revision number).
Revisions = dict[str, tuple[str, int]]


def _revisions(root: Path) -> Revisions:
    """The revision links of the workspace's queue (none when it has no queue)."""
    from redline.workspace.queue import QueueError, WorkspaceQueue
    from redline.workspace.queue.revisions import REVISIONS, chains, links

    if not (root / ".redline" / "queue" / REVISIONS).is_dir():
        return {}
    try:
        with WorkspaceQueue(root, reconcile=False) as queue:
            revises = links(queue)
    except (QueueError, OSError):
        return {}
    numbered = chains(revises)
    return {rid: (revises[rid], numbered[rid][1]) for rid in revises}


def _grouped(records: list[DecisionRecord], revisions: Revisions) -> list[DecisionRecord]:
    """Oldest first, each action's revisions right after it (``redline log`` groups them)."""
    if not revisions:
        return records

    def first(action_id: str) -> str:
        seen = {action_id}
        while action_id in revisions and revisions[action_id][0] not in seen:
            action_id = revisions[action_id][0]
            seen.add(action_id)
        return action_id

    groups: dict[str, list[DecisionRecord]] = {}
    for record in records:
        groups.setdefault(first(record.id), []).append(record)
    return [record for group in groups.values() for record in group]


def decision_json(record: DecisionRecord, revisions: Revisions | None = None) -> dict[str, Any]:
    """One decision as ``--json`` prints it (the issue's fields, in its order; a
    revision's ``revision`` last)."""
    data = _decision_json(record)
    if revisions and record.id in revisions:
        of, number = revisions[record.id]
        data["revision"] = {"number": number, "of": of}
    return data


def _decision_json(record: DecisionRecord) -> dict[str, Any]:
    from redline.workspace.queue import iso_utc

    return {
        "id": record.id,
        "label": record.label,
        "source": record.source,
        "decision": record.decision,
        "edited": record.edited,
        "reason": record.reason,
        "resolved_by": record.resolved_by,
        "reviewer": record.reviewer,
        "time": iso_utc(record.time),
        "commit": record.commit,
        "via": record.via or None,
        "rule": record.rule,
        "parts": record.parts,
        "applied": record.applied,
        "assisted_by": record.assisted_by,
        "why": None if record.assisted_by else (record.why or None),
    }


def _facts(record: DecisionRecord, revisions: Revisions | None = None) -> list[str]:
    """What text and Markdown both say beside the decision: how, by what, through what."""
    facts = [record.source] if record.source else []
    if revisions and record.id in revisions:
        of, number = revisions[record.id]
        facts.append(f"revision {number} of {of}")
    if record.parts:
        facts.append(f"applied {record.parts}")
    if record.edited:
        facts.append("edited")
    if record.resolved_by == "rule":
        facts.append(f"by rule {record.rule}" if record.rule else "by rule")
    elif record.resolved_by and record.resolved_by != "person":
        facts.append(f"by {record.resolved_by}")
    if record.via:
        facts.append(f"via {record.via}")
    if record.assisted_by:
        facts.append(f"assisted by {record.assisted_by}")
    return facts


def _markdown(records: list[DecisionRecord], revisions: Revisions) -> str:
    def cell(text: str) -> str:
        return " ".join(text.split()).replace("`", "'")

    lines = ["### Review decisions (redline)", ""]
    for record in records:
        extra = [cell(fact) for fact in _facts(record, revisions)]
        if record.edited:
            extra[extra.index("edited")] = "edited by the reviewer"
        if record.commit:
            extra.append(f"`{record.commit[:12]}`")
        indent = "  " if record.id in revisions else ""
        line = f"{indent}- **{record.decision}** `{record.id}` {cell(record.label)}"
        if extra:
            line += f" ({', '.join(extra)})"
        if record.reason:
            line += f": {cell(record.reason)}"
        lines.append(line)
    return "\n".join(lines)


def _text(records: list[DecisionRecord], revisions: Revisions) -> str:
    import datetime

    from redline.termtext import one_line

    lines = []
    for record in records:
        when = datetime.datetime.fromtimestamp(record.time).strftime("%Y-%m-%d %H:%M")
        mark = "  └ " if record.id in revisions else ""
        line = f"{when}  {mark}{record.id:<7} {record.decision:<9} {one_line(record.label)}"
        facts = _facts(record, revisions)
        if record.commit:
            facts.append(f"commit {record.commit[:12]}")
        if facts:
            line += f"  ({one_line(', '.join(facts))})"
        if record.reason:
            line += f"\n        reason: {one_line(record.reason)}"
        lines.append(line)
    return "\n".join(lines)


def _verify(root: Path, records: list[DecisionRecord], *, json: bool) -> int:
    from redline.review.verify import verify_workspace
    from redline.workspace.names import json_dumps, shown

    found = verify_workspace(root, records)
    if isinstance(found, str):
        _err(found)
        return EXIT_BAD_INPUT
    if json:
        print(json_dumps(found.to_dict()))
        return EXIT_OK if found.ok else EXIT_FAILED
    lines: list[str] = []
    for entry in found.verified:
        lines.append(f"{entry['id']:<7} verified     {entry['commit'][:12]}")
    for entry in found.superseded:
        lines.append(f"{entry['id']:<7} superseded   by {entry['superseded_by']}")
    for entry in found.mismatch:
        paths = ", ".join(f["path"] for f in entry["files"] if f["state"] == "mismatch")
        lines.append(
            f"{entry['id']:<7} mismatch     {entry['commit'][:12]} holds other bytes for {paths}"
        )
    for entry in found.missing:
        why = entry.get("why") or "a file is not in its commit " + entry.get("commit", "")[:12]
        lines.append(f"{entry['id']:<7} missing      {why}")
    print(shown("\n".join(lines) if lines else "No applied action with a commit to verify."))
    return EXIT_OK if found.ok else EXIT_FAILED


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from redline.workspace.decisions import DecisionsError, read
    from redline.workspace.names import json_dumps, shown

    root = Path(args.cwd)
    if not root.is_dir():
        _err(f"workspace {root} is not a folder")
        return EXIT_BAD_INPUT
    cutoff: float | None = None
    if args.since is not None:
        found = _since(root, args.since)
        if isinstance(found, str):
            _err(found)
            return EXIT_BAD_INPUT
        cutoff = found
    try:
        records, bad = read(root)
    except DecisionsError as exc:
        _err(str(exc))
        return EXIT_FAILED
    if bad:
        _err(f"{bad} line(s) of the decisions log are not decisions; skipped")
    if cutoff is not None:
        records = [r for r in records if r.time >= cutoff]
    if args.verify:
        if args.markdown:
            _err("--verify prints text or --json, not --markdown")
            return EXIT_BAD_INPUT
        return _verify(root, records, json=args.json)
    revisions = _revisions(root)
    if args.json:
        print(json_dumps({"decisions": [decision_json(r, revisions) for r in records]}))
    elif not records:
        print(shown(f"No decisions recorded in {root}."))
    elif args.markdown:
        print(shown(_markdown(_grouped(records, revisions), revisions)))
    else:
        print(shown(_text(_grouped(records, revisions), revisions)))
    return EXIT_OK
