"""``redline log --verify``: does the commit of each applied action hold what was applied?

For each applied action of the decisions log that made a commit and recorded its bytes
(``applied``), the commit is found by its trailers, not by the id logged at apply time (a
rebase, an amend or a squash merge changes that): the newest commit reachable from
``HEAD`` whose message has ``Redline-Action: ID`` and ``Redline-Workspace: WSID`` lines
(a squash merge moves trailers into the body; the lines are still found). Each file's blob
in that commit is compared with the ``blob`` recorded at apply time (both ``git
hash-object --path`` ids, so eol conversion, clean filters and LFS pointers compare like
for like). A file a later applied action changed again is ``superseded`` by it, not a
mismatch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redline.workspace.decisions import DecisionRecord
from redline.workspace.git import GitError, GitRepo, run_git


@dataclass
class Verified:
    """The four lists ``--verify --json`` prints."""

    verified: list[dict[str, Any]] = field(default_factory=list)
    superseded: list[dict[str, Any]] = field(default_factory=list)
    mismatch: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatch and not self.missing

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "verified": self.verified,
            "superseded": self.superseded,
            "mismatch": self.mismatch,
            "missing": self.missing,
        }


def find_commit(repo: GitRepo, action_id: str, workspace: str) -> str | None:
    """The newest commit from ``HEAD`` carrying ``action_id``'s (and ``workspace``'s)
    trailer lines."""
    args = ["log", "-1", "--format=%H", "--all-match", "-E"]
    args.append(f"--grep=^[[:space:]]*Redline-Action: {re.escape(action_id)}[[:space:]]*$")
    if workspace:
        args.append(f"--grep=^[[:space:]]*Redline-Workspace: {re.escape(workspace)}[[:space:]]*$")
    done = run_git(repo.top, *args, "HEAD", "--")
    if done.returncode != 0:
        return None
    found = done.stdout.decode("ascii", "replace").strip()
    return found or None


def _blob_at(repo: GitRepo, commit: str, path: str) -> str | None:
    done = run_git(repo.top, "rev-parse", "--verify", "-q", f"{commit}:{path}")
    if done.returncode != 0:
        return None
    return done.stdout.decode("ascii", "replace").strip() or None


def verify(repo: GitRepo, records: list[DecisionRecord], workspace: str) -> Verified:
    """Check every applied action with a commit and recorded bytes (newest decision per id;
    undone actions are left out)."""
    newest: dict[str, int] = {}
    for at, record in enumerate(records):
        newest[record.id] = at
    result = Verified()
    for at, record in enumerate(records):
        if newest[record.id] != at or record.decision != "applied":
            continue
        if record.commit is None or not record.applied:
            continue
        entry: dict[str, Any] = {"id": record.id, "label": record.label}
        try:
            commit = find_commit(repo, record.id, workspace)
        except GitError as exc:
            result.missing.append({**entry, "why": str(exc)})
            continue
        if commit is None:
            result.missing.append(
                {**entry, "why": f"no commit from HEAD carries Redline-Action: {record.id}"}
            )
            continue
        entry["commit"] = commit
        later = _later_changes(records, at)
        state = "verified"
        files: list[dict[str, Any]] = []
        for path, facts in record.applied.items():
            want = facts.get("blob") if facts is not None else None
            have = _blob_at(repo, commit, repo.prefix + path)
            item: dict[str, Any] = {"path": path, "recorded": want, "commit_blob": have}
            if have == want:
                item["state"] = "verified"
            elif path in later:
                item["state"] = "superseded"
                item["superseded_by"] = later[path]
                if state == "verified":
                    state = "superseded"
                    entry["superseded_by"] = later[path]
            elif have is None and want is not None:
                item["state"] = "missing"
                state = "missing" if state != "mismatch" else state
            else:
                item["state"] = "mismatch"
                state = "mismatch"
            files.append(item)
        entry["files"] = files
        getattr(result, state).append(entry)
    return result


def _later_changes(records: list[DecisionRecord], at: int) -> dict[str, str]:
    """Each path a later applied action wrote, with the first such action's id."""
    found: dict[str, str] = {}
    for record in records[at + 1 :]:
        if record.decision == "applied" and record.id != records[at].id:
            for path in (record.applied or {}) or record.files:
                found.setdefault(path, record.id)
    return found


def verify_workspace(root: Path, records: list[DecisionRecord]) -> Verified | str:
    """:func:`verify` for ``root``; a string says why it cannot be done (not in git)."""
    from redline.review.provenance import workspace_id_of
    from redline.workspace.git import repo_of

    repo = repo_of(root)
    if repo is None:
        return f"--verify: {root} is not in a git working tree"
    return verify(repo, records, workspace_id_of(root))


__all__ = ["Verified", "find_commit", "verify", "verify_workspace"]
