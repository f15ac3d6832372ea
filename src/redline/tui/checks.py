"""The dashboard's side of checks: background runs, the stack's badges, the pane.

:class:`DashboardChecks` is kept by the inbox screen. Each stack refresh hands it the
listed actions (new ones get their ``when = "propose"`` checks started, resolved ones are
cancelled); run threads post :class:`~redline.tui.widgets.checks_pane.ChecksPane.Changed`
to the pane, which asks this object to redraw the badges and the shown action's results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from redline.checks import CheckResult, findings_text, summary
from redline.checks.background import BackgroundChecks
from redline.checks.results import AGE_UNKNOWN, out_of_date
from redline.checks.sandbox import first_notice, is_unavailable
from redline.review.store import PendingAction
from redline.tui.diff_model import FULL_CONTEXT
from redline.tui.pending import ListingChange, session_queue
from redline.tui.widgets.checks_pane import ChecksPane, badge
from redline.workspace.preview import Preview


class DashboardChecks:
    def __init__(self, inbox: Any) -> None:
        # The inbox screen (typed loosely: tui.screens imports this module).
        self.inbox = inbox
        self.pane = ChecksPane(id="checks-pane")
        self.pane.display = False
        self.runner = BackgroundChecks(
            inbox.session.cwd, session_queue(inbox.session), self._changed
        )
        self._listed: Sequence[PendingAction] = ()  # what sync() was last given
        # Every id given to the runner: it has seen them (nothing here makes it forget one),
        # so their Previews are never asked for again.
        self._given: set[str] = set()
        self._noticed = False

    def _changed(self, action_id: str) -> None:
        # A run's thread: hand over to Textual's.
        self.pane.post_message(ChecksPane.Changed(action_id))

    def sync(self, actions: Sequence[PendingAction], change: ListingChange | None = None) -> None:
        """Start the checks of actions new to the runner, cancel those of actions gone.
        ``change``: how ``actions`` differ from the actions last given (then only the ones
        gone are looked at: nothing arrived, a replaced action keeps its id)."""
        last, self._listed = self._listed, actions
        if change is not None and change.before is last:
            for action_id in change.gone:
                self.runner.cancel(action_id)
            self.redraw()
            return
        given = self._given
        # A Preview is read only if checks will run on it (see ``BackgroundChecks.sync``),
        # and only for an action new to the runner (no reader made again for the 10,000 a
        # long queue lists after each decision).
        self.runner.sync((a.id, None if a.id in given else _preview_of(a)) for a in actions)
        given.update(a.id for a in actions)
        self.redraw()

    def redraw(self) -> None:
        if not self.runner.configured:
            self.pane.display = False
            return
        results = {a.id: self.runner.results(a.id) for a in self._listed}
        self.inbox.stack.set_check_badges({i: badge(r) for i, r in results.items()})
        self.show(self.inbox.selected_action())
        self._sandbox_notice(results.values())

    def _sandbox_notice(self, listed: Iterable[Sequence[CheckResult]]) -> None:
        """Once (for this user, ever): checks stopped because no sandbox can be made."""
        if self._noticed:
            return
        why = next(
            (r.why for results in listed for r in results if is_unavailable(r.why)),
            "",
        )
        if not why:
            return
        self._noticed = True
        if first_notice("sandbox-unavailable"):
            self.inbox.notify(
                f"Checks did not run: {why}. `redline sandbox` shows what a check may touch "
                "(docs/checks.md).",
                title="Checks need a sandbox",
                severity="warning",
                timeout=30,
                markup=False,  # the cause names [check_runner]
            )

    def show(self, action: PendingAction | None) -> None:
        if not self.runner.configured or action is None or action.preview is None:
            self.pane.display = False
            return
        self.pane.display = True
        results = self.runner.results(action.id)
        config = self.runner.config
        notes = [self.runner.config_error] if self.runner.config_error else []
        if not notes and config is not None and config.notes:
            notes.append(" ".join(config.notes))
        if config is not None and not self.runner.running(action.id):
            # The configuration only: hashing the workspace is too slow for a redraw.
            for name, why in out_of_date(config, results, None).items():
                state = why if why == AGE_UNKNOWN else f"out of date ({why})"
                notes.append(f"{name} {state}: c runs it again")
        self.pane.show(results, "; ".join(notes))

    def run_selected(self) -> bool:
        """Run every check (``demand`` ones too) on the shown action again."""
        action = self.inbox.selected_action()
        if action is None or action.preview is None:
            return False
        started = self.runner.start(action.id, action.preview)
        self.redraw()
        return started

    def discard_reason(self, action: PendingAction | None) -> str:
        """The findings as a discard reason: a summary line, then one line per finding."""
        if action is None:
            return ""
        results = self.runner.results(action.id)
        if not any(r.new or r.status in ("timeout", "error") for r in results):
            return ""
        return f"{summary(results)}\n{findings_text(results)}"

    def jump(self, path: str, line: int | None, new_side: bool) -> None:
        """Show ``path`` in the diff, at ``line`` when the diff has it."""
        preview = self.inbox.preview
        action = preview.action
        if action is None or action.preview is None:
            return
        paths = [c.path for c in action.preview.changes]
        if path not in paths:
            self.inbox.notify(f"{path} is not part of this change; the finding is elsewhere.")
            return
        preview.step_file(paths.index(path) - preview.file_index)
        if line is None or preview.split:
            return
        view = preview.diff_view
        for attempt in range(2):
            for index, row in enumerate(view._rows):
                if (row.new_no if new_side else row.old_no) == line:
                    view.show_search_hit(index)
                    return
            if attempt == 0 and preview.context != FULL_CONTEXT and not preview.split:
                preview.context = FULL_CONTEXT
                preview._show_file()

    def refusal(self, action_id: str | None) -> str:
        """Why no check can run on ``action_id`` ("" here: the session's keys say why)."""
        return ""

    def close(self) -> None:
        self.runner.close()


def _preview_of(action: PendingAction) -> Callable[[], Preview | None]:
    return lambda: action.preview
