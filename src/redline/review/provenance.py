"""Git provenance of decisions: ``[git] on_apply`` and the decisions log.

After every resolution that left the queue (applied or discarded), :func:`record` appends
it to the workspace's decisions log (:mod:`redline.workspace.decisions`, what ``redline
log`` prints). After an apply that redline wrote itself (a Preview, or the selected hunks
of one) it also does what ``[git] on_apply`` asks, read from the config at each apply:

* ``stage``: exactly what was written goes into the index (for a hunk apply only those
  hunks), merged into whatever the person had staged for those files;
* ``commit``: one commit of exactly what was written, built from a temporary index, with
  the action's label as subject and ``Redline-*`` trailers; with a :class:`GitBatch`
  (``redline pending apply ID ID … --batch``) one commit for the whole batch.

Nothing here ever turns a done apply into a failure: git problems become lines of the
resolution's text (``git: …``), and the files stay written.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from redline.workspace.preview import FileCreate, FileDelete, FileModify, FileRename, Preview

if TYPE_CHECKING:
    from redline.workspace.decisions import DecisionRecord
    from redline.workspace.details import ActionDetails
    from redline.workspace.git import GitRepo, IndexChange

log = logging.getLogger(__name__)

#: ``resolved_by`` values as the decisions log shows them.
_DECISION_WORDS = {"apply": "applied", "discard": "discarded"}
_DONE = {"stage": "staged", "commit": "committed"}


@dataclass(frozen=True)
class Decided:
    """One decision as provenance needs it (``written``: what an apply wrote)."""

    action_id: str
    label: str
    source: str
    decision: str  # apply | discard
    reason: str = ""
    edited: bool = False
    resolved_by: str = "person"
    written: Preview | None = None
    co_authors: tuple[str, ...] = ()
    #: Who decided, when not this machine's user (a team queue reviewer, as its server
    #: recorded them); None: git's user.
    reviewer: str | None = None
    #: The redline surface that made the decision (``dashboard``, ``cli``, ``hook``, …).
    via: str = ""
    rule: str | None = None
    #: ``"2 of 3 hunks"`` for an apply of some hunks, else None.
    parts: str | None = None
    #: ``AGENT:MODEL`` when both are known; else None and ``assisted_why`` says why.
    assisted_by: str | None = None
    assisted_why: str = ""
    #: An imported change's own ``Assisted-by`` values.
    imported_assisted: tuple[str, ...] = ()


@dataclass
class GitBatch:
    """Applies collected for one commit (``--batch``); :func:`finish_batch` makes it."""

    root: Path
    items: list[Decided] = field(default_factory=list)


def assisted_facts(source: str, details: ActionDetails) -> tuple[str | None, str, tuple[str, ...]]:
    """``Decided``'s ``(assisted_by, assisted_why, imported_assisted)`` for an
    action of ``source`` whose details are ``details`` (typed, or a record's JSON: the
    model its agent reported; an import's own trailers)."""
    from redline.review.trailers import assisted
    from redline.workspace.details import imported, reported_model

    if source.startswith("import:"):
        facts = imported(details)
        values = facts.assisted_by or () if facts is not None else ()
        why = "" if values else "the imported commits carry no Assisted-by"
        return (values[0] if values else None), why, values
    why = ""
    if source.startswith("mcp:"):
        why = f"{source[4:]} (an MCP client) does not report its model"
    value, why = assisted(source, reported_model(details), why)
    return value, why, ()


def _one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line without control characters (a subject or trailer value)."""
    from redline.review.trailers import one_line

    return one_line(text, limit)


def commit_message(
    items: list[Decided],
    reviewer: str,
    *,
    workspace: str = "",
    mode: str = "both",
    signoff: str = "",
) -> str:
    """The subject (the label; a batch lists its labels) and the trailers
    (:func:`redline.review.trailers.trailer_lines`)."""
    from redline.review.trailers import trailer_lines

    if len(items) == 1:
        subject = _one_line(items[0].label, 72) or items[0].action_id
        body: list[str] = []
    else:
        subject = _one_line(
            f"{len(items)} reviewed actions: " + "; ".join(i.label for i in items), 72
        )
        body = [f"- {i.action_id}: {_one_line(i.label)}" for i in items]
    trailers = trailer_lines(items, reviewer, workspace=workspace, mode=mode, signoff=signoff)
    parts = [subject]
    if body:
        parts.append("\n".join(body))
    parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


def revert_message(
    action_id: str,
    label: str,
    commit: str,
    reviewer: str,
    *,
    shared: bool = False,
    workspace: str = "",
) -> str:
    """The message of the commit that takes ``commit`` (``action_id``'s) back; ``shared``:
    only ``action_id``'s changes of a commit that holds other actions too."""
    what = (
        f"the changes of {action_id} in commit {commit} (its other actions stay)"
        if shared
        else f"the paths of commit {commit} ({action_id})"
    )
    lines = [
        _one_line(f'Revert "{label}"', 72),
        "",
        f"This reverts {what}.",
        "",
        f"Redline-Action: {action_id}",
    ]
    if workspace:
        lines.append(f"Redline-Workspace: {_one_line(workspace)}")
    if reviewer:
        lines.append(f"Redline-Reviewer: {_one_line(reviewer)}")
    return "\n".join(lines) + "\n"


def index_changes(root: Path, repo_prefix: str, written: Preview) -> list[IndexChange]:
    """What ``written`` did, as :class:`~redline.workspace.git.IndexChange` s."""
    from redline.workspace.git import IndexChange
    from redline.workspace.preview import encode_text

    def disk(rel: str) -> tuple[bytes | None, bool]:
        try:
            path = Path(root) / rel
            info = path.lstat()
            return path.read_bytes(), bool(info.st_mode & 0o100)
        except OSError:
            return None, False

    changes: list[IndexChange] = []
    for change in written.changes:
        if isinstance(change, FileModify):
            before = encode_text(change.old_text, change.encoding) if change.old_text else None
            after = encode_text(change.new_text, change.encoding)
            changes.append(IndexChange("modify", repo_prefix + change.path, before, after))
        elif isinstance(change, FileCreate):
            after = encode_text(change.new_text, change.encoding)
            executable = disk(change.path)[1]
            changes.append(
                IndexChange("create", repo_prefix + change.path, None, after, executable=executable)
            )
        elif isinstance(change, FileDelete):
            changes.append(IndexChange("delete", repo_prefix + change.path))
        elif isinstance(change, FileRename):
            data, executable = disk(change.new_path)
            changes.append(
                IndexChange(
                    "rename",
                    repo_prefix + change.new_path,
                    after=data,
                    old_path=repo_prefix + change.old_path,
                    executable=executable,
                )
            )
    return changes


def written_bytes(root: Path, written: Preview) -> dict[str, bytes | None]:
    """Each path ``written`` wrote (workspace-relative) and its bytes (None: deleted)."""
    from redline.workspace.preview import encode_text

    found: dict[str, bytes | None] = {}
    for change in written.changes:
        if isinstance(change, FileModify | FileCreate):
            found[change.path] = encode_text(change.new_text, change.encoding)
        elif isinstance(change, FileDelete):
            found[change.path] = None
        elif isinstance(change, FileRename):
            found[change.old_path] = None
            try:
                found[change.new_path] = (Path(root) / change.new_path).read_bytes()
            except OSError:
                found[change.new_path] = None
    return found


def applied_facts(
    root: Path, written: Preview, repo: GitRepo | None = None
) -> dict[str, dict[str, str | None] | None]:
    """``{PATH: {"sha256", "blob"}}`` of what ``written`` wrote: ``blob`` as ``git
    hash-object --path`` names it (eol conversion, clean filters and LFS pointers count),
    None outside git."""
    from redline.workspace.git import GitError, repo_of, run_git
    from redline.workspace.preview import sha256_bytes

    if repo is None:
        repo = repo_of(root)
    facts: dict[str, dict[str, str | None] | None] = {}
    for rel, data in written_bytes(root, written).items():
        if data is None:
            facts[rel] = None
            continue
        blob: str | None = None
        if repo is not None:
            try:
                done = run_git(
                    repo.top, "hash-object", "--stdin", f"--path={repo.prefix}{rel}", input=data
                )
                if done.returncode == 0:
                    blob = done.stdout.decode("ascii", "replace").strip() or None
            except GitError:
                blob = None
        facts[rel] = {"sha256": sha256_bytes(data), "blob": blob}
    return facts


_known: dict[str, str] = {}


def workspace_id_of(root: Path) -> str:
    """``root``'s id with the configured ``[queue] workspace_id`` (the user's, or a trusted
    workspace's), kept per root; "" when none can be found."""
    real = os.path.realpath(root)
    if real in _known:
        return _known[real]
    from redline.workspace.identity import WorkspaceIdError, workspace_id

    try:
        found = workspace_id(Path(real), _configured(Path(real)))
    except WorkspaceIdError:
        return ""
    _known[real] = found
    return found


def configured_workspace_id(root: Path) -> str | None:
    """The ``[queue] workspace_id`` configured for ``root`` (the user's, or a trusted
    workspace's), or None."""
    return _configured(root)


def _configured(root: Path) -> str | None:
    from redline.config import ConfigError, read_user_config, read_workspace_config
    from redline.workspace.identity import ID_CHARS

    def pick(data: object) -> str | None:
        table = data.get("queue") if isinstance(data, dict) else None
        value = table.get("workspace_id") if isinstance(table, dict) else None
        if not isinstance(value, str):
            return None
        value = value.strip()
        return value if 1 <= len(value) <= 40 and set(value) <= ID_CHARS else None

    try:
        chosen = pick(read_user_config()[0])
    except ConfigError:
        chosen = None
    try:
        mine = pick(read_workspace_config(root)[0])
    except ConfigError:
        mine = None
    if mine is not None:
        from redline.trust import is_trusted

        if is_trusted(root):
            chosen = mine
    return chosen


#: How long a reviewer found for a workspace is reused without asking git again.
REVIEWER_KEPT_SECONDS = 60.0
_reviewers: dict[Path, tuple[float, str]] = {}


def remember_reviewer(root: Path) -> None:
    """Find ``root``'s reviewer now and keep it a while: a process that waits for a
    decision (a hook call) does it while the person reads, not after they decided (two git
    processes, about 10 ms)."""
    import time

    _reviewers[root] = (time.monotonic(), reviewer_of(root))


def reviewer_of(root: Path, repo: GitRepo | None = None) -> str:
    """git's user (``Name <email>``), else the login name, else "" (``repo``: the
    repository of ``root`` when already known)."""
    from redline.workspace.git import GitError, ident, repo_of

    kept = _reviewers.get(root)
    if kept is not None and repo is None:
        import time

        if time.monotonic() - kept[0] < REVIEWER_KEPT_SECONDS:
            return kept[1]
    if repo is None:
        repo = repo_of(root)
    if repo is not None:
        try:
            return ident(repo)
        except GitError:
            pass
    try:
        import getpass

        return getpass.getuser()
    except (OSError, KeyError):
        return ""


@dataclass
class _Found:
    """What a git step learnt that logging the decisions needs again (saves git calls)."""

    repo: GitRepo | None = None
    reviewer: str | None = None

    def reviewer_for(self, root: Path) -> str:
        if self.reviewer is None:
            self.reviewer = reviewer_of(root, self.repo)
        return self.reviewer


def _git_step(
    root: Path, items: list[Decided], notes: list[str], found: _Found | None = None
) -> str | None:
    """Stage or commit what ``items`` wrote, as ``[git] on_apply`` says; the commit made."""
    from redline.config import ConfigError, git_settings
    from redline.workspace.git import GitError, commit_changes, repo_of, update_index

    try:
        settings = git_settings(root)
    except ConfigError as exc:
        notes.append(f"git: {exc}; nothing was staged")
        return None
    notes.extend(f"git: {warning}" for warning in settings.warnings)
    if settings.on_apply == "none":
        return None
    repo = repo_of(root)
    if repo is None:
        notes.append(
            f"git: {root} is not in a git working tree; nothing was {_DONE[settings.on_apply]}"
        )
        return None
    if found is not None:
        found.repo = repo
    changes: list[IndexChange] = []
    for item in items:
        if item.written is not None:
            changes.extend(index_changes(root, repo.prefix, item.written))
    if not changes:
        return None
    what = ", ".join(i.action_id for i in items)
    try:
        if settings.on_apply == "stage":
            conflicts = update_index(repo, changes)
            if conflicts:
                notes.append(
                    "git: not staged, the staged text differs where the change goes: "
                    + ", ".join(conflicts)
                )
            else:
                notes.append(f"git: staged {what}.")
            return None
        from redline.workspace.git import ident

        try:
            local = ident(repo)
        except GitError:
            local = ""
        named = [i.reviewer for i in items if i.reviewer]
        if named:
            reviewer = ", ".join(dict.fromkeys(named))
        else:
            reviewer = local
            if found is not None and reviewer:
                found.reviewer = reviewer
        message = commit_message(
            items,
            reviewer,
            workspace=workspace_id_of(root),
            mode=settings.trailers,
            # Signed-off-by is always this machine's git user (as ``git commit -s``).
            signoff=local if settings.signoff else "",
        )
        outcome = commit_changes(repo, changes, message)
    except GitError as exc:
        notes.append(f"git: {exc}; the change is applied but not {_DONE[settings.on_apply]}")
        return None
    if outcome.commit is not None:
        notes.append(f"git: committed {what} as {outcome.commit[:12]}.")
    elif outcome.hook_failed:
        notes.append(
            f"git: the commit was refused, so {what} is applied and "
            + ("staged" if outcome.staged else "not staged")
            + f", not committed: {outcome.hook_failed}"
        )
    elif outcome.empty:
        notes.append(f"git: nothing to commit for {what} (already committed).")
    if outcome.conflicts:
        notes.append(
            "git: the staged text of "
            + ", ".join(outcome.conflicts)
            + " differs where the change goes; left as it was"
        )
    return outcome.commit


def record(root: Path, decided: Decided, *, batch: GitBatch | None = None) -> list[str]:
    """Log ``decided`` and do ``[git] on_apply``'s part; the lines to tell the person.

    With ``batch``, an apply is only collected: :func:`finish_batch` commits and logs.
    """
    notes: list[str] = []
    commit: str | None = None
    found = _Found()
    if decided.decision == "apply" and decided.written is not None:
        if batch is not None:
            batch.items.append(decided)
            return notes
        try:
            commit = _git_step(root, [decided], notes, found)
        except Exception as exc:  # never turn a done apply into a failure
            log.exception("git step after %s failed", decided.action_id)
            notes.append(f"git: {exc}")
    _log(root, [decided], commit, notes, found)
    return notes


def record_agent_write(root: Path, decided: Decided) -> list[str]:
    """``[git] on_apply`` for an apply the agent wrote itself (a hook's allowed call), once
    its write is recorded: ``decided.written`` is what it wrote. The decision was logged
    when it was made; a commit made now is linked to it in the decisions log."""
    from redline.workspace.decisions import COMMITTED, DecisionRecord, DecisionsError, append

    notes: list[str] = []
    try:
        commit = _git_step(root, [decided], notes)
    except Exception as exc:  # never turn a done write into a failure
        log.exception("git step after %s failed", decided.action_id)
        return [f"git: {exc}"]
    applied = _facts_of(root, decided)
    if commit is not None or applied or decided.assisted_by or decided.assisted_why:
        try:
            append(
                root,
                DecisionRecord(
                    id=decided.action_id,
                    label=decided.label,
                    source=decided.source,
                    decision=COMMITTED,
                    edited=decided.edited,
                    reason="",
                    resolved_by=decided.resolved_by,
                    reviewer="",
                    time=time.time(),
                    commit=commit,
                    files=tuple(decided.written.paths) if decided.written is not None else (),
                    applied=applied,
                    assisted_by=decided.assisted_by,
                    why=decided.assisted_why,
                ),
            )
        except DecisionsError as exc:
            notes.append(f"redline: {exc}")
    return notes


def _facts_of(root: Path, item: Decided) -> dict[str, dict[str, str | None] | None] | None:
    if item.decision != "apply" or item.written is None:
        return None
    try:
        return applied_facts(root, item.written)
    except Exception:  # the facts are extra; never fail the logging of a decision
        log.exception("cannot hash what %s wrote", item.action_id)
        return None


def finish_batch(batch: GitBatch) -> list[str]:
    """Commit (or stage) everything the batch applied as one; log each decision."""
    notes: list[str] = []
    if not batch.items:
        return notes
    commit: str | None = None
    found = _Found()
    try:
        commit = _git_step(batch.root, batch.items, notes, found)
    except Exception as exc:
        log.exception("git step of a batch failed")
        notes.append(f"git: {exc}")
    _log(batch.root, batch.items, commit, notes, found)
    batch.items.clear()
    return notes


def _log(
    root: Path,
    items: list[Decided],
    commit: str | None,
    notes: list[str],
    found: _Found | None = None,
) -> None:
    from redline.workspace.decisions import DecisionRecord, DecisionsError, append

    by_person = any(i.resolved_by in ("person", "human") and not i.reviewer for i in items)
    reviewer = (found or _Found()).reviewer_for(root) if by_person else ""
    for item in items:
        applied = _facts_of(root, item)
        try:
            append(
                root,
                DecisionRecord(
                    id=item.action_id,
                    label=item.label,
                    source=item.source,
                    decision=_DECISION_WORDS.get(item.decision, item.decision),
                    edited=item.edited,
                    reason=item.reason,
                    resolved_by="person" if item.resolved_by == "human" else item.resolved_by,
                    reviewer=(item.reviewer or reviewer)
                    if item.resolved_by in ("person", "human")
                    else "",
                    time=time.time(),
                    commit=commit,
                    files=tuple(item.written.paths) if item.written is not None else (),
                    via=item.via,
                    rule=item.rule if item.resolved_by == "rule" else None,
                    parts=item.parts,
                    applied=applied,
                    assisted_by=item.assisted_by,
                    why=item.assisted_why,
                ),
            )
        except DecisionsError as exc:
            notes.append(f"redline: {exc}")


def undo_note(root: Path, action_id: str, label: str, commit: str | None) -> None:
    """Log that ``action_id``'s apply was undone (``commit``: the revert, if one was made)."""
    from redline.workspace.decisions import DecisionRecord, DecisionsError, append

    try:
        append(
            root,
            DecisionRecord(
                id=action_id,
                label=label,
                source="",
                decision="undone",
                edited=False,
                reason="",
                resolved_by="person",
                reviewer=reviewer_of(root),
                time=time.time(),
                commit=commit,
            ),
        )
    except DecisionsError:
        log.warning("could not log the undo of %s", action_id)


def moved_note(root: Path, decided: DecisionRecord, commit: str) -> None:
    """Log that ``decided``'s apply now lives in ``commit`` (its commit was rewritten)."""
    from dataclasses import replace

    from redline.workspace.decisions import COMMITTED, DecisionsError, append

    try:
        append(
            root,
            replace(
                decided, decision=COMMITTED, reason="", reviewer="", time=time.time(), commit=commit
            ),
        )
    except DecisionsError:
        log.warning("could not log where %s now lives", decided.id)


__all__ = [
    "Decided",
    "GitBatch",
    "applied_facts",
    "assisted_facts",
    "commit_message",
    "finish_batch",
    "index_changes",
    "moved_note",
    "record",
    "record_agent_write",
    "revert_message",
    "reviewer_of",
    "undo_note",
    "workspace_id_of",
    "written_bytes",
]
