"""``redline undo`` of an action that ``[git] on_apply = "commit"`` committed.

The journal undoes what redline wrote; when the apply also made a commit (the decisions
log names it), git has to follow:

* the commit is HEAD, nothing has been staged over it for its paths, and no
  remote-tracking branch contains it: the commit is removed (HEAD moves to its parent,
  the index entries of its paths go back to the parent's) and the journal restores the
  files;
* otherwise a revert commit limited to the commit's paths is made (hooks run) and the
  working tree gets the reverted text through safe apply. When later commits changed the
  same lines the undo is refused, naming those commits, and nothing changes.

An apply without a commit (or outside git) is undone by the journal alone, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from redline.workspace import journal
from redline.workspace.journal import UndoError, UndoReceipt

if TYPE_CHECKING:
    from redline.workspace.git import GitRepo, TreeChange


@dataclass(frozen=True)
class GitUndo:
    """A journal undo, and what was done in git (``notes``: lines to show)."""

    receipt: UndoReceipt
    notes: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        return "\n".join([self.receipt.message, *self.notes])


def _target(root: Path, entry_id: str | None) -> journal.HistoryItem | None:
    items = journal.undo_history(root)
    if entry_id is None:
        return items[0] if items else None
    return next((item for item in items if item.entry_id == entry_id), None)


def undo(root: Path, entry_id: str | None) -> GitUndo:
    """Undo the apply ``entry_id`` (None: the newest) and its commit; UndoError if not."""
    from redline.review.provenance import undo_note
    from redline.workspace.decisions import DecisionsError, commit_of
    from redline.workspace.git import GitError, commit_exists, is_ancestor, repo_of

    item = _target(root, entry_id)
    commit: str | None = None
    if item is not None and item.action_id:
        try:
            commit = commit_of(root, item.action_id)
        except DecisionsError:
            commit = None
    repo = repo_of(root) if commit else None
    if item is None or commit is None or repo is None:
        receipt = journal.undo_entry(root, entry_id)
        if item is not None and item.action_id:
            undo_note(root, item.action_id, item.label, None)
        return GitUndo(receipt)
    assert item.action_id is not None
    try:
        if not commit_exists(repo, commit) or not is_ancestor(repo, commit):
            receipt = journal.undo_entry(root, item.entry_id)
            undo_note(root, item.action_id, item.label, None)
            return GitUndo(
                receipt,
                (
                    f"git: commit {commit[:12]} of {item.action_id} is not on this branch; "
                    "nothing was done in git.",
                ),
            )
        return _undo_commit(root, repo, item, commit)
    except GitError as exc:
        raise UndoError(
            f"Cannot undo {item.action_id} in git: {exc}. Nothing was changed."
        ) from None


def _undo_commit(root: Path, repo: GitRepo, item: journal.HistoryItem, commit: str) -> GitUndo:
    from redline.review.provenance import undo_note
    from redline.workspace.git import (
        commit_changes_of,
        head,
        index_entries,
        move_head,
        on_remote_branch,
        parent_of,
        set_index_entries,
    )

    assert item.action_id is not None
    changes = commit_changes_of(repo, commit)
    paths = [c.path for c in changes]
    outside = [p for p in paths if repo.workspace_path(p) is None]
    if outside:
        raise UndoError(
            f"Cannot undo {item.action_id}: its commit {commit[:12]} changed paths outside "
            f"the workspace ({', '.join(outside)}). Nothing was changed."
        )
    parent = parent_of(repo, commit)
    current = index_entries(repo, paths)
    untouched = all(current.get(c.path) == c.after for c in changes)
    if (
        head(repo) == commit
        and parent is not None
        and untouched
        and not on_remote_branch(repo, commit)
    ):
        receipt = journal.undo_entry(root, item.entry_id)
        move_head(repo, parent, commit, f"redline undo {item.action_id}")
        set_index_entries(repo, {c.path: c.before for c in changes})
        undo_note(root, item.action_id, item.label, None)
        return GitUndo(receipt, (f"git: removed commit {commit[:12]} (HEAD is {parent[:12]}).",))
    return _revert(root, repo, item, commit, changes)


def _revert(
    root: Path, repo: GitRepo, item: journal.HistoryItem, commit: str, typed: list[TreeChange]
) -> GitUndo:
    from redline.review.provenance import revert_message, reviewer_of, undo_note
    from redline.workspace.git import (
        IndexChange,
        commit_changes,
        commits_touching,
        read_blobs,
        tree_entries,
    )
    from redline.workspace.git import merge_bytes as merge

    assert item.action_id is not None
    paths = [c.path for c in typed]
    at_head = tree_entries(repo, "HEAD", paths)
    shas = [e[1] for c in typed for e in (c.before, c.after) if e] + [
        e[1] for e in at_head.values()
    ]
    blobs = read_blobs(repo, shas)
    wanted: dict[str, bytes | None] = {}
    conflicts: list[str] = []
    for change in typed:
        now = at_head.get(change.path)
        now_bytes = blobs[now[1]] if now else None
        mine = blobs[change.after[1]] if change.after else None
        old = blobs[change.before[1]] if change.before else None
        if now_bytes == mine:
            wanted[change.path] = old
        elif now_bytes is None or mine is None or old is None:
            conflicts.append(change.path)
        else:
            merged = merge(mine, now_bytes, old)
            if merged is None:
                conflicts.append(change.path)
            else:
                wanted[change.path] = merged
    if conflicts:
        later = commits_touching(repo, commit, conflicts)
        raise UndoError(
            f"Cannot undo {item.action_id}: later commits changed the same lines of "
            f"{', '.join(conflicts)}: {', '.join(c[:12] for c in later) or 'HEAD'}. "
            "Nothing was changed."
        )
    receipt = _write_tree(
        root,
        repo,
        item,
        {c.path: blobs[at_head[c.path][1]] if c.path in at_head else None for c in typed},
        wanted,
    )
    index_changes: list[IndexChange] = []
    for path, data in wanted.items():
        before = blobs[at_head[path][1]] if path in at_head else None
        if data is None:
            if before is not None:
                index_changes.append(IndexChange("delete", path))
        elif before is None:
            index_changes.append(IndexChange("create", path, None, data))
        elif before != data:
            index_changes.append(IndexChange("modify", path, before, data))
    outcome = commit_changes(
        repo, index_changes, revert_message(item.action_id, item.label, commit, reviewer_of(root))
    )
    notes: list[str] = []
    if outcome.commit:
        notes.append(
            f"git: reverted {commit[:12]} in commit {outcome.commit[:12]} (only its paths)."
        )
    elif outcome.hook_failed:
        notes.append(
            f"git: the revert commit was refused; the undo is applied and staged: {outcome.hook_failed}"
        )
    undo_note(root, item.action_id, item.label, outcome.commit)
    return GitUndo(receipt, tuple(notes))


def _write_tree(
    root: Path,
    repo: GitRepo,
    item: journal.HistoryItem,
    at_head: dict[str, bytes | None],
    wanted: dict[str, bytes | None],
) -> UndoReceipt:
    """Put ``wanted`` into the working tree: the journal's undo when the files are as the
    apply left them, else safe apply of the reverted text over HEAD's (never over edits
    that are not committed)."""
    from redline.workspace.preview import (
        DecodeError,
        FileChange,
        FileCreate,
        FileDelete,
        FileModify,
        Preview,
        decode_text,
        sha256_bytes,
    )
    from redline.workspace.safe_apply import ApplyError, apply_preview

    assert item.action_id is not None
    try:
        return journal.undo_entry(root, item.entry_id)
    except UndoError:
        pass  # its files changed since (later commits): write the revert instead
    changes: list[FileChange] = []
    dirty: list[str] = []
    for path, data in wanted.items():
        rel = repo.workspace_path(path)
        assert rel is not None
        target = Path(root) / rel
        try:
            disk: bytes | None = target.read_bytes()
        except FileNotFoundError:
            disk = None
        except OSError as exc:
            raise UndoError(
                f"Cannot undo {item.action_id}: {rel}: {exc}. Nothing was changed."
            ) from None
        if disk != at_head.get(path):
            dirty.append(rel)
            continue
        try:
            if data is None and disk is not None:
                text, _enc = decode_text(disk, rel)
                changes.append(FileDelete(rel, sha256_bytes(disk), text))
            elif data is not None and disk is None:
                text, enc = decode_text(data, rel)
                changes.append(FileCreate(rel, text, enc))
            elif data is not None and disk is not None and data != disk:
                old_text, _enc = decode_text(disk, rel)
                new_text, enc = decode_text(data, rel)
                changes.append(FileModify(rel, sha256_bytes(disk), old_text, new_text, enc))
        except DecodeError as exc:
            raise UndoError(f"Cannot undo {item.action_id}: {exc}. Nothing was changed.") from None
    if dirty:
        raise UndoError(
            f"Cannot undo {item.action_id}: {', '.join(dirty)} has changes that are not "
            "committed; commit or set them aside first. Nothing was changed."
        )
    try:
        applied = apply_preview(
            root, Preview(changes), label=f"Undo {item.action_id}: {item.label}"
        )
    except ApplyError as exc:
        raise UndoError(f"Cannot undo {item.action_id}: {exc}") from None
    files = list(applied.files)
    return UndoReceipt(
        entry_id=item.entry_id,
        label=item.label,
        files=files,
        message=f"Undid: {item.label} ({', '.join(files)}), as a revert of its commit.",
        undo_entry_id=applied.entry_id,
        action_id=item.action_id,
    )
