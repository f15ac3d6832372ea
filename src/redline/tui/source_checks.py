"""Checks over every known workspace (``redline --all``): the selected action's only.

:class:`SelectedChecks` takes :class:`~redline.tui.checks.DashboardChecks`'s place on the
inbox over :class:`~redline.review.all_source.AllWorkspacesSource`. Nothing runs when the
dashboard opens (not on the top it selects either): once the person has moved the
selection (or pressed ``c``), each time it has rested on an action for :data:`SETTLE` seconds,
the ``when = "propose"`` checks of THAT action's workspace (its ``[[checks]]``, under the
trust rules of ``checks.config.load_checks``, as its own dashboard runs them) start on a
:class:`~redline.checks.background.BackgroundChecks` thread of that workspace; their
results are stored with the action in its queue (``redline pending check`` and the
workspace's dashboard see them). Moving the selection cancels the previous action's run
(its processes are killed, its partial results removed); ``c`` runs every check of the
selected action again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.checks.background import BackgroundChecks
from redline.checks.results import AGE_UNKNOWN, out_of_date
from redline.review.all_source import checks_refusal
from redline.review.all_workspaces import RouteError
from redline.tui.checks import DashboardChecks
from redline.tui.pending import ListingChange
from redline.tui.widgets.checks_pane import ChecksPane, badge

if TYPE_CHECKING:
    from collections.abc import Sequence

    from textual.timer import Timer

    from redline.review.all_source import AllWorkspacesSource
    from redline.review.store import PendingAction
    from redline.workspace.queue import WorkspaceQueue

#: How long (seconds) the selection rests on an action before its checks start: stepping
#: through the list starts no run per row passed.
SETTLE = 0.3


class SelectedChecks(DashboardChecks):
    """The selected action's checks, in its own workspace (see the module's doc)."""

    def __init__(self, inbox: Any, source: AllWorkspacesSource) -> None:
        # Not DashboardChecks.__init__: there is no session's workspace to run in.
        self.inbox = inbox
        self.source = source
        self.pane = ChecksPane(id="checks-pane")
        self.pane.display = False
        self._noticed = False
        self._runners: dict[Path, BackgroundChecks] = {}
        self._refusals: dict[Path, str] = {}
        # The settled action: (pa-N@WSID, its workspace's runner, its local id).
        self._target: tuple[str, BackgroundChecks, str] | None = None
        self._pending: str | None = None  # selected, not yet settled
        self._timer: Timer | None = None
        self._closed = False
        # Nothing runs on the top the dashboard opens on: only once the person has moved
        # the selection (or pressed c), every action the selection rests on.
        self._armed = False

    # -- where an action's checks run ------------------------------------------------------
    def _where(self, action_id: str) -> tuple[BackgroundChecks, str] | None:
        try:
            root, queue, local = self.source.checks_target(action_id)
        except RouteError:
            return None
        return self._runner(root, queue), local

    def _runner(self, root: Path, queue: WorkspaceQueue | None) -> BackgroundChecks:
        runner = self._runners.get(root)
        if runner is None:
            # ``trusted`` None: the workspace's trust decides, as in its own dashboard.
            runner = self._runners[root] = BackgroundChecks(root, queue, self._changed)
        return runner

    def refusal(self, action_id: str | None) -> str:
        """Why no check can run on ``action_id`` ("" when some can, or nothing is selected).
        Read once per workspace (the keys ask on every redraw); ``c`` reads it again."""
        if action_id is None:
            return ""
        try:
            root, _queue, _local = self.source.checks_target(action_id)
        except RouteError as exc:
            return str(exc)
        found = self._refusals.get(root)
        if found is None:
            wsid = action_id.partition("@")[2]
            found = self._refusals[root] = checks_refusal(root, f"{wsid} ({root})")
        return found

    # -- the selection -----------------------------------------------------------------------
    def sync(self, actions: Sequence[PendingAction], change: ListingChange | None = None) -> None:
        """A fresh listing: the settled action's run is cancelled when it left the list."""
        target = self._target
        if target is not None and all(a.id != target[0] for a in actions):
            self._drop()
        self.redraw()

    def show(self, action: PendingAction | None) -> None:
        """The selection is ``action`` now: show its results; its checks start once the
        selection rests on it (another action's run is cancelled at once)."""
        action_id = action.id if action is not None and action.preview is not None else None
        target = self._target
        if target is not None and target[0] != action_id:
            self._drop()
        if not self.inbox.stack.follows_top:
            self._armed = True  # the person picked an action
        if (
            self._armed
            and action_id is not None
            and self._target is None
            and self._pending != action_id
        ):
            self._pending = action_id
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.inbox.set_timer(SETTLE, self._settled)
        elif action_id is None:
            self._pending = None
        self._draw(action)

    def _settled(self) -> None:
        self._timer = None
        if self._closed:
            return
        action = self.inbox.selected_action()
        if action is None or action.id != self._pending or action.preview is None:
            return  # moved on meanwhile: that selection has its own timer
        self._pending = None
        where = self._where(action.id)
        if where is None:
            return
        runner, local = where
        self._target = (action.id, runner, local)
        if not self.refusal(action.id):
            # As a new action in its workspace's dashboard: not again when results are stored.
            runner.sync([(local, action.preview)])
        self._draw(action)

    def _drop(self) -> None:
        """Cancel the settled action's run (its processes are killed)."""
        target = self._target
        self._target = None
        if target is not None:
            # Its checks start again if the selection comes back to it.
            target[1].cancel(target[2])

    def _changed(self, action_id: str) -> None:
        self.pane.post_message(ChecksPane.Changed(action_id))

    # -- drawing ----------------------------------------------------------------------------
    def redraw(self) -> None:
        self._draw(self.inbox.selected_action())

    def _draw(self, action: PendingAction | None) -> None:
        target = self._target
        if target is None or action is None or target[0] != action.id:
            self.pane.display = False
            if self.inbox.stack.check_badges:
                self.inbox.stack.set_check_badges({})
            return
        action_id, runner, local = target
        if not runner.configured:
            self.pane.display = False
            return
        results = runner.results(local)
        self.inbox.stack.set_check_badges({action_id: badge(results)})
        self.pane.display = True
        config = runner.config
        notes = [runner.config_error] if runner.config_error else []
        if not notes and config is not None and config.notes:
            notes.append(" ".join(config.notes))
        if config is not None and not runner.running(local):
            for name, why in out_of_date(config, results, None).items():
                state = why if why == AGE_UNKNOWN else f"out of date ({why})"
                notes.append(f"{name} {state}: c runs it again")
        self.pane.show(results, "; ".join(notes))
        self._sandbox_notice([results])

    # -- keys -------------------------------------------------------------------------------
    def run_selected(self) -> bool:
        """``c``: every check (``demand`` ones too) of the selected action, now."""
        action = self.inbox.selected_action()
        if action is None or action.preview is None:
            return False
        where = self._where(action.id)
        if where is None:
            return False
        runner, local = where
        try:
            root, _queue, _local = self.source.checks_target(action.id)
        except RouteError:
            return False
        self._refusals.pop(root, None)
        if self.refusal(action.id):
            return False
        target = self._target
        if target is not None and target[0] != action.id:
            self._drop()
        self._pending = None
        self._armed = True
        self._target = (action.id, runner, local)
        started = runner.start(local, action.preview)
        self._draw(action)
        return started

    def discard_reason(self, action: PendingAction | None) -> str:
        target = self._target
        if action is None or target is None or target[0] != action.id:
            return ""
        from redline.checks import findings_text, summary

        results = target[1].results(target[2])
        if not any(r.new or r.status in ("timeout", "error") for r in results):
            return ""
        return f"{summary(results)}\n{findings_text(results)}"

    def running(self) -> str | None:
        """The id of the action whose checks run now (None when none do)."""
        target = self._target
        return target[0] if target is not None and target[1].running(target[2]) else None

    def close(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.stop()
        for runner in self._runners.values():
            runner.close()


__all__ = ["SETTLE", "SelectedChecks"]
