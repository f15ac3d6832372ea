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

A commit that holds other actions too (``--batch``, marked applies) keeps them:
:mod:`redline.review.git_undo_batch` takes only this action's changes out.

An apply without a commit (or outside git) is undone by the journal alone, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from redline.review.git_revert import GitUndo, revert_parts, write_tree
from redline.workspace import journal
from redline.workspace.journal import UndoError

if TYPE_CHECKING:
    from redline.workspace.decisions import DecisionRecord
    from redline.workspace.git import GitRepo, TreeChange


def _target(root: Path, entry_id: str | None) -> journal.HistoryItem | None:
    items = journal.undo_history(root)
    if entry_id is None:
        return items[0] if items else None
    return next((item for item in items if item.entry_id == entry_id), None)


def undo(root: Path, entry_id: str | None) -> GitUndo:
    """Undo the apply ``entry_id`` (None: the newest) and its commit; UndoError if not.
    A hook's agent that had stopped waiting for the action hears of it (review/late.py)."""
    done = _undo(root, entry_id)
    receipt = done.receipt
    if receipt.action_id:
        from redline.review.late import undone

        undone(root, receipt.action_id, receipt.label, list(receipt.files))
    return done


def _undo(root: Path, entry_id: str | None) -> GitUndo:
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


def _mates(root: Path, action_id: str, commit: str) -> list[DecisionRecord]:
    """The other actions that live in ``commit`` (a batch or marked-apply commit)."""
    from redline.workspace.decisions import DecisionsError, living_in

    try:
        return [r for r in living_in(root, commit) if r.id != action_id]
    except DecisionsError:
        return []


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
    mates = _mates(root, item.action_id, commit)
    if mates:
        from redline.review.git_undo_batch import undo_one_of

        return undo_one_of(root, repo, item, commit, mates)
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
        # The journal's undo; or, when an undo of another action of the same commit wrote
        # its files since, the parent's text over the committed one.
        parts = _parts(repo, changes)
        receipt = write_tree(
            root,
            repo,
            item,
            {path: committed for path, (_old, committed) in parts.items()},
            {path: old for path, (old, _committed) in parts.items()},
        )
        move_head(repo, parent, commit, f"redline undo {item.action_id}")
        set_index_entries(repo, {c.path: c.before for c in changes})
        undo_note(root, item.action_id, item.label, None)
        return GitUndo(receipt, (f"git: removed commit {commit[:12]} (HEAD is {parent[:12]}).",))
    return _revert(root, repo, item, commit, changes)


def _parts(repo: GitRepo, typed: list[TreeChange]) -> dict[str, tuple[bytes | None, bytes | None]]:
    """Each path's text before and after the commit (None: absent)."""
    from redline.workspace.git import read_blobs

    blobs = read_blobs(repo, [e[1] for c in typed for e in (c.before, c.after) if e])
    return {
        c.path: (
            blobs[c.before[1]] if c.before else None,
            blobs[c.after[1]] if c.after else None,
        )
        for c in typed
    }


def _revert(
    root: Path, repo: GitRepo, item: journal.HistoryItem, commit: str, typed: list[TreeChange]
) -> GitUndo:
    return revert_parts(root, repo, item, commit, _parts(repo, typed))


__all__ = ["GitUndo", "undo"]
