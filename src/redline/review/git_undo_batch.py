"""Undo of one action of a commit that holds several (``--batch``, marked applies).

The other actions of the commit stay committed; only the undone action's *changes* go:

* a path only this action changed goes back to the commit's parent;
* a path another action of the commit changed too keeps that action's hunks: this
  action's own change (from the journal) is taken out of the committed text, and when the
  two overlap the undo is refused, naming both.

While the commit is HEAD, nothing has been staged over this action's paths and no
remote-tracking branch contains it, the commit is rewritten without the action (same
parent, author and the other actions' trailers) and HEAD moves to the new commit;
otherwise a revert commit of this action's changes only is made. The decisions log then
says where every other action of the commit lives (a ``committed`` line), so a later undo
of one of them finds its new commit.
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


def _disk(root: Path, rel: str) -> bytes | None:
    try:
        return (Path(root) / rel).read_bytes()
    except OSError:
        return None


def _without_own(
    root: Path,
    item: journal.HistoryItem,
    commit: str,
    rel: str,
    committed: bytes | None,
    sharers: list[str],
) -> bytes | None:
    """``rel``'s committed text with ``item``'s own change taken out (UndoError if the
    journal cannot tell it apart or it overlaps another action's change)."""
    from redline.workspace.git import merge_bytes
    from redline.workspace.journal_states import own_change

    assert item.action_id is not None
    both = f"{item.action_id} and {', '.join(sharers)}"
    found = own_change(root, item.entry_id, rel, (committed, _disk(root, rel)))
    if found is None:
        raise UndoError(
            f"Cannot undo {item.action_id}: {both} changed {rel} in commit {commit[:12]}, "
            f"and the journal no longer holds {item.action_id}'s own change of it. "
            "Nothing was changed."
        )
    before, after = found
    if after == committed:
        return before  # the action's change was the last one made to the file
    if before is not None and after is not None and committed is not None:
        merged = merge_bytes(after, committed, before)
        if merged is not None:
            return merged
    raise UndoError(
        f"Cannot undo {item.action_id}: {both} changed the same lines of {rel} in commit "
        f"{commit[:12]}. Nothing was changed."
    )


def undo_one_of(
    root: Path,
    repo: GitRepo,
    item: journal.HistoryItem,
    commit: str,
    mates: list[DecisionRecord],
) -> GitUndo:
    """Undo ``item``'s action, one of the actions of ``commit`` (``mates``: the others)."""
    from redline.review.provenance import undo_note
    from redline.workspace.git import (
        commit_changes_of,
        head,
        index_entries,
        on_remote_branch,
        parent_of,
        read_blobs,
    )

    assert item.action_id is not None
    changes = {c.path: c for c in commit_changes_of(repo, commit)}
    own = [p for p in dict.fromkeys(repo.path(f) for f in item.files) if p in changes]
    if not own:
        receipt = journal.undo_entry(root, item.entry_id)
        undo_note(root, item.action_id, item.label, None)
        return GitUndo(
            receipt,
            (
                f"git: commit {commit[:12]} holds no change of {item.action_id}; nothing was done in git.",
            ),
        )
    blobs = read_blobs(
        repo, [e[1] for p in own for e in (changes[p].before, changes[p].after) if e]
    )
    # path -> (the text the undo leaves in the commit, the text the commit has)
    parts: dict[str, tuple[bytes | None, bytes | None]] = {}
    shared: set[str] = set()
    for path in own:
        change = changes[path]
        old = blobs[change.before[1]] if change.before else None
        new = blobs[change.after[1]] if change.after else None
        sharers = [m.id for m in mates if not m.files or path in {repo.path(f) for f in m.files}]
        if not sharers:
            parts[path] = (old, new)
            continue
        rel = repo.workspace_path(path)
        assert rel is not None
        shared.add(path)
        parts[path] = (_without_own(root, item, commit, rel, new, sharers), new)
    untouched = all(index_entries(repo, own).get(p) == changes[p].after for p in own)
    parent = parent_of(repo, commit)
    if (
        head(repo) == commit
        and parent is not None
        and untouched
        and not on_remote_branch(repo, commit)
    ):
        return _rewrite(root, repo, item, commit, parts, changes, shared, mates)
    return revert_parts(root, repo, item, commit, parts, shared=True)


def _rewrite(
    root: Path,
    repo: GitRepo,
    item: journal.HistoryItem,
    commit: str,
    parts: dict[str, tuple[bytes | None, bytes | None]],
    changes: dict[str, TreeChange],
    shared: set[str],
    mates: list[DecisionRecord],
) -> GitUndo:
    from redline.review.provenance import moved_note, undo_note
    from redline.workspace.git import move_head, rewrite_commit, set_index_entries, write_blob

    assert item.action_id is not None
    entries: dict[str, tuple[str, str] | None] = {}
    for path, (left, _committed) in parts.items():
        change = changes[path]
        if path not in shared:
            entries[path] = change.before
        elif left is None:
            entries[path] = None
        else:
            mode = (change.after or change.before or ("100644", ""))[0]
            entries[path] = (mode, write_blob(repo, left))
    made = rewrite_commit(repo, commit, entries, _message(repo, commit, mates))
    receipt = write_tree(
        root,
        repo,
        item,
        {path: committed for path, (_left, committed) in parts.items()},
        {path: left for path, (left, _committed) in parts.items()},
    )
    move_head(repo, made, commit, f"redline undo {item.action_id}")
    set_index_entries(repo, entries)
    undo_note(root, item.action_id, item.label, None)
    for mate in mates:
        moved_note(root, mate, made)
    stay = ", ".join(m.id for m in mates)
    return GitUndo(
        receipt,
        (
            f"git: rewrote commit {commit[:12]} without {item.action_id} as {made[:12]} "
            f"({stay} {'stays' if len(mates) == 1 else 'stay'} committed).",
        ),
    )


def _message(repo: GitRepo, commit: str, mates: list[DecisionRecord]) -> str:
    """The rewritten commit's message: the other actions' subject, body and trailers, and
    the old message's reviewer, workspace, co-authors, helpers and sign-off."""
    from redline.review.provenance import Decided, commit_message
    from redline.workspace.git import message_of

    old = message_of(repo, commit).splitlines()
    reviewer = next(
        (line.split(":", 1)[1].strip() for line in old if line.startswith("Redline-Reviewer:")),
        "",
    )

    def values(key: str) -> tuple[str, ...]:
        return tuple(line.split(":", 1)[1].strip() for line in old if line.startswith(key))

    co_authors = values("Co-authored-by:")
    helpers = values("Assisted-by:")
    workspace = next(iter(values("Redline-Workspace:")), "")
    signoff = next(iter(values("Signed-off-by:")), "")
    items = [
        Decided(
            action_id=m.id,
            label=m.label,
            source=m.source,
            decision="apply",
            reason=m.reason,
            edited=m.edited,
            resolved_by=m.resolved_by or "person",
            co_authors=co_authors if at == 0 else (),
            rule=m.rule,
            imported_assisted=helpers if at == 0 else (),
        )
        for at, m in enumerate(mates)
    ]
    return commit_message(items, reviewer, workspace=workspace, signoff=signoff)


__all__ = ["undo_one_of"]
