"""Taking an action's changes back in git: a revert commit on HEAD, and the working tree.

Shared by :mod:`redline.review.git_undo` (a commit of one action) and
:mod:`redline.review.git_undo_batch` (one action of a commit that holds several).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from redline.workspace import journal
from redline.workspace.journal import UndoError, UndoReceipt

if TYPE_CHECKING:
    from redline.workspace.git import GitRepo


@dataclass(frozen=True)
class GitUndo:
    """A journal undo, and what was done in git (``notes``: lines to show)."""

    receipt: UndoReceipt
    notes: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        return "\n".join([self.receipt.message, *self.notes])


def revert_parts(
    root: Path,
    repo: GitRepo,
    item: journal.HistoryItem,
    commit: str,
    parts: dict[str, tuple[bytes | None, bytes | None]],
    *,
    shared: bool = False,
) -> GitUndo:
    """A revert commit taking each path of ``parts`` (repository path: the text the undo
    wants, the text ``commit`` left) back on top of HEAD; ``shared``: the commit holds
    other actions' changes too, and only this action's are taken back."""
    from redline.review.provenance import revert_message, reviewer_of, undo_note, workspace_id_of
    from redline.workspace.git import (
        IndexChange,
        commit_changes,
        commits_touching,
        read_blobs,
        tree_entries,
    )
    from redline.workspace.git import merge_bytes as merge

    assert item.action_id is not None
    paths = list(parts)
    at_head = tree_entries(repo, "HEAD", paths)
    blobs = read_blobs(repo, [e[1] for e in at_head.values()])
    wanted: dict[str, bytes | None] = {}
    conflicts: list[str] = []
    for path, (old, mine) in parts.items():
        now = at_head.get(path)
        now_bytes = blobs[now[1]] if now else None
        if now_bytes == mine:
            wanted[path] = old
        elif now_bytes is None or mine is None or old is None:
            conflicts.append(path)
        else:
            merged = merge(mine, now_bytes, old)
            if merged is None:
                conflicts.append(path)
            else:
                wanted[path] = merged
    if conflicts:
        later = commits_touching(repo, commit, conflicts)
        raise UndoError(
            f"Cannot undo {item.action_id}: later commits changed the same lines of "
            f"{', '.join(conflicts)}: {', '.join(c[:12] for c in later) or 'HEAD'}. "
            "Nothing was changed."
        )
    receipt = write_tree(
        root,
        repo,
        item,
        {p: blobs[at_head[p][1]] if p in at_head else None for p in paths},
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
    message = revert_message(
        item.action_id,
        item.label,
        commit,
        reviewer_of(root),
        shared=shared,
        workspace=workspace_id_of(root),
    )
    outcome = commit_changes(repo, index_changes, message)
    notes: list[str] = []
    if outcome.commit:
        what = f"{item.action_id}'s changes" if shared else "only its paths"
        notes.append(f"git: reverted {commit[:12]} in commit {outcome.commit[:12]} ({what}).")
    elif outcome.hook_failed:
        notes.append(
            f"git: the revert commit was refused; the undo is applied and staged: {outcome.hook_failed}"
        )
    undo_note(root, item.action_id, item.label, outcome.commit)
    return GitUndo(receipt, tuple(notes))


def write_tree(
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
            root,
            Preview(changes),
            label=item.label,
            action_id=item.action_id,
            undoes=item.entry_id,
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


__all__ = ["GitUndo", "revert_parts", "write_tree"]
