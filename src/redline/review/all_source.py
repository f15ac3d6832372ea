"""The review source over every known workspace: ``redline --all`` (docs/inbox.md).

The dashboard's one screen lists and decides through a
:class:`~redline.review.source.ReviewSource`; this is the third backend beside one
workspace and the team queue. Its rows are every known workspace's pending actions,
newest first, as ``pa-N@WSID`` (:mod:`redline.review.all_workspaces` reads them lazily);
every decision, edit, re-preview and undo goes through the ``ReviewSession`` of the
action's own workspace (another process's action: ``review.decide.decide_queued``, under
the record's claim), so each write lands only in its workspace.

:meth:`AllWorkspacesSource.watch` follows every queue and the known workspaces' folder on
one :class:`~redline.workspace.queue.multiwatch.MultiQueueWatcher` thread: a change in
one workspace re-reads that one, a workspace remembered (or forgotten) meanwhile is
picked up, a folder deleted or moved away is shown missing.

Threads: :meth:`watch` runs on the dashboard's worker thread and hands listings to it;
the watcher's own thread only records which keys changed (``_changes``, under
``_changed``). Decisions run on the dashboard's worker threads, one ``asyncio.run`` each.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from redline.checks.config import ChecksConfig, load_checks
from redline.config import ConfigError
from redline.review.all_workspaces import AllWorkspaces, Listing, RouteError, Space
from redline.review.source import (
    ActionView,
    Capability,
    ListedAction,
    RowsCallback,
    SourceCapabilities,
    SourceOutcome,
    StatusCallback,
    WorkspaceRef,
)

if TYPE_CHECKING:
    from redline.review.session import Decision
    from redline.workspace.queue import WorkspaceQueue

T = TypeVar("T")

#: From this many known workspaces on, the first listing is each workspace's top action.
TOP_FIRST = 8

#: The key the known workspaces' own folder is watched under.
KNOWN_KEY = "\0known"

RULES_REFUSAL = (
    "Session rules belong to one workspace: open redline in that workspace (redline -C "
    "PATH) to add one."
)


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class AllWorkspacesSource:
    """Every known workspace's pending actions, decided in their own workspaces."""

    def __init__(self, spaces: AllWorkspaces | None = None) -> None:
        self.spaces = spaces or AllWorkspaces()
        self._changed = threading.Condition()
        self._changes: set[str] = set()
        self._listing: Listing | None = None
        self._closed = False

    # -- what it is ----------------------------------------------------------------------
    @property
    def title(self) -> str:
        return "every known workspace"

    @property
    def capabilities(self) -> SourceCapabilities:
        # Checks: each action's own workspace's, narrowed per action (``checks_refusal``).
        return SourceCapabilities(rules=Capability.no(RULES_REFUSAL))

    @property
    def spans_workspaces(self) -> bool:
        return True

    # -- listing -------------------------------------------------------------------------
    def listed(self, *, check_files: bool = True) -> Sequence[ListedAction]:
        """Every usable workspace's actions newest first; rows made when first read.
        ``check_files``: rows say stale when their files changed on disk (checked by hash;
        without it only what the records say, for a quick first listing)."""
        if not self.spaces.spaces():
            self.spaces.refresh()
        listing = self.spaces.read(check_files=check_files)
        self._listing = listing
        return listing

    def workspaces(self) -> list[Space]:
        """Every known workspace (missing and conflicting ones too), by path."""
        return self.spaces.spaces()

    def allows(self, action: ListedAction) -> SourceCapabilities:
        caps = self.capabilities
        try:
            space, local = self.spaces.route(action.id)
        except RouteError as exc:
            return _nothing(caps, str(exc))
        record = self.spaces.record(space, local)
        if record is None:
            return _nothing(caps, f"{action.id} is no longer pending")
        from redline.review.workspace_source import record_allows

        allowed = record_allows(record, caps)
        return allowed.narrowed(checks=checks_refusal(Path(space.path), space.describe()))

    def checks_target(self, action_id: str) -> tuple[Path, WorkspaceQueue | None, str]:
        """Where ``action_id``'s checks run: its workspace's folder, queue (their results
        are stored with the action there) and the action's local id. RouteError when the
        id names no usable workspace."""
        space, local = self.spaces.route(action_id)
        return Path(space.path), self.spaces.queue(space), local

    def conversation_target(self, action_id: str) -> tuple[WorkspaceQueue, str] | None:
        """Where ``action_id``'s review conversation (comments, viewed marks) is kept: its
        workspace's queue and the action's local id; None when the id names no usable
        workspace or that workspace has no queue."""
        try:
            space, local = self.spaces.route(action_id)
        except RouteError:
            return None
        queue = self.spaces.queue(space)
        return None if queue is None else (queue, local)

    def view(self, action_id: str) -> ActionView:
        try:
            space, record, preview = self.spaces.preview(action_id)
        except RouteError as exc:
            return ActionView(_placeholder(action_id), error=str(exc))
        except Exception as exc:
            return ActionView(_placeholder(action_id), error=f"{action_id} cannot be read: {exc}")
        listed = self.spaces.listed(space, record.id) or _placeholder(action_id)
        hunks: tuple[str, ...] = ()
        if preview is not None:
            from redline.workspace.hunks import hunk_units

            hunks = tuple(unit.address for unit in hunk_units(preview))
        return ActionView(listed, preview=preview, hunks=hunks)

    # -- deciding ------------------------------------------------------------------------
    def decide(
        self, action_id: str, decision: Decision, view: ActionView | None = None
    ) -> SourceOutcome:
        from dataclasses import replace

        try:
            space, local = self.spaces.route(action_id)
        except RouteError as exc:
            return SourceOutcome(False, str(exc))
        session = self.spaces.session(space)
        batch = decision.batch
        if batch is not None and Path(batch.root).resolve() != Path(space.path).resolve():
            decision = replace(decision, batch=None)  # a commit batch is one workspace's
        if decision.via is None:
            decision = replace(decision, via="dashboard")
        try:
            outcome = _run(session.decide(local, decision))
        except Exception as exc:
            return SourceOutcome(False, f"{action_id} could not be decided: {exc}")
        self._touched(space)
        return SourceOutcome(
            not outcome.is_error,
            _in(space, outcome.text),
            lost=outcome.is_error and self._gone(space, local),
        )

    def gone_text(self, action_id: str) -> str:
        from redline.review.workspace_source import resolution_text

        try:
            space, local = self.spaces.route(action_id)
        except RouteError as exc:
            return str(exc)
        queue = self.spaces.queue(space)
        if queue is None:
            return f"{action_id} is no longer pending."
        return _in(space, resolution_text(queue, local))

    def edit(self, action_id: str, path: str, text: str) -> SourceOutcome:
        try:
            space, local = self.spaces.route(action_id)
        except RouteError as exc:
            return SourceOutcome(False, str(exc))
        try:
            outcome = _run(self.spaces.session(space).edit(local, path, text))
        except Exception as exc:
            return SourceOutcome(False, f"{action_id} could not be edited: {exc}")
        self._touched(space)
        return SourceOutcome(
            outcome.kind in ("edited", "unchanged"),
            _in(space, outcome.text),
            lost=outcome.kind == "gone",
        )

    def repreview(self, action_id: str) -> SourceOutcome:
        try:
            space, local = self.spaces.route(action_id)
        except RouteError as exc:
            return SourceOutcome(False, str(exc))
        try:
            result = _run(self.spaces.session(space).repreview(local))
        except Exception as exc:
            return SourceOutcome(False, f"{action_id} could not be re-previewed: {exc}")
        self._touched(space)
        return SourceOutcome(not result.is_error, _in(space, result.text))

    def undo_target(self, workspace: WorkspaceRef | None = None) -> str:
        """What :meth:`undo` would undo in ``workspace``, in words for the confirmation
        ("" when nothing can be undone there; the refusal is then :meth:`undo`'s)."""
        space = self._space_of(workspace)
        if isinstance(space, str):
            return ""
        from redline.review.undo_words import undo_question

        return undo_question(Path(space.path), space.ref)

    def undo(self, workspace: WorkspaceRef | None = None) -> SourceOutcome:
        space = self._space_of(workspace)
        if isinstance(space, str):
            return SourceOutcome(False, space)
        try:
            result = self.spaces.session(space).undo()
        except Exception as exc:
            return SourceOutcome(False, f"The undo in {space.path} failed: {exc}")
        self._touched(space)
        return SourceOutcome(not result.is_error, _in(space, result.text))

    def _gone(self, space: Space, local: str) -> bool:
        """Whether ``local`` has left its queue (decided elsewhere first)."""
        queue = self.spaces.queue(space)
        try:
            return queue is None or queue.get(local) is None
        except Exception:
            return False

    def _space_of(self, workspace: WorkspaceRef | None) -> Space | str:
        if workspace is None:
            return "Select an action first: u undoes the newest apply in its workspace."
        try:
            return self.spaces.space(workspace.id)
        except RouteError as exc:
            return str(exc)

    # -- following -----------------------------------------------------------------------
    def watch(
        self, stop: threading.Event, on_rows: RowsCallback, on_status: StatusCallback
    ) -> None:
        """Hand a listing to ``on_rows`` now and after every change, until ``stop``."""
        from redline.workspace.known import known_dir
        from redline.workspace.queue.multiwatch import MultiQueueWatcher

        self.spaces.refresh()
        # The watch is set before anything is read: an action queued while the first
        # listings are read is heard (and its workspace read again below), never left
        # unseen until the next change there.
        watcher = MultiQueueWatcher(self._heard)
        try:
            folder = known_dir()
        except OSError:
            folder = None
        watcher.start(self._watched(folder))
        # Workspaces whose queue folder went while the folder itself was still there (a
        # folder being deleted goes from the inside out, and nothing is heard once its queue
        # folder is gone): looked at again on every turn until the folder is gone (shown
        # missing) or its queue is back.
        going: set[str] = set()
        try:
            self._first_listings(stop, on_rows, on_status)
            while not stop.is_set():
                with self._changed:
                    self._changed.wait_for(lambda: bool(self._changes) or stop.is_set(), 0.25)
                    keys, self._changes = self._changes, set()
                if stop.is_set() or self._closed:
                    return
                settled = {k for k in going if not _queue_gone_from_folder(k)}
                going = (going - settled) | {
                    k for k in keys - {KNOWN_KEY} if _queue_gone_from_folder(k)
                }
                keys |= settled
                if not keys:
                    continue
                if KNOWN_KEY in keys or any(not Path(k).is_dir() for k in keys - {KNOWN_KEY}):
                    self.spaces.refresh()
                    watcher.set_paths(self._watched(folder))
                self.spaces.reread(keys - {KNOWN_KEY})
                on_rows(self.listed())
        finally:
            watcher.stop()

    def _first_listings(
        self, stop: threading.Event, on_rows: RowsCallback, on_status: StatusCallback
    ) -> None:
        # Over many workspaces the first frame comes from each one's top action (reading
        # every index is most of a first frame's time at 10,000 actions); then the whole
        # listing at once, the files' staleness a moment later (by hash). Each listing's
        # rows are made here, on the watching thread, not by the screen's UI thread.
        if len(self.spaces.spaces()) >= TOP_FIRST:
            tops = self.spaces.tops()
            if tops and not stop.is_set():
                on_rows(tops)
        quick = self.spaces.read(check_files=False)
        for _row in quick:
            if stop.is_set():
                return
        on_rows(quick)
        on_status(True, "")
        if not stop.is_set():
            checked = quick.checked()
            # Read its rows here, on the watching thread, so the screen (which copies the
            # listing on its UI thread) does not check 10,000 files' staleness itself.
            for _row in checked:
                if stop.is_set():
                    return
            self._listing = checked
            on_rows(checked)

    def _watched(self, folder: Path | None) -> dict[str, Path]:
        paths = {
            space.path: space.queue_folder for space in self.spaces.spaces() if not space.missing
        }
        if folder is not None:
            paths[KNOWN_KEY] = folder
        return paths

    def _heard(self, keys: frozenset[str]) -> None:
        with self._changed:
            self._changes |= keys
            self._changed.notify_all()

    def _touched(self, space: Space) -> None:
        """A decision changed ``space``: its rows are read again (the watcher says so
        too, a moment later)."""
        self.spaces.reread({space.path})
        self._heard(frozenset({space.path}))

    def close(self) -> None:
        self._closed = True
        with self._changed:
            self._changed.notify_all()
        self.spaces.close()


def checks_refusal(root: Path, label: str, config: ChecksConfig | None = None) -> str:
    """Why no check can run on an action of the workspace at ``root`` ("" when some can):
    none configured, or only ones the workspace declares while it is not trusted (the
    trust rules of ``checks.config.load_checks``, as in that workspace's own dashboard)."""
    if config is None:
        try:
            config = load_checks(root)
        except ConfigError as exc:
            return f"The checks of workspace {label} cannot be read: {exc}"
    if config.checks:
        return ""
    if config.skipped:
        names = ", ".join(s.name for s in config.skipped)
        return (
            f"Workspace {label} is not trusted: the checks it declares ({names}) do not run "
            "(`redline trust` in it allows them)."
        )
    return (
        f"No checks are configured for workspace {label}: add [[checks]] to its "
        ".redline/config.toml (docs/checks.md)."
    )


def _queue_gone_from_folder(path: str) -> bool:
    """The workspace folder at ``path`` is there but its queue folder is not."""
    return os.path.isdir(path) and not os.path.isdir(os.path.join(path, ".redline", "queue"))


def _in(space: Space, text: str) -> str:
    """``text`` said of ``space`` (every outcome names the workspace it happened in)."""
    return f"{text}\n(in {space.path}, workspace {space.id})"


def _placeholder(action_id: str) -> ListedAction:
    local = action_id.partition("@")[0]
    return ListedAction(id=action_id, label=action_id, source="", local_id=local)


def _nothing(caps: SourceCapabilities, reason: str) -> SourceCapabilities:
    return caps.narrowed(
        whole=reason, parts=reason, edit=reason, repreview=reason, checks=reason, marks=reason
    )


__all__ = [
    "KNOWN_KEY",
    "RULES_REFUSAL",
    "AllWorkspacesSource",
    "checks_refusal",
]
